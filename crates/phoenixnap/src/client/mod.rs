//! The HTTP client for PhoenixNAP's IP, network, tag-manager and BMC APIs: one OAuth2 token for
//! all four (`token`), JSON in and out, the APIs' error body (`message`, `validationErrors`)
//! turned into one error type, and retries only where repeating a request is safe. Knows no
//! resource.

pub mod credentials;
mod token;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use credentials::Credentials;
use skyplan_core::provider::http::{status_kind, with_causes, USER_AGENT};
use skyplan_core::provider::{ErrorKind, ProviderError};
use token::TokenSource;

/// PhoenixNAP's API root and token URL (`servers:` of each OpenAPI spec; the CCM's `tokenURL`).
pub const DEFAULT_API_ROOT: &str = "https://api.phoenixnap.com";
pub const DEFAULT_TOKEN_URL: &str =
    "https://auth.phoenixnap.com/auth/realms/BMC/protocol/openid-connect/token";
/// The token path on a root that serves everything (the simulator).
pub const TOKEN_PATH: &str = "/auth/realms/BMC/protocol/openid-connect/token";

/// One of the four APIs, by its path under the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Ips,
    Networks,
    Tags,
    Bmc,
}

impl Api {
    fn prefix(self) -> &'static str {
        match self {
            Api::Ips => "/ips/v1",
            Api::Networks => "/networks/v1",
            Api::Tags => "/tag-manager/v1",
            Api::Bmc => "/bmc/v1",
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("PhoenixNAP token: {0}")]
    Token(String),
    /// The API answered with an error status and its explanation.
    #[error("PhoenixNAP API: {method} {path}: {status}: {message}{}", validation_text(.validation))]
    Status {
        method: Method,
        path: String,
        status: StatusCode,
        message: String,
        validation: Vec<String>,
    },
    #[error("PhoenixNAP API: {method} {path}: {detail}")]
    Transport {
        method: Method,
        path: String,
        detail: String,
        /// The request may have reached the API (not a refused connection).
        sent: bool,
    },
    #[error("PhoenixNAP API: {method} {path}: unexpected response body: {detail}")]
    Decode {
        method: Method,
        path: String,
        detail: String,
    },
}

fn validation_text(validation: &[String]) -> String {
    match validation.is_empty() {
        true => String::new(),
        false => format!(" ({})", validation.join("; ")),
    }
}

impl Error {
    fn token(detail: impl Into<String>) -> Error {
        Error::Token(detail.into())
    }

    /// What kind of failure this is, for the provider error that reports it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            // No token could be had for the client credentials.
            Error::Token(_) => ErrorKind::Auth,
            Error::Status { status, .. } => status_kind(status.as_u16()),
            Error::Transport { .. } => ErrorKind::Transport,
            Error::Decode { .. } => ErrorKind::Api,
        }
    }

    /// The provider error about `address` that reports this one: its text, its kind, and this
    /// error as the source.
    pub fn for_address(self, address: impl ToString) -> ProviderError {
        ProviderError::new(address, &self)
            .kind(self.kind())
            .caused_by(self)
    }

    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Not found; the BMC API answers 403 for a server that is gone (the CCM treats both alike).
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(StatusCode::NOT_FOUND)
    }

    /// Whether the request may have been carried out although it failed: a create that failed
    /// this way must look for what it may have made before it tries again.
    pub fn is_uncertain(&self) -> bool {
        match self {
            Error::Status { status, .. } => status.is_server_error(),
            Error::Transport { sent, .. } => *sent,
            _ => false,
        }
    }
}

/// Whether a failed request may be sent again as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Reads, and writes whose repetition changes nothing (PUT tags, DELETE).
    Safe,
    /// Creates and asynchronous starts: only what certainly did not reach the API (a refused
    /// connection, 429) is sent again.
    NotSent,
}

/// The APIs' error body.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ErrorBody {
    #[serde(default)]
    message: String,
    #[serde(default)]
    validation_errors: Vec<String>,
}

const ATTEMPTS: usize = 5;
const FIRST_PAUSE: Duration = Duration::from_millis(200);
const MAX_PAUSE: Duration = Duration::from_secs(5);

pub struct PnapClient {
    http: reqwest::Client,
    root: String,
    tokens: TokenSource,
    requests: AtomicU64,
}

impl PnapClient {
    /// `root` serves the four APIs (`https://api.phoenixnap.com`); `token_url` the tokens.
    pub fn new(root: &str, token_url: &str, credentials: Credentials) -> Result<Self, Error> {
        let http = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| Error::token(with_causes(&e)))?;
        Ok(PnapClient {
            tokens: TokenSource::new(http.clone(), token_url.to_owned(), credentials),
            http,
            root: root.trim_end_matches('/').to_owned(),
            requests: AtomicU64::new(0),
        })
    }

    /// API requests sent (token requests not counted).
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub async fn get<T: DeserializeOwned>(&self, api: Api, path: &str) -> Result<T, Error> {
        self.call(Method::GET, api, path, None::<&()>, Retry::Safe)
            .await
    }

    pub async fn send<T: DeserializeOwned>(
        &self,
        method: Method,
        api: Api,
        path: &str,
        body: Option<&impl Serialize>,
        retry: Retry,
    ) -> Result<T, Error> {
        self.call(method, api, path, body, retry).await
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        api: Api,
        path: &str,
        body: Option<&impl Serialize>,
        retry: Retry,
    ) -> Result<T, Error> {
        let path = format!("{}{path}", api.prefix());
        let mut failures = 0;
        loop {
            let result = self.once(&method, &path, body).await;
            let again = match &result {
                Err(e) => failures + 1 < ATTEMPTS && may_retry(e, retry),
                Ok(_) => false,
            };
            if !again {
                let bytes = result?;
                return decode(&method, &path, &bytes);
            }
            tokio::time::sleep(pause(failures)).await;
            failures += 1;
        }
    }

    /// One request with a fresh-enough token; a 401 gets one more try with a new token.
    async fn once(
        &self,
        method: &Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<Vec<u8>, Error> {
        let mut token = self.tokens.token().await?;
        for attempt in 0..2 {
            self.requests.fetch_add(1, Ordering::Relaxed);
            let mut request = self
                .http
                .request(method.clone(), format!("{}{path}", self.root))
                .bearer_auth(token.expose())
                .header("Accept", "application/json");
            if let Some(body) = body {
                request = request.json(body);
            }
            let transport = |e: reqwest::Error| Error::Transport {
                method: method.clone(),
                path: path.to_owned(),
                sent: !e.is_connect() && !e.is_builder(),
                detail: with_causes(&e),
            };
            let response = request.send().await.map_err(transport)?;
            let status = response.status();
            let bytes = response.bytes().await.map_err(transport)?.to_vec();
            if status == StatusCode::UNAUTHORIZED && attempt == 0 {
                self.tokens.reject(&token).await;
                token = self.tokens.token().await?;
                continue;
            }
            if !status.is_success() {
                let body: ErrorBody = serde_json::from_slice(&bytes).unwrap_or_default();
                return Err(Error::Status {
                    method: method.clone(),
                    path: path.to_owned(),
                    status,
                    message: match body.message.is_empty() {
                        true => status.canonical_reason().unwrap_or("error").to_owned(),
                        false => body.message,
                    },
                    validation: body.validation_errors,
                });
            }
            return Ok(bytes);
        }
        unreachable!("the loop returns on its second attempt")
    }
}

fn may_retry(error: &Error, retry: Retry) -> bool {
    let status = error.status();
    let throttled = status == Some(StatusCode::TOO_MANY_REQUESTS);
    match retry {
        Retry::Safe => {
            throttled
                || status.is_some_and(|s| s.is_server_error())
                || matches!(error, Error::Transport { .. })
        }
        Retry::NotSent => throttled || matches!(error, Error::Transport { sent: false, .. }),
    }
}

/// Doubling from 200 ms up to 5 s.
fn pause(failures: usize) -> Duration {
    FIRST_PAUSE
        .saturating_mul(1 << failures.min(8))
        .min(MAX_PAUSE)
}

/// An empty body reads as JSON `null`, so `()` and `Option<T>` decode it.
fn decode<T: DeserializeOwned>(method: &Method, path: &str, bytes: &[u8]) -> Result<T, Error> {
    let bytes = match bytes.iter().all(u8::is_ascii_whitespace) {
        true => b"null".as_slice(),
        false => bytes,
    };
    serde_json::from_slice(bytes).map_err(|e| Error::Decode {
        method: method.clone(),
        path: path.to_owned(),
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_errors_carry_the_api_s_explanation() {
        let error = Error::Status {
            method: Method::POST,
            path: "/ips/v1/ip-blocks".into(),
            status: StatusCode::BAD_REQUEST,
            message: "Validation failed".into(),
            validation: vec!["location must be one of PHX, ASH".into()],
        };
        assert_eq!(
            error.to_string(),
            "PhoenixNAP API: POST /ips/v1/ip-blocks: 400 Bad Request: Validation failed \
             (location must be one of PHX, ASH)"
        );
        assert_eq!(error.kind(), ErrorKind::Api);
    }

    #[test]
    fn the_provider_error_reports_the_text_kind_and_source() {
        let forbidden = Error::Status {
            method: Method::GET,
            path: "/bmc/v1/servers".into(),
            status: StatusCode::FORBIDDEN,
            message: "Access denied".into(),
            validation: vec![],
        };
        let error = forbidden.clone().for_address("phoenixnap");
        assert_eq!(error.to_string(), format!("phoenixnap: {forbidden}"));
        assert_eq!(error.kind, ErrorKind::Forbidden);
        let source = std::error::Error::source(&error).expect("the client's error");
        assert_eq!(
            source.downcast_ref::<Error>().unwrap().status(),
            Some(StatusCode::FORBIDDEN)
        );
        let refused = Error::Transport {
            method: Method::GET,
            path: "/".into(),
            detail: "connection refused".into(),
            sent: false,
        };
        assert_eq!(refused.for_address("phoenixnap").kind, ErrorKind::Transport);
        assert_eq!(Error::token("401 invalid_client").kind(), ErrorKind::Auth);
    }

    #[test]
    fn creates_are_repeated_only_when_they_were_not_sent() {
        let server_error = Error::Status {
            method: Method::POST,
            path: "/".into(),
            status: StatusCode::BAD_GATEWAY,
            message: String::new(),
            validation: vec![],
        };
        assert!(may_retry(&server_error, Retry::Safe));
        assert!(!may_retry(&server_error, Retry::NotSent));
        let refused = Error::Transport {
            method: Method::POST,
            path: "/".into(),
            detail: String::new(),
            sent: false,
        };
        assert!(may_retry(&refused, Retry::NotSent));
    }

    #[test]
    fn pauses_double_up_to_five_seconds() {
        assert_eq!(pause(0), Duration::from_millis(200));
        assert_eq!(pause(1), Duration::from_millis(400));
        assert_eq!(pause(9), MAX_PAUSE);
    }
}
