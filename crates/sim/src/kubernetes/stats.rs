//! What the Kubernetes simulator counts: requests by method and route template
//! (`PATCH /api/v1/nodes/{name}`), so tests can prove how many calls a client makes. Served at
//! `GET /_sim/requests`, cleared by `POST /_sim/requests/reset` (`sim::request_stats`).

use super::state::KubeSim;
use crate::request_stats::{self, KeepsRequestStats, NoFaults};

pub type RequestStats = request_stats::RequestStats<NoFaults>;
pub type RequestCounts = request_stats::RequestCounts<NoFaults>;

impl KeepsRequestStats for KubeSim {
    type Faults = NoFaults;

    fn request_stats(&self) -> &RequestStats {
        self.stats()
    }
}
