//! What every simulator serves about the requests it answered, so tests can prove how many
//! calls a client makes: `GET /_sim/requests` (the counters) and `POST /_sim/requests/reset`,
//! and the middleware that counts each request by method and route template
//! (`PATCH /api/v1/nodes/{name}`). The `/_sim` routes themselves are not counted. Each
//! simulator keeps its own counters (some count injected faults too).

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

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
