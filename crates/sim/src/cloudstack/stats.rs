//! Request counters, total and by command (`listLoadBalancerRules`), so tests can prove how
//! many calls an operation makes, plus the faults injected by kind. Served at
//! `GET /_sim/requests`, cleared by `POST /_sim/requests/reset`; those routes are not counted.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use crate::cloudscale::FaultCounts;

#[derive(Debug, Default)]
pub struct RequestStats {
    counts: Mutex<RequestCounts>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct RequestCounts {
    pub total: u64,
    /// By the `command` parameter as sent (an empty name when there was none).
    pub by_command: BTreeMap<String, u64>,
    pub faults: FaultCounts,
    /// Async jobs failed on purpose (`job-fail`).
    pub job_failures: u64,
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
