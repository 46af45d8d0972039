//! The API's wire conventions shared by every collection: errors as `{"detail": …}`, JSON
//! bodies (malformed → 400), create-only fields refused in a PATCH, lookups that answer 404.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use uuid::Uuid;

use super::world::{self, Keyed};

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub detail: String,
}

impl ApiError {
    pub fn bad_request(detail: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            detail: detail.into(),
        }
    }

    pub fn not_found() -> Self {
        ApiError {
            status: StatusCode::NOT_FOUND,
            detail: "Not found.".into(),
        }
    }

    pub fn unauthorized(detail: &str) -> Self {
        ApiError {
            status: StatusCode::UNAUTHORIZED,
            detail: detail.into(),
        }
    }

    /// A request named an object (by UUID or slug) that does not exist.
    pub fn unknown(field: &str, value: impl std::fmt::Display) -> Self {
        Self::bad_request(format!(
            "{field}: object with uuid or slug \"{value}\" does not exist."
        ))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "detail": self.detail }))).into_response()
    }
}

/// 201 with the created object, as the real API answers a POST.
pub fn created(object: Value) -> (StatusCode, Json<Value>) {
    (StatusCode::CREATED, Json(object))
}

/// Parses a create request. Serde's messages name the missing field or the refused enum value.
pub fn parse_create<T: DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    let object = parse_object(body)?;
    from_object(object)
}

/// Parses a PATCH, refusing any of `create_only` (dotted names reach into nested objects, e.g.
/// `http.version`) the way the real API does, instead of silently ignoring them.
pub fn parse_patch<T: DeserializeOwned>(body: &[u8], create_only: &[&str]) -> ApiResult<T> {
    let object = parse_object(body)?;
    if let Some(field) = create_only.iter().find(|field| has_path(&object, field)) {
        return Err(ApiError::bad_request(format!(
            "{field}: this field cannot be changed after creation."
        )));
    }
    from_object(object)
}

fn parse_object(body: &[u8]) -> ApiResult<Map<String, Value>> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ApiError::bad_request(
            "Invalid data. Expected a JSON object.",
        )),
        Err(e) => Err(ApiError::bad_request(format!("JSON parse error - {e}"))),
    }
}

fn from_object<T: DeserializeOwned>(object: Map<String, Value>) -> ApiResult<T> {
    serde_json::from_value(Value::Object(object)).map_err(|e| ApiError::bad_request(e.to_string()))
}

fn has_path(object: &Map<String, Value>, dotted: &str) -> bool {
    match dotted.split_once('.') {
        None => object.contains_key(dotted),
        Some((head, rest)) => match object.get(head) {
            Some(Value::Object(inner)) => has_path(inner, rest),
            _ => false,
        },
    }
}

/// The UUID in a path; anything that is not a UUID cannot name an object, hence 404.
pub fn path_uuid(raw: &str) -> ApiResult<Uuid> {
    raw.parse().map_err(|_| ApiError::not_found())
}

pub fn lookup<'a, T: Keyed>(items: &'a [T], raw: &str) -> ApiResult<&'a T> {
    world::find(items, path_uuid(raw)?).ok_or_else(ApiError::not_found)
}

pub fn lookup_mut<'a, T: Keyed>(items: &'a mut [T], raw: &str) -> ApiResult<&'a mut T> {
    world::find_mut(items, path_uuid(raw)?).ok_or_else(ApiError::not_found)
}

/// Deserializes a field that may be absent (leave as is) or null (clear): `Some(None)` is null.
pub fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    serde::Deserialize::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Patch {
        name: Option<String>,
    }

    #[test]
    fn patch_refuses_create_only_fields_including_nested_ones() {
        let error = parse_patch::<Patch>(br#"{"http": {"version": "1.0"}}"#, &["http.version"])
            .unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
        assert!(error.detail.contains("http.version"), "{}", error.detail);
        let patch: Patch = parse_patch(br#"{"name": "a", "http": {}}"#, &["http.version"]).unwrap();
        assert_eq!(patch.name.as_deref(), Some("a"));
    }

    #[test]
    fn malformed_json_and_non_objects_are_bad_requests() {
        for body in [&b"{"[..], b"[1]"] {
            let error = parse_create::<Patch>(body).unwrap_err();
            assert_eq!(error.status, StatusCode::BAD_REQUEST);
        }
    }
}
