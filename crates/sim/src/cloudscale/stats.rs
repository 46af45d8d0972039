//! What the cloudscale simulator counts: requests by method and route template
//! (`GET /v1/load-balancers/{uuid}`), so tests can prove how many calls an operation makes, and
//! the faults injected by kind. Served at `GET /_sim/requests`, cleared by
//! `POST /_sim/requests/reset` (`sim::request_stats`).

use serde::Serialize;

use super::state::Sim;
use crate::request_stats::{self, KeepsRequestStats, Tally};

pub type RequestStats = request_stats::RequestStats<FaultCounts>;
pub type RequestCounts = request_stats::RequestCounts<FaultCounts>;

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Throttled,
    ServerError,
    Dropped,
    AfterCommit,
}

impl Tally for FaultCounts {
    type Kind = FaultKind;

    fn count(&mut self, kind: FaultKind) {
        let count = match kind {
            FaultKind::Throttled => &mut self.throttled,
            FaultKind::ServerError => &mut self.server_error,
            FaultKind::Dropped => &mut self.dropped,
            FaultKind::AfterCommit => &mut self.after_commit,
        };
        *count += 1;
    }
}

impl KeepsRequestStats for Sim {
    type Faults = FaultCounts;

    fn request_stats(&self) -> &RequestStats {
        self.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_counted_by_kind_as_the_fault_spec_spells_them() {
        let stats = RequestStats::default();
        stats.record_fault(FaultKind::Dropped);
        stats.record_fault(FaultKind::AfterCommit);
        stats.record_fault(FaultKind::AfterCommit);
        let faults = serde_json::to_value(stats.snapshot().faults).unwrap();
        let expected = serde_json::json!({"429": 0, "5xx": 0, "drop": 1, "after-commit": 2});
        assert_eq!(faults, expected);
    }
}
