//! What the PhoenixNAP simulator counts: requests by method and route template
//! (`POST /ips/v1/ip-blocks`), token requests included, and the faults injected by kind.
//! Served at `GET /_sim/requests`, cleared by `POST /_sim/requests/reset`
//! (`sim::request_stats`).

use serde::Serialize;

use super::state::Sim;
use crate::cloudscale::{FaultCounts as TransportFaults, FaultKind as TransportFault};
use crate::request_stats::{self, KeepsRequestStats, Tally};

pub type RequestStats = request_stats::RequestStats<FaultCounts>;
pub type RequestCounts = request_stats::RequestCounts<FaultCounts>;

/// Faults injected, by kind, spelled on the wire as in the fault spec: cloudscale's transport
/// faults, plus the tag write the CCM's release leaks a block on.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct FaultCounts {
    #[serde(flatten)]
    pub transport: TransportFaults,
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

impl Tally for FaultCounts {
    type Kind = FaultKind;

    fn count(&mut self, kind: FaultKind) {
        let transport = match kind {
            FaultKind::Throttled => TransportFault::Throttled,
            FaultKind::ServerError => TransportFault::ServerError,
            FaultKind::Dropped => TransportFault::Dropped,
            FaultKind::AfterCommit => TransportFault::AfterCommit,
            FaultKind::TagsPutFail => {
                self.tags_put_fail += 1;
                return;
            }
        };
        self.transport.count(transport);
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
        stats.record_fault(FaultKind::TagsPutFail);
        let faults = serde_json::to_value(stats.snapshot().faults).unwrap();
        assert_eq!(faults["tags-put-fail"], 1);
        assert_eq!(faults["5xx"], 0);
    }
}
