//! What every simulator serves about the requests it answered, so tests can prove how many
//! calls a client makes: `GET /_sim/requests` (the counters) and `POST /_sim/requests/reset`,
//! and the middleware that counts each request by method and route template
//! (`PATCH /api/v1/nodes/{name}`). The `/_sim` routes themselves are not counted. Each
//! simulator keeps its own counters, most of them a [`RequestStats`] with the faults it
//! injects as its [`Tally`].
//!
//! Beside the counters, `log` lists the last [`LOG_LIMIT`] requests in the order they finished,
//! each with its method, path, route template, status and the times it started and ended, in
//! milliseconds (fractional, microsecond precision) since the counters were created — when
//! the simulator started. Tests read it to see which requests overlapped in time, e.g. how
//! many load balancers were being changed at once. A reset empties it; the clock keeps running.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

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

/// How many requests the log keeps: the oldest are dropped beyond it.
pub const LOG_LIMIT: usize = 100_000;

/// Requests by method and route template, the faults of `F`, and the log of the last requests.
#[derive(Debug)]
pub struct RequestStats<F> {
    counts: Mutex<RequestCounts<F>>,
    /// What the log's times count from.
    epoch: Instant,
}

impl<F: Default> Default for RequestStats<F> {
    fn default() -> Self {
        RequestStats {
            counts: Mutex::default(),
            epoch: Instant::now(),
        }
    }
}

/// What `GET /_sim/requests` answers.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
#[serde(bound(serialize = "F: Tally"))]
pub struct RequestCounts<F> {
    pub total: u64,
    pub by_route: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Tally::is_uncounted")]
    pub faults: F,
    /// The last [`LOG_LIMIT`] requests, in the order they finished.
    pub log: VecDeque<LoggedRequest>,
}

/// One request of the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggedRequest {
    pub method: String,
    /// The path as requested, without the query.
    pub path: String,
    /// The route template it matched, as the counters name it (`GET /v1/load-balancers/{uuid}`).
    pub route: String,
    /// The HTTP status answered (the one a dropped connection would have carried).
    pub status: u16,
    /// Milliseconds since the simulator started, microsecond precision.
    pub started_ms: f64,
    pub ended_ms: f64,
}

impl LoggedRequest {
    /// `request` as the log keeps it, its times counted from `epoch`.
    pub fn of(request: Finished, epoch: Instant, started: Instant, ended: Instant) -> Self {
        let since = |at: Instant| {
            let micros = at.saturating_duration_since(epoch).as_micros();
            micros as f64 / 1000.0
        };
        LoggedRequest {
            method: request.method,
            path: request.path,
            route: request.route,
            status: request.status,
            started_ms: since(started),
            ended_ms: since(ended),
        }
    }
}

/// Appends `entry` to a log, dropping the oldest beyond [`LOG_LIMIT`]; for a simulator that
/// keeps its own counters beside the log (CloudStack's, by command).
pub fn append(log: &mut VecDeque<LoggedRequest>, entry: LoggedRequest) {
    if log.len() >= LOG_LIMIT {
        log.pop_front();
    }
    log.push_back(entry);
}

impl<F: Tally> RequestStats<F> {
    pub fn record(&self, route: String) {
        let mut counts = self.lock();
        counts.total += 1;
        *counts.by_route.entry(route).or_default() += 1;
    }

    /// Logs a finished request; `started` and `ended` are turned into times since the epoch.
    pub fn log(&self, request: Finished, started: Instant, ended: Instant) {
        let entry = LoggedRequest::of(request, self.epoch, started, ended);
        append(&mut self.lock().log, entry);
    }

    pub fn record_fault(&self, kind: F::Kind) {
        self.lock().faults.count(kind);
    }

    /// The requests counted, without copying the counters and the log.
    pub fn total(&self) -> u64 {
        self.lock().total
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

/// A request as the middleware saw it, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub method: String,
    pub path: String,
    pub route: String,
    pub status: u16,
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

    fn log_request(&self, request: Finished, started: Instant, ended: Instant) {
        self.request_stats().log(request, started, ended);
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
    /// Logs a request once answered; a simulator without a log ignores it.
    fn log_request(&self, _request: Finished, _started: Instant, _ended: Instant) {}
    fn request_counts(&self) -> Self::Counts;
    fn reset_request_counts(&self);
}

/// Middleware (as a route layer, so the matched route is known) counting every API request,
/// including the ones authentication then refuses, and logging each once answered (the time
/// of a streamed body's transfer is not included).
pub async fn count_request<S: CountsRequests>(
    State(sim): State<S>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let template = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_owned(),
        |p| p.as_str().to_owned(),
    );
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let route = format!("{method} {template}");
    sim.record_request(route.clone());
    let response = next.run(request).await;
    let finished = Finished {
        method,
        path,
        route,
        status: response.status().as_u16(),
    };
    sim.log_request(finished, started, Instant::now());
    response
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
            "faults": {"drop": 1},
            "log": []
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
        let expected =
            serde_json::json!({"total": 1, "by_route": {"GET /api/v1/nodes": 1}, "log": []});
        assert_eq!(counts, expected);
    }

    fn finished(path: &str, status: u16) -> Finished {
        Finished {
            method: "PATCH".into(),
            path: path.into(),
            route: "PATCH /v1/load-balancers/{uuid}".into(),
            status,
        }
    }

    #[test]
    fn the_log_keeps_times_since_the_epoch_in_the_order_requests_finished() {
        let stats = RequestStats::<NoFaults>::default();
        let epoch = stats.epoch;
        let at = |micros| epoch + std::time::Duration::from_micros(micros);
        stats.log(finished("/v1/load-balancers/a", 204), at(1_500), at(2_250));
        stats.log(finished("/v1/load-balancers/b", 409), at(1_000), at(3_000));
        let log = serde_json::to_value(stats.snapshot().log).unwrap();
        let expected = serde_json::json!([
            {"method": "PATCH", "path": "/v1/load-balancers/a",
             "route": "PATCH /v1/load-balancers/{uuid}", "status": 204,
             "started_ms": 1.5, "ended_ms": 2.25},
            {"method": "PATCH", "path": "/v1/load-balancers/b",
             "route": "PATCH /v1/load-balancers/{uuid}", "status": 409,
             "started_ms": 1.0, "ended_ms": 3.0},
        ]);
        assert_eq!(log, expected);
        stats.reset();
        assert!(stats.snapshot().log.is_empty());
    }

    #[test]
    fn the_log_keeps_only_the_last_entries() {
        let stats = RequestStats::<NoFaults>::default();
        let now = Instant::now();
        for i in 0..LOG_LIMIT + 2 {
            stats.log(finished(&format!("/{i}"), 200), now, now);
        }
        let log = stats.snapshot().log;
        assert_eq!(log.len(), LOG_LIMIT);
        assert_eq!(log.front().unwrap().path, "/2");
        assert_eq!(log.back().unwrap().path, format!("/{}", LOG_LIMIT + 1));
    }
}
