//! What every simulator serves about the requests it answered, so tests can prove how many
//! calls a client makes: `GET /_sim/requests` (the counters) and `POST /_sim/requests/reset`,
//! and the middleware that counts each request by method and route template
//! (`PATCH /api/v1/nodes/{name}`). The `/_sim` routes themselves are not counted. Each
//! simulator keeps its own counters, most of them a [`RequestStats`] with the faults it
//! injects as its [`Tally`].

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

/// What a simulator counts besides requests: the faults it injected, by kind.
pub trait Tally: Default + Clone + Serialize + Send + 'static {
    type Kind;
    fn count(&mut self, kind: Self::Kind);

    /// Left out of the counters on the wire (a simulator that injects no faults).
    fn is_uncounted(&self) -> bool {
        false
    }
}

/// The tally of a simulator that injects no faults: not on the wire.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NoFaults;

impl Tally for NoFaults {
    type Kind = std::convert::Infallible;

    fn count(&mut self, kind: Self::Kind) {
        match kind {}
    }

    fn is_uncounted(&self) -> bool {
        true
    }
}

/// Requests by method and route template, and the faults of `F`.
#[derive(Debug, Default)]
pub struct RequestStats<F> {
    counts: Mutex<RequestCounts<F>>,
}

/// What `GET /_sim/requests` answers.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(bound(serialize = "F: Tally"))]
pub struct RequestCounts<F> {
    pub total: u64,
    pub by_route: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Tally::is_uncounted")]
    pub faults: F,
}

impl<F: Tally> RequestStats<F> {
    pub fn record(&self, route: String) {
        let mut counts = self.lock();
        counts.total += 1;
        *counts.by_route.entry(route).or_default() += 1;
    }

    pub fn record_fault(&self, kind: F::Kind) {
        self.lock().faults.count(kind);
    }

    pub fn snapshot(&self) -> RequestCounts<F> {
        self.lock().clone()
    }

    pub fn reset(&self) {
        *self.lock() = RequestCounts::default();
    }

    fn lock(&self) -> MutexGuard<'_, RequestCounts<F>> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A simulator state holding a [`RequestStats`]; it then counts requests.
pub trait KeepsRequestStats: Clone + Send + Sync + 'static {
    type Faults: Tally;
    fn request_stats(&self) -> &RequestStats<Self::Faults>;
}

impl<S: KeepsRequestStats> CountsRequests for S {
    type Counts = RequestCounts<S::Faults>;

    fn record_request(&self, route: String) {
        self.request_stats().record(route);
    }

    fn request_counts(&self) -> Self::Counts {
        self.request_stats().snapshot()
    }

    fn reset_request_counts(&self) {
        self.request_stats().reset();
    }
}

/// A simulator's state, as far as request counting goes.
pub trait CountsRequests: Clone + Send + Sync + 'static {
    type Counts: Serialize;
    fn record_request(&self, route: String);
    fn request_counts(&self) -> Self::Counts;
    fn reset_request_counts(&self);
}

/// Middleware (as a route layer, so the matched route is known) counting every API request,
/// including the ones authentication then refuses.
pub async fn count_request<S: CountsRequests>(
    State(sim): State<S>,
    request: Request,
    next: Next,
) -> Response {
    let template = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_owned(),
        |p| p.as_str().to_owned(),
    );
    sim.record_request(format!("{} {template}", request.method()));
    next.run(request).await
}

/// `GET /_sim/requests` and `POST /_sim/requests/reset`.
pub fn routes<S: CountsRequests>() -> Router<S> {
    Router::new()
        .route("/_sim/requests", get(show::<S>))
        .route("/_sim/requests/reset", post(reset::<S>))
}

async fn show<S: CountsRequests>(State(sim): State<S>) -> Json<S::Counts> {
    Json(sim.request_counts())
}

async fn reset<S: CountsRequests>(State(sim): State<S>) -> StatusCode {
    sim.reset_request_counts();
    StatusCode::NO_CONTENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Clone, PartialEq, Serialize)]
    struct Drops {
        drop: u64,
    }

    impl Tally for Drops {
        type Kind = ();
        fn count(&mut self, (): ()) {
            self.drop += 1;
        }
    }

    #[test]
    fn counts_by_route_and_fault_and_resets() {
        let stats = RequestStats::<Drops>::default();
        stats.record("GET /v1/load-balancers".into());
        stats.record("GET /v1/load-balancers".into());
        stats.record("POST /v1/load-balancers".into());
        stats.record_fault(());
        let counts = serde_json::to_value(stats.snapshot()).unwrap();
        let expected = serde_json::json!({
            "total": 3,
            "by_route": {"GET /v1/load-balancers": 2, "POST /v1/load-balancers": 1},
            "faults": {"drop": 1}
        });
        assert_eq!(counts, expected);
        stats.reset();
        assert_eq!(stats.snapshot().total, 0);
        assert_eq!(stats.snapshot().faults, Drops::default());
    }

    #[test]
    fn a_simulator_without_faults_shows_none() {
        let stats = RequestStats::<NoFaults>::default();
        stats.record("GET /api/v1/nodes".into());
        let counts = serde_json::to_value(stats.snapshot()).unwrap();
        let expected = serde_json::json!({"total": 1, "by_route": {"GET /api/v1/nodes": 1}});
        assert_eq!(counts, expected);
    }
}
