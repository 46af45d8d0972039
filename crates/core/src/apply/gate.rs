//! The rollout's health gate: after a disruptive change, the resource counts as done only once
//! its provider reports it healthy (`Provider::health`), read again and again until then or
//! until `health-timeout` runs out. A read that fails counts as unhealthy (the cloud may be
//! catching up) and is retried like one; if time runs out on it, the error is what the gate
//! reports.

use std::time::Duration;

use tokio::time::Instant;

use crate::plan::ResourceChange;
use crate::provider::{Health, Provider};
use crate::state::ResourceState;

/// The first wait between two reads; each wait doubles up to [`LONGEST_WAIT`]. A member's
/// monitor takes a few of its intervals to see it up, so reading much faster only adds load.
const FIRST_WAIT: Duration = Duration::from_millis(100);
const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// What the gate found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Passed,
    /// Still not healthy when time ran out: what the last read reported.
    Failed(Vec<String>),
}

/// Reads the resource's health until it is healthy or `timeout` has passed (at least one
/// read, and one more at the deadline so a resource that became healthy in the last wait
/// passes).
pub async fn wait_until_healthy(
    provider: &dyn Provider,
    change: &ResourceChange,
    entry: Option<&ResourceState>,
    timeout: Duration,
) -> Gate {
    let deadline = Instant::now() + timeout;
    let mut wait = FIRST_WAIT;
    loop {
        let problems = match provider.health(change, entry).await {
            Ok(Health::Healthy) => return Gate::Passed,
            Ok(Health::Unhealthy(problems)) => problems,
            Err(e) => vec![format!("reading its health failed: {e}")],
        };
        let now = Instant::now();
        if now >= deadline {
            return Gate::Failed(problems);
        }
        tokio::time::sleep(wait.min(deadline - now)).await;
        wait = (wait * 2).min(LONGEST_WAIT);
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
