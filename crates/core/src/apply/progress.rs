//! The events apply reports while it runs, and the trait that receives them. How they are shown
//! (a live view on a terminal, plain lines in CI) is the CLI's business.

use std::time::Duration;

/// What apply reports while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    Started {
        address: &'a str,
        operation: &'a str,
    },
    Finished {
        address: &'a str,
        operation: &'a str,
        elapsed: Duration,
    },
    Waiting {
        address: &'a str,
        what: &'a str,
    },
    ResourceDone {
        address: &'a str,
        ok: bool,
        elapsed: Duration,
    },
}

/// Receives apply's events from any of its tasks.
pub trait Progress: Send + Sync {
    fn event(&self, event: Event<'_>);
    /// Called once when apply ends: clears the live view, flushes the plain lines.
    fn finish(&self);
}

/// For runs nobody watches (tests, library use).
pub struct Silent;

impl Progress for Silent {
    fn event(&self, _: Event<'_>) {}
    fn finish(&self) {}
}
