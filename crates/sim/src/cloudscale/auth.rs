//! `Authorization: Bearer <token>` on every API route, answered like the real API (401 with a
//! `detail`). The token is never logged or echoed.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::api::ApiError;
use super::state::Sim;

pub async fn require_bearer(State(sim): State<Sim>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.strip_prefix("Bearer "));
    match presented {
        None => {
            ApiError::unauthorized("Authentication credentials were not provided.").into_response()
        }
        Some(Some(token)) if token == sim.token() => next.run(request).await,
        Some(_) => ApiError::unauthorized("Invalid token.").into_response(),
    }
}
