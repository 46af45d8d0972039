//! Request counters by method and route template (`PATCH /api/v1/nodes/{name}`), so tests can
//! prove how many calls a client makes. Served at `GET /_sim/requests`, cleared by
//! `POST /_sim/requests/reset` (`sim::request_stats`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use super::state::KubeSim;

#[derive(Debug, Default)]
pub struct RequestStats {
    counts: Mutex<RequestCounts>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct RequestCounts {
    pub total: u64,
    pub by_route: BTreeMap<String, u64>,
}

impl RequestStats {
    pub fn record(&self, route: String) {
        let mut counts = self.lock();
        counts.total += 1;
        *counts.by_route.entry(route).or_default() += 1;
    }

    pub fn snapshot(&self) -> RequestCounts {
        self.lock().clone()
    }

    pub fn reset(&self) {
        *self.lock() = RequestCounts::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RequestCounts> {
        self.counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl crate::sim::request_stats::CountsRequests for KubeSim {
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
    fn counts_by_route_and_resets() {
        let stats = RequestStats::default();
        stats.record("GET /api/v1/nodes".into());
        stats.record("GET /api/v1/nodes".into());
        stats.record("PATCH /api/v1/nodes/{name}".into());
        let counts = stats.snapshot();
        assert_eq!(counts.total, 3);
        assert_eq!(counts.by_route["GET /api/v1/nodes"], 2);
        stats.reset();
        assert_eq!(stats.snapshot(), RequestCounts::default());
    }
}
