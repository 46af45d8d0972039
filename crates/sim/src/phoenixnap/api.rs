//! The wire conventions shared by the four APIs: every error is
//! `{"message": string, "validationErrors": [string]}` (`components.schemas.Error` in each
//! spec), and JSON bodies that do not parse are 400s naming what is wrong.

use axum::body::Bytes;
use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::json;

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub validation_errors: Vec<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            validation_errors: Vec::new(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 400 listing every invalid field of a body.
    pub fn invalid(validation_errors: Vec<String>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: "Validation failed.".into(),
            validation_errors,
        }
    }

    pub fn not_found(what: &str, id: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            format!("{what} with id {id} not found."),
        )
    }

    /// 409: the resource is in a state that does not allow the request.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "message": self.message,
            "validationErrors": self.validation_errors,
        });
        (self.status, Json(body)).into_response()
    }
}

/// Parses a JSON body; a syntax error or a missing required field is a 400 whose
/// validationErrors carry serde's wording (it names the field).
pub fn parse_body<T: DeserializeOwned>(body: &Bytes) -> ApiResult<T> {
    serde_json::from_slice(body).map_err(|e| ApiError {
        status: StatusCode::BAD_REQUEST,
        message: "The request body is invalid.".into(),
        validation_errors: vec![e.to_string()],
    })
}

/// A query string parsed as axum's `Query` does, refused (400) in the APIs' error format
/// rather than axum's plain text (`?force=yes` on a detach, say).
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(ApiError {
                status: StatusCode::BAD_REQUEST,
                message: "The query string is invalid.".into(),
                validation_errors: vec![rejection.body_text()],
            }),
        }
    }
}

/// Collects the invalid fields of one request, to refuse them all in one 400.
#[derive(Debug, Default)]
pub struct Validation(Vec<String>);

impl Validation {
    pub fn check(&mut self, ok: bool, error: impl FnOnce() -> String) {
        if !ok {
            self.0.push(error());
        }
    }

    pub fn finish(self) -> ApiResult<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Body {
        location: String,
    }

    #[test]
    fn a_missing_field_is_named_in_the_validation_errors() {
        let error = parse_body::<Body>(&Bytes::from_static(b"{}")).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
        assert!(error.validation_errors[0].contains("location"));
    }

    #[test]
    fn validation_collects_every_failure() {
        let mut v = Validation::default();
        v.check(true, || "never".into());
        v.check(false, || "a".into());
        v.check(false, || "b".into());
        assert_eq!(v.finish().unwrap_err().validation_errors, ["a", "b"]);
        assert!(Validation::default().finish().is_ok());
    }
}
