//! Request counters by method and route template (`PATCH /api/v1/nodes/{name}`), so tests can
//! prove how many calls a client makes. Served at `GET /_sim/requests`, cleared by
//! `POST /_sim/requests/reset`; the `/_sim` routes themselves are not counted.

use std::collections::BTreeMap;
use std::sync::Mutex;

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
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

/// Middleware (as a route layer, so the matched route is known).
pub async fn count_request(State(sim): State<KubeSim>, request: Request, next: Next) -> Response {
    let template = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_owned(),
        |p| p.as_str().to_owned(),
    );
    sim.stats()
        .record(format!("{} {template}", request.method()));
    next.run(request).await
}

pub fn routes() -> Router<KubeSim> {
    Router::new()
        .route("/_sim/requests", get(show))
        .route("/_sim/requests/reset", post(reset))
}

async fn show(State(sim): State<KubeSim>) -> Json<RequestCounts> {
    Json(sim.stats().snapshot())
}

async fn reset(State(sim): State<KubeSim>) -> StatusCode {
    sim.stats().reset();
    StatusCode::NO_CONTENT
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
