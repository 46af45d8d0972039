//! Request counters, total and by command (`listLoadBalancerRules`), so tests can prove how
//! many calls an operation makes, plus the faults injected by kind, and the log of the last
//! requests with their times (`crate::request_stats`'s, each entry's `route` the command), so
//! tests can see which calls overlapped. Served at `GET /_sim/requests`, cleared by
//! `POST /_sim/requests/reset`; those routes are not counted.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use crate::cloudscale::FaultCounts;
use crate::request_stats::{append, Finished, LoggedRequest};

#[derive(Debug)]
pub struct RequestStats {
    counts: Mutex<RequestCounts>,
    /// What the log's times count from: when the simulator started.
    epoch: Instant,
}

impl Default for RequestStats {
    fn default() -> Self {
        RequestStats {
            counts: Mutex::default(),
            epoch: Instant::now(),
        }
    }
}

#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct RequestCounts {
    pub total: u64,
    /// By the `command` parameter as sent (an empty name when there was none).
    pub by_command: BTreeMap<String, u64>,
    pub faults: FaultCounts,
    /// Async jobs failed on purpose (`job-fail`).
    pub job_failures: u64,
    /// The last requests, in the order they finished.
    pub log: VecDeque<LoggedRequest>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Throttled,
    ServerError,
    Dropped,
    AfterCommit,
    JobFailure,
}

impl RequestStats {
    pub fn record(&self, command: &str) {
        let mut counts = self.lock();
        counts.total += 1;
        *counts.by_command.entry(command.to_owned()).or_default() += 1;
    }

    /// Logs a finished request; its times are counted from the simulator's start.
    pub fn log(&self, request: Finished, started: Instant, ended: Instant) {
        let entry = LoggedRequest::of(request, self.epoch, started, ended);
        append(&mut self.lock().log, entry);
    }

    pub fn record_fault(&self, kind: FaultKind) {
        let mut counts = self.lock();
        let count = match kind {
            FaultKind::Throttled => &mut counts.faults.throttled,
            FaultKind::ServerError => &mut counts.faults.server_error,
            FaultKind::Dropped => &mut counts.faults.dropped,
            FaultKind::AfterCommit => &mut counts.faults.after_commit,
            FaultKind::JobFailure => &mut counts.job_failures,
        };
        *count += 1;
    }

    pub fn snapshot(&self) -> RequestCounts {
        self.lock().clone()
    }

    pub fn reset(&self) {
        *self.lock() = RequestCounts::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RequestCounts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_command_and_fault_and_resets() {
        let stats = RequestStats::default();
        stats.record("listZones");
        stats.record("listZones");
        stats.record("createTags");
        stats.record_fault(FaultKind::JobFailure);
        stats.record_fault(FaultKind::Dropped);
        let counts = stats.snapshot();
        assert_eq!(counts.total, 3);
        assert_eq!(counts.by_command["listZones"], 2);
        assert_eq!((counts.job_failures, counts.faults.dropped), (1, 1));
        stats.reset();
        assert_eq!(stats.snapshot(), RequestCounts::default());
    }
}
