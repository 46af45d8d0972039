//! `Authorization: Bearer <token>` on every API call: none, unknown or expired → 401; a token
//! without a scope the operation needs → 403. Both answer the APIs' `{"message"}` error.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::scopes;
use super::tokens::Refused;
use crate::phoenixnap::api::ApiError;
use crate::phoenixnap::state::Sim;

pub async fn require_bearer(State(sim): State<Sim>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let Some(token) = presented else {
        return unauthorized("Full authentication is required to access this resource.");
    };
    let granted = match sim.tokens().check(token.trim()) {
        Ok(scopes) => scopes,
        Err(Refused::Unknown) => return unauthorized("The access token is invalid."),
        Err(Refused::Expired) => return unauthorized("The access token has expired."),
    };
    let needed = scopes::needed(request.uri().path(), request.method());
    if !needed.iter().any(|scope| granted.contains(scope)) {
        let message = format!(
            "Access denied: the access token lacks the scope {}.",
            needed[0].as_str()
        );
        return ApiError::new(StatusCode::FORBIDDEN, message).into_response();
    }
    next.run(request).await
}

fn unauthorized(message: &str) -> Response {
    ApiError::new(StatusCode::UNAUTHORIZED, message).into_response()
}
