//! `POST /auth/realms/BMC/protocol/openid-connect/token`: `grant_type=client_credentials`, the
//! client's id and secret by HTTP Basic (x/oauth2's first try, URL-encoded inside the Basic
//! value) or as `client_id`/`client_secret` form fields (its fallback), an optional `scope`.
//! Answers as Keycloak does: `{"access_token", "expires_in", "token_type": "Bearer", "scope"}`,
//! or `{"error", "error_description"}`.

use std::fmt;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine;
use serde_json::json;

use super::scopes::{self, Scope};
use crate::phoenixnap::state::Sim;

pub const TOKEN_PATH: &str = "/auth/realms/BMC/protocol/openid-connect/token";

/// The one client the simulated account knows.
#[derive(Clone)]
pub struct Credentials {
    client_id: String,
    client_secret: String,
}

impl Credentials {
    pub fn new(client_id: String, client_secret: String) -> Self {
        Credentials {
            client_id,
            client_secret,
        }
    }

    fn accepts(&self, presented: &Presented) -> bool {
        presented.client_id == self.client_id && presented.client_secret == self.client_secret
    }
}

/// Never shows the secret.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

struct Presented {
    client_id: String,
    client_secret: String,
}

pub async fn token(
    State(sim): State<Sim>,
    headers: HeaderMap,
    form: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Response {
    let Ok(Form(fields)) = form else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The body must be application/x-www-form-urlencoded.",
        );
    };
    let field = |name: &str| {
        fields
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    match field("grant_type") {
        None => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Missing form parameter: grant_type",
            )
        }
        Some("client_credentials") => {}
        Some(_) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "Unsupported grant_type",
            )
        }
    }
    let presented = basic_credentials(&headers).or_else(|| {
        Some(Presented {
            client_id: field("client_id")?.to_owned(),
            client_secret: field("client_secret")?.to_owned(),
        })
    });
    if !presented.is_some_and(|p| sim.credentials().accepts(&p)) {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "unauthorized_client",
            "Invalid client or Invalid client credentials",
        );
    }
    let scopes = match scopes::requested(field("scope")) {
        Ok(scopes) => scopes,
        Err(unknown) => {
            let why = format!("Invalid scopes: {unknown}");
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_scope", &why);
        }
    };
    granted(&sim, scopes)
}

fn granted(sim: &Sim, scopes: Vec<Scope>) -> Response {
    let scope = scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let token = sim.tokens().issue(scopes);
    let body = json!({
        "access_token": token,
        "expires_in": sim.tokens().ttl().as_secs(),
        "refresh_expires_in": 0,
        "token_type": "Bearer",
        "not-before-policy": 0,
        "scope": scope,
    });
    ([(CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let body = json!({ "error": error, "error_description": description });
    (status, Json(body)).into_response()
}

/// `Authorization: Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1).
fn basic_credentials(headers: &HeaderMap) -> Option<Presented> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    Some(Presented {
        client_id: percent_decode(id)?,
        client_secret: percent_decode(secret)?,
    })
}

/// Form-style decoding (`%XX`, `+` for space); `None` for a broken escape.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        match first {
            b'%' => {
                let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
                rest = &tail[2..];
                continue;
            }
            b'+' => bytes.push(b' '),
            other => bytes.push(other),
        }
        rest = tail;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(value: &str) -> HeaderMap {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, format!("Basic {encoded}").parse().unwrap());
        headers
    }

    #[test]
    fn basic_credentials_are_url_decoded() {
        let p = basic_credentials(&basic("my%20id:s%3Acr+t")).unwrap();
        assert_eq!(
            (p.client_id.as_str(), p.client_secret.as_str()),
            ("my id", "s:cr t")
        );
        assert!(basic_credentials(&basic("no-colon")).is_none());
        assert!(basic_credentials(&basic("id:bad%zz")).is_none());
        assert!(basic_credentials(&HeaderMap::new()).is_none());
    }

    #[test]
    fn debug_hides_the_secret() {
        let credentials = Credentials::new("id".into(), "hunter2".into());
        assert!(!format!("{credentials:?}").contains("hunter2"));
    }
}
