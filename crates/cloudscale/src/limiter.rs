//! How many requests the client has in flight: at most the configured
//! `max-concurrent-requests`, fewer after the API answered 429. The limit is adjusted as TCP
//! adjusts its window (AIMD): halved on a 429, grown back by one after as many successes as
//! the limit allows at once, so a throttled client slows down instead of failing and speeds up
//! again once the API keeps up. One limiter per client: refresh's reads and apply's calls
//! share it.

use std::sync::{Mutex, MutexGuard};

use tokio::sync::{Semaphore, SemaphorePermit};

#[derive(Debug)]
pub struct Limiter {
    semaphore: Semaphore,
    max: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Requests allowed in flight now.
    limit: usize,
    /// Permits that exist, free or held: above `limit` after a decrease, until enough held
    /// ones come back to be retired.
    permits: usize,
    /// Successes since the limit last changed.
    successes: usize,
    /// Counts decreases, so that the 429s of requests sent before one cause no further halving:
    /// a burst of them is one signal.
    epoch: u64,
}

/// The right to send one request; returned to the limiter when dropped.
#[derive(Debug)]
pub struct Permit<'a> {
    limiter: &'a Limiter,
    permit: Option<SemaphorePermit<'a>>,
    epoch: u64,
}

impl Limiter {
    pub fn new(max: usize) -> Limiter {
        let max = max.max(1);
        Limiter {
            semaphore: Semaphore::new(max),
            max,
            state: Mutex::new(State {
                limit: max,
                permits: max,
                successes: 0,
                epoch: 0,
            }),
        }
    }

    /// The configured maximum.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Requests allowed in flight now.
    pub fn limit(&self) -> usize {
        self.state().limit
    }

    pub async fn acquire(&self) -> Permit<'_> {
        let permit = self
            .semaphore
            .acquire()
            .await
            .expect("the limiter's semaphore is never closed");
        Permit {
            limiter: self,
            permit: Some(permit),
            epoch: self.state().epoch,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn succeeded(&self) {
        let mut state = self.state();
        state.successes += 1;
        if state.successes >= state.limit && state.limit < self.max {
            state.limit += 1;
            state.successes = 0;
            if state.permits < state.limit {
                state.permits += 1;
                self.semaphore.add_permits(1);
            }
        }
    }

    fn throttled(&self, epoch: u64) {
        let mut state = self.state();
        if epoch != state.epoch {
            return;
        }
        state.epoch += 1;
        state.limit = (state.limit / 2).max(1);
        state.successes = 0;
        let surplus = state.permits - state.limit;
        state.permits -= self.semaphore.forget_permits(surplus);
    }

    /// A held permit comes back: retired instead when there are more than the limit.
    fn release(&self, permit: SemaphorePermit<'_>) {
        let mut state = self.state();
        if state.permits > state.limit {
            state.permits -= 1;
            permit.forget();
        }
    }
}

impl Permit<'_> {
    /// The request was answered (any status but 429): counts towards growing the limit.
    pub fn succeeded(self) {
        self.limiter.succeeded();
    }

    /// The request was answered 429: halves the limit, once per burst.
    pub fn throttled(self) {
        self.limiter.throttled(self.epoch);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let Some(permit) = self.permit.take() {
            self.limiter.release(permit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn at_most_max_permits_are_held() {
        let limiter = Limiter::new(2);
        let first = limiter.acquire().await;
        let _second = limiter.acquire().await;
        let third = tokio::time::timeout(std::time::Duration::from_millis(20), limiter.acquire());
        assert!(third.await.is_err(), "a third permit was handed out");
        first.succeeded();
        let _third = limiter.acquire().await;
    }

    #[tokio::test]
    async fn a_burst_of_429s_halves_the_limit_once() {
        let limiter = Limiter::new(16);
        let mut permits = Vec::new();
        for _ in 0..8 {
            permits.push(limiter.acquire().await);
        }
        for permit in permits {
            permit.throttled();
        }
        assert_eq!(limiter.limit(), 8);
        let next = limiter.acquire().await;
        next.throttled();
        assert_eq!(limiter.limit(), 4);
    }

    #[tokio::test]
    async fn the_limit_is_enforced_after_a_decrease_and_grows_back_by_one_per_window() {
        let limiter = Limiter::new(4);
        limiter.acquire().await.throttled();
        assert_eq!(limiter.limit(), 2);
        let held = [limiter.acquire().await, limiter.acquire().await];
        let third = tokio::time::timeout(std::time::Duration::from_millis(20), limiter.acquire());
        assert!(
            third.await.is_err(),
            "more than the decreased limit in flight"
        );
        for permit in held {
            permit.succeeded();
        }
        assert_eq!(limiter.limit(), 3);
        let held = [
            limiter.acquire().await,
            limiter.acquire().await,
            limiter.acquire().await,
        ];
        for permit in held {
            permit.succeeded();
        }
        assert_eq!(limiter.limit(), 4);
        limiter.acquire().await.succeeded();
        assert_eq!(limiter.limit(), 4, "never above the maximum");
    }

    #[tokio::test]
    async fn permits_held_during_a_decrease_are_retired_when_they_come_back() {
        let limiter = Limiter::new(4);
        let mut permits = Vec::new();
        for _ in 0..4 {
            permits.push(limiter.acquire().await);
        }
        let throttled = permits.pop().unwrap();
        throttled.throttled();
        drop(permits);
        let a = limiter.acquire().await;
        let _b = limiter.acquire().await;
        let third = tokio::time::timeout(std::time::Duration::from_millis(20), limiter.acquire());
        assert!(third.await.is_err(), "retired permits came back");
        drop(a);
    }
}
