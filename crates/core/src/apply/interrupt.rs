//! Asking a running apply to stop: once asked, it starts no new change and lets the ones in
//! flight finish whole (a resource's operations are never cut in two, so a pool whose members
//! are being swapped is not left empty), then records the state as at any end. Who asks (the
//! CLI, on Ctrl-C or SIGTERM) is not core's business: core knows no signals.

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Set once, read before each change starts; waits (a rollout's pause) end when it is set.
#[derive(Debug, Default)]
pub struct Interrupt {
    asked: AtomicBool,
    notify: Notify,
}

impl Interrupt {
    /// Asks apply to start nothing new; what is in flight finishes.
    pub fn ask(&self) {
        self.asked.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn asked(&self) -> bool {
        self.asked.load(Ordering::SeqCst)
    }

    /// Resolves once apply was asked to stop (at once if it was already).
    pub async fn wait(&self) {
        loop {
            // Made before the flag is read: a `notify_waiters` in between still wakes it.
            let notified = self.notify.notified();
            if self.asked() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_ends_when_asked_and_at_once_once_asked() {
        let interrupt = std::sync::Arc::new(Interrupt::default());
        assert!(!interrupt.asked());
        let waiting = tokio::spawn({
            let interrupt = interrupt.clone();
            async move { interrupt.wait().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        interrupt.ask();
        waiting.await.unwrap();
        assert!(interrupt.asked());
        interrupt.wait().await;
    }
}
