//! Request counters by method and route template (`POST /ips/v1/ip-blocks`), token requests
//! included, and the faults injected by kind. Served at `GET /_sim/requests`, cleared by
//! `POST /_sim/requests/reset` (`sim::request_stats`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use super::state::Sim;

#[derive(Debug, Default)]
pub struct RequestStats {
    counts: Mutex<RequestCounts>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct RequestCounts {
    pub total: u64,
    pub by_route: BTreeMap<String, u64>,
    pub faults: FaultCounts,
}

/// Faults injected, by kind, spelled on the wire as in the fault spec.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct FaultCounts {
    #[serde(rename = "429")]
    pub throttled: u64,
    #[serde(rename = "5xx")]
    pub server_error: u64,
    #[serde(rename = "drop")]
    pub dropped: u64,
    #[serde(rename = "after-commit")]
    pub after_commit: u64,
    #[serde(rename = "tags-put-fail")]
    pub tags_put_fail: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Throttled,
    ServerError,
    Dropped,
    AfterCommit,
    TagsPutFail,
}

impl RequestStats {
    pub fn record(&self, route: String) {
        let mut counts = self.lock();
        counts.total += 1;
        *counts.by_route.entry(route).or_default() += 1;
    }

    pub fn record_fault(&self, kind: FaultKind) {
        let faults = &mut self.lock().faults;
        let count = match kind {
            FaultKind::Throttled => &mut faults.throttled,
            FaultKind::ServerError => &mut faults.server_error,
            FaultKind::Dropped => &mut faults.dropped,
            FaultKind::AfterCommit => &mut faults.after_commit,
            FaultKind::TagsPutFail => &mut faults.tags_put_fail,
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

impl crate::sim::request_stats::CountsRequests for Sim {
    type Counts = RequestCounts;

    fn record_request(&self, route: String) {
        self.stats().record(route);
    }

    fn request_counts(&self) -> RequestCounts {
        self.stats().snapshot()
    }

    fn reset_request_counts(&self) {
        self.stats().reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_route_and_fault_kind_and_resets() {
        let stats = RequestStats::default();
        stats.record("GET /ips/v1/ip-blocks".into());
        stats.record("GET /ips/v1/ip-blocks".into());
        stats.record_fault(FaultKind::TagsPutFail);
        let counts = stats.snapshot();
        assert_eq!(
            (counts.total, counts.by_route["GET /ips/v1/ip-blocks"]),
            (2, 2)
        );
        let faults = serde_json::to_value(&counts.faults).unwrap();
        assert_eq!(faults["tags-put-fail"], 1);
        assert_eq!(faults["5xx"], 0);
        stats.reset();
        assert_eq!(stats.snapshot(), RequestCounts::default());
    }
}
