//! Waiting between attempts of a write that met a 409 Conflict: another writer changed the
//! object between skyplan's read and its write. Retrying at once loses again to a busy writer
//! (a controller reconciling, a second operator); the wait starts near 50 ms, doubles, is
//! jittered so two retrying writers drift apart, and is bounded in total time, so a busy
//! writer delays skyplan but does not fail it — and a writer that never stops still ends it.

use std::time::Duration;

use tokio::time::Instant;

/// The first wait.
const FIRST: Duration = Duration::from_millis(50);
/// No single wait is longer.
const LONGEST: Duration = Duration::from_secs(1);
/// The attempts of one write stop once this much time has passed since the first.
pub const BUDGET: Duration = Duration::from_secs(30);

pub struct Backoff {
    next: Duration,
    started: Instant,
    budget: Duration,
    attempts: u32,
}

/// The budget ran out: `attempts` writes over `spent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted {
    pub attempts: u32,
    pub spent: Duration,
}

impl std::fmt::Display for Exhausted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} attempts over {:.1} s",
            self.attempts,
            self.spent.as_secs_f64()
        )
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::within(BUDGET)
    }
}

impl Backoff {
    /// A backoff whose attempts end after `budget`.
    pub fn within(budget: Duration) -> Backoff {
        Backoff {
            next: FIRST,
            started: Instant::now(),
            budget,
            attempts: 0,
        }
    }

    /// Counts a conflicted attempt and waits before the next one; `Err` when the next one
    /// would start after the budget.
    pub async fn conflicted(&mut self) -> Result<(), Exhausted> {
        self.attempts += 1;
        let wait = jittered(self.next);
        let spent = self.started.elapsed();
        if spent + wait > self.budget {
            return Err(Exhausted {
                attempts: self.attempts,
                spent,
            });
        }
        tracing::debug!(
            attempt = self.attempts,
            wait_ms = wait.as_millis() as u64,
            "409 Conflict: waiting before the next attempt"
        );
        tokio::time::sleep(wait).await;
        self.next = (self.next * 2).min(LONGEST);
        Ok(())
    }
}

/// Between half of `wait` and all of it ("equal jitter"): never much shorter than planned,
/// yet two writers that conflicted together do not retry together.
fn jittered(wait: Duration) -> Duration {
    let half = wait / 2;
    half + half.mul_f64(rand::random::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jitter_keeps_a_wait_between_half_and_whole() {
        for _ in 0..1000 {
            let wait = jittered(Duration::from_millis(400));
            assert!(wait >= Duration::from_millis(200) && wait <= Duration::from_millis(400));
        }
    }

    #[tokio::test]
    async fn waits_double_from_fifty_milliseconds_until_the_budget_is_spent() {
        let mut backoff = Backoff::within(Duration::from_millis(400));
        let started = Instant::now();
        let mut waits = Vec::new();
        loop {
            let before = Instant::now();
            match backoff.conflicted().await {
                Ok(()) => waits.push(before.elapsed()),
                Err(exhausted) => {
                    assert_eq!(exhausted.attempts as usize, waits.len() + 1);
                    break;
                }
            }
        }
        // 25-50, 50-100, 100-200 ms fit in 400 ms; the next (200-400 ms) may or may not.
        assert!((3..=4).contains(&waits.len()), "{waits:?}");
        assert!(waits[0] >= Duration::from_millis(25), "{waits:?}");
        assert!(waits[2] >= Duration::from_millis(100), "{waits:?}");
        assert!(started.elapsed() <= Duration::from_millis(500));
    }
}
