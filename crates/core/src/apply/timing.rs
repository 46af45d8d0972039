//! Timing the operations apply performs, for the measured durations the state keeps.
//!
//! An operation's time runs from its start until the next operation of the same resource
//! starts, and the last one's until the resource is done. A cloud settles after a call (a
//! cloudscale load balancer is `changing` until it has applied it): that time belongs to the
//! call that caused it, not to the next call, which merely waits for it — and the resource is
//! done only once apply's verification saw it settled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::plan::Plan;
use crate::state::State;

/// One operation as the journal saw it.
#[derive(Debug, Clone)]
struct Timed {
    address: String,
    operation: String,
    started: Instant,
    done: bool,
}

#[derive(Debug, Default)]
struct Seen {
    operations: Vec<Timed>,
    /// When each resource's apply returned.
    ends: HashMap<String, Instant>,
}

/// Shared by apply's tasks and the journal's observer.
#[derive(Debug, Clone, Default)]
pub struct Timings(Arc<Mutex<Seen>>);

impl Timings {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn started(&self, address: &str, operation: &str, at: Instant) {
        self.seen().operations.push(Timed {
            address: address.to_string(),
            operation: operation.to_string(),
            started: at,
            done: false,
        });
    }

    /// The operation succeeded (a failed one is not timed: it did not do its work).
    pub fn done(&self, address: &str, operation: &str) {
        let mut seen = self.seen();
        let open = seen
            .operations
            .iter_mut()
            .rev()
            .find(|t| t.address == address && t.operation == operation && !t.done);
        if let Some(timed) = open {
            timed.done = true;
        }
    }

    pub fn resource_done(&self, address: &str, at: Instant) {
        self.seen().ends.insert(address.to_string(), at);
    }

    /// Each successful operation of a finished resource, with its time.
    fn durations(&self) -> Vec<(String, String, Duration)> {
        let seen = self.seen();
        let mut timed = Vec::new();
        for (i, op) in seen.operations.iter().enumerate() {
            let next = seen.operations[i + 1..]
                .iter()
                .find(|later| later.address == op.address)
                .map(|later| later.started)
                .or_else(|| seen.ends.get(&op.address).copied());
            if let (true, Some(until)) = (op.done, next) {
                let took = until.saturating_duration_since(op.started);
                timed.push((op.address.clone(), op.operation.clone(), took));
            }
        }
        timed
    }
}

/// Each timed operation, by its kind (`cloudscale/create-pool`), into the state's rolling
/// durations. An operation the plan does not list under that text is not timed.
pub fn record_durations(state: &mut State, plan: &Plan, timings: &Timings) {
    let kinds: HashMap<(String, String), String> = plan
        .changes
        .iter()
        .flat_map(|change| {
            change.operations.iter().map(|op| {
                let key = (change.address.to_string(), op.to_string());
                (key, op.kind.clone())
            })
        })
        .collect();
    for (address, operation, took) in timings.durations() {
        if let Some(kind) = kinds.get(&(address, operation)) {
            state.durations.record(kind, took);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn an_operation_lasts_until_the_next_of_its_resource_or_the_resource_s_end() {
        let t0 = Instant::now();
        let timings = Timings::default();
        timings.started("lb.a", "create pool", t0);
        timings.started("lb.b", "rename", t0 + ms(5));
        timings.done("lb.a", "create pool");
        timings.done("lb.b", "rename");
        timings.started("lb.a", "create member", t0 + ms(100));
        timings.done("lb.a", "create member");
        timings.resource_done("lb.b", t0 + ms(45));
        timings.resource_done("lb.a", t0 + ms(250));
        assert_eq!(
            timings.durations(),
            [
                ("lb.a".to_string(), "create pool".to_string(), ms(100)),
                ("lb.b".to_string(), "rename".to_string(), ms(40)),
                ("lb.a".to_string(), "create member".to_string(), ms(150)),
            ]
        );
    }

    #[test]
    fn failed_operations_and_unfinished_resources_are_not_timed() {
        let t0 = Instant::now();
        let timings = Timings::default();
        timings.started("lb.a", "create pool", t0);
        timings.started("lb.c", "create lb", t0);
        timings.done("lb.c", "create lb");
        timings.resource_done("lb.a", t0 + ms(10));
        assert!(timings.durations().is_empty());
    }
}
