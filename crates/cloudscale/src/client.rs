//! The HTTP client for the cloudscale API v1: Bearer auth, JSON, one error type, retries with
//! exponential backoff for the failures that are safe to retry, and at most
//! `max-concurrent-requests` requests in flight, fewer while the API answers 429 (`limiter`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::Rng;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::limiter::Limiter;
use crate::spec::DEFAULT_MAX_CONCURRENT_REQUESTS;
use skyplan_core::provider::http::{reqwest_kind, status_kind, with_causes, USER_AGENT};
use skyplan_core::provider::ErrorKind;

pub const DEFAULT_BASE_URL: &str = "https://api.cloudscale.ch/v1";

/// The cloudscale tools read the first, the cloudscale CCM the second.
const TOKEN_VARIABLES: [&str; 2] = ["CLOUDSCALE_API_TOKEN", "CLOUDSCALE_ACCESS_TOKEN"];

pub use skyplan_core::model::Secret;

/// The token from `CLOUDSCALE_API_TOKEN`, else `CLOUDSCALE_ACCESS_TOKEN`.
pub fn token_from_env() -> Result<Secret, Error> {
    token_from(|name| std::env::var(name).ok())
}

fn token_from(lookup: impl Fn(&str) -> Option<String>) -> Result<Secret, Error> {
    TOKEN_VARIABLES
        .iter()
        .filter_map(|name| lookup(name))
        .find(|value| !value.trim().is_empty())
        .map(Secret::new)
        .ok_or(Error::MissingToken)
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no cloudscale API token: set CLOUDSCALE_API_TOKEN or CLOUDSCALE_ACCESS_TOKEN")]
    MissingToken,
    #[error("could not build the cloudscale API client")]
    Build(#[source] reqwest::Error),
    /// The API answered with an error status; `detail` is the API's explanation.
    #[error("cloudscale API: {method} {path}: {status}: {detail}")]
    Status {
        method: Method,
        path: String,
        status: StatusCode,
        detail: String,
    },
    #[error("cloudscale API: {method} {path}: {}", with_causes(.source))]
    Transport {
        method: Method,
        path: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("cloudscale API: {method} {path}: could not encode the request body: {source}")]
    Encode {
        method: Method,
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("cloudscale API: {method} {path}: unexpected response body: {source}")]
    Decode {
        method: Method,
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("load balancer {uuid} is still `{status}` after {waited:?}")]
    NotRunning {
        uuid: String,
        status: String,
        waited: Duration,
    },
    #[error("no UUID known for {0}; the live state may have changed since the plan was made")]
    UnknownObject(String),
}

impl Error {
    /// What kind of failure this is, for the provider error that reports it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::MissingToken => ErrorKind::Auth,
            Error::Build(_) | Error::Encode { .. } => ErrorKind::Internal,
            Error::Status { status, .. } => status_kind(status.as_u16()),
            Error::Transport { source, .. } => reqwest_kind(source),
            Error::Decode { .. } | Error::NotRunning { .. } => ErrorKind::Api,
            // The plan named an object the cloud no longer shows it under.
            Error::UnknownObject(_) => ErrorKind::Conflict,
        }
    }

    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Status { status, .. } if *status == StatusCode::NOT_FOUND)
    }

    /// Whether the request may have been carried out although it failed: a server error or a
    /// connection lost after the request was sent. A create that failed this way must look
    /// for what it may have created before it tries again.
    pub fn is_uncertain(&self) -> bool {
        match self {
            Error::Status { status, .. } => status.is_server_error(),
            Error::Transport { source, .. } => !source.is_connect() && !source.is_builder(),
            _ => false,
        }
    }
}

/// Exponential backoff: `first`, doubling up to `max`, each pause shortened by a random part
/// of up to half, so that clients that failed together do not come back together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub max: Duration,
}

impl Backoff {
    /// The pause after failure number `failure` (0-based).
    pub fn delay(&self, failure: u32) -> Duration {
        let full = self
            .first
            .saturating_mul(2u32.saturating_pow(failure))
            .min(self.max);
        full.mul_f64(rand::rng().random_range(0.5..=1.0))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub backoff: Backoff,
    /// Attempts in all, the first included.
    pub attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            backoff: Backoff {
                first: Duration::from_millis(200),
                max: Duration::from_secs(5),
            },
            attempts: 6,
        }
    }
}

/// How long to poll a load balancer until it is `running`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitPolicy {
    pub backoff: Backoff,
    pub timeout: Duration,
}

impl Default for WaitPolicy {
    fn default() -> WaitPolicy {
        WaitPolicy {
            backoff: Backoff {
                first: Duration::from_millis(100),
                max: Duration::from_secs(5),
            },
            timeout: Duration::from_secs(600),
        }
    }
}

/// Attempts of one request the API answers 429, the first included. They do not use up the
/// retries of `RetryPolicy`: a throttled client waits as told and slows down, and gives up
/// only when the API keeps refusing for about as long as a request may take.
const THROTTLED_ATTEMPTS: u32 = 12;

/// The longest `Retry-After` honoured: a larger one (or a date far ahead) waits this long.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

#[derive(Debug)]
pub struct CloudscaleClient {
    http: reqwest::Client,
    base_url: String,
    token: Secret,
    request_timeout: Duration,
    retry: RetryPolicy,
    lb_wait: WaitPolicy,
    requests: AtomicU64,
    limiter: Limiter,
}

/// A failed attempt, with the server's `Retry-After` when it sent one.
struct Failure {
    error: Error,
    retry_after: Option<Duration>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure {
            error,
            retry_after: None,
        }
    }
}

impl CloudscaleClient {
    /// A client for the API at `base_url` (e.g. [`DEFAULT_BASE_URL`]).
    pub fn new(base_url: &str, token: Secret) -> Result<CloudscaleClient, Error> {
        let http = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(Error::Build)?;
        Ok(CloudscaleClient {
            http,
            base_url: base_url.trim_end_matches('/').to_string(),
            token,
            request_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            lb_wait: WaitPolicy::default(),
            requests: AtomicU64::new(0),
            limiter: Limiter::new(DEFAULT_MAX_CONCURRENT_REQUESTS),
        })
    }

    /// At most `max` requests in flight (`[provider.cloudscale] max-concurrent-requests`).
    pub fn with_max_concurrent_requests(mut self, max: usize) -> CloudscaleClient {
        self.limiter = Limiter::new(max);
        self
    }

    /// The configured most requests in flight: callers that fan out (refresh's member reads)
    /// prepare no more than this at once.
    pub fn max_concurrent_requests(&self) -> usize {
        self.limiter.max()
    }

    pub fn with_request_timeout(mut self, timeout: Duration) -> CloudscaleClient {
        self.request_timeout = timeout;
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> CloudscaleClient {
        self.retry = retry;
        self
    }

    pub fn with_lb_wait(mut self, lb_wait: WaitPolicy) -> CloudscaleClient {
        self.lb_wait = lb_wait;
        self
    }

    pub fn lb_wait(&self) -> WaitPolicy {
        self.lb_wait
    }

    /// HTTP requests sent so far, retries included.
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        let body = self.request(Method::GET, path, None).await?;
        decode(Method::GET, path, &body)
    }

    pub async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, Error> {
        let request = encode(Method::POST, path, body)?;
        let response = self.request(Method::POST, path, Some(request)).await?;
        decode(Method::POST, path, &response)
    }

    /// PATCH; the API answers 204 without a body.
    pub async fn patch<B: Serialize>(&self, path: &str, body: &B) -> Result<(), Error> {
        let request = encode(Method::PATCH, path, body)?;
        self.request(Method::PATCH, path, Some(request)).await?;
        Ok(())
    }

    pub async fn delete(&self, path: &str) -> Result<(), Error> {
        self.request(Method::DELETE, path, None).await?;
        Ok(())
    }

    /// Sends the request when the limiter allows, retrying what is safe to retry; returns the
    /// success body. A 429 halves the requests in flight and waits as long as `Retry-After`
    /// says before the request is sent again.
    async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<bytes::Bytes, Error> {
        let mut failures = 0;
        let mut throttled = 0;
        loop {
            let permit = self.limiter.acquire().await;
            let failure = match self.attempt(&method, path, body.clone()).await {
                Ok(body) => {
                    permit.succeeded();
                    return Ok(body);
                }
                Err(failure) => failure,
            };
            let pause = if is_throttled(&failure.error) {
                permit.throttled();
                throttled += 1;
                if throttled >= THROTTLED_ATTEMPTS {
                    return Err(failure.error);
                }
                let backoff = self.retry.backoff.delay(throttled - 1);
                failure
                    .retry_after
                    .map_or(backoff, |after| after.min(MAX_RETRY_AFTER))
            } else {
                if matches!(failure.error, Error::Status { .. }) {
                    // Answered: the API keeps up with this many requests.
                    permit.succeeded();
                } else {
                    drop(permit);
                }
                if failures + 1 >= self.retry.attempts || !is_retryable(&method, &failure.error) {
                    return Err(failure.error);
                }
                failures += 1;
                self.retry.backoff.delay(failures - 1)
            };
            tracing::debug!(%method, path, ?pause, "cloudscale API: retrying: {}", failure.error);
            tokio::time::sleep(pause).await;
        }
    }

    async fn attempt(
        &self,
        method: &Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<bytes::Bytes, Failure> {
        let transport = |source| Error::Transport {
            method: method.clone(),
            path: path.to_string(),
            source,
        };
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base_url))
            .bearer_auth(self.token.expose())
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.request_timeout);
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
        let response = request.send().await.map_err(transport)?;
        let status = response.status();
        tracing::debug!(%method, path, status = status.as_u16(), "cloudscale API request");
        let retry_after = retry_after(response.headers());
        let body = response.bytes().await.map_err(transport)?;
        if status.is_success() {
            return Ok(body);
        }
        Err(Failure {
            error: Error::Status {
                method: method.clone(),
                path: path.to_string(),
                status,
                detail: error_detail(&body),
            },
            retry_after,
        })
    }
}

fn is_throttled(error: &Error) -> bool {
    matches!(error, Error::Status { status, .. } if *status == StatusCode::TOO_MANY_REQUESTS)
}

/// `Retry-After` in seconds, as the cloudscale API (Django REST framework) sends it; the
/// HTTP-date form is not used by it and falls back to the backoff.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse().ok().map(Duration::from_secs)
}

/// Whether a failed request may be sent again. A POST that reached the server may have created
/// the object even when the answer was an error or never came, so it is repeated only when
/// the server refused it (429) or the connection was never made.
fn is_retryable(method: &Method, error: &Error) -> bool {
    let idempotent = *method != Method::POST;
    match error {
        Error::Status { status, .. } => {
            *status == StatusCode::TOO_MANY_REQUESTS || (idempotent && status.is_server_error())
        }
        Error::Transport { source, .. } => {
            source.is_connect() || (idempotent && !source.is_builder())
        }
        _ => false,
    }
}

/// The API's `detail`, else the body as text (validation errors map fields to messages).
fn error_detail(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct ErrorBody {
        detail: String,
    }
    if let Ok(ErrorBody { detail }) = serde_json::from_slice(body) {
        return detail;
    }
    let text = String::from_utf8_lossy(body);
    match text.trim() {
        "" => "(no detail)".to_string(),
        text => text.chars().take(500).collect(),
    }
}

fn encode<B: Serialize>(method: Method, path: &str, body: &B) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(body).map_err(|source| Error::Encode {
        method,
        path: path.to_string(),
        source,
    })
}

fn decode<T: DeserializeOwned>(method: Method, path: &str, body: &[u8]) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|source| Error::Decode {
        method,
        path: path.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;
    use std::sync::Arc;

    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::get;
    use axum::{Json, Router};
    use serde_json::{json, Value};

    use super::*;

    const TOKEN: &str = "tok-1234567890";

    /// Serves `app` on a free local port; returns the base URL.
    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{address}/v1")
    }

    fn quick_client(base_url: &str) -> CloudscaleClient {
        let quick = RetryPolicy {
            backoff: Backoff {
                first: Duration::from_millis(1),
                max: Duration::from_millis(4),
            },
            attempts: 6,
        };
        CloudscaleClient::new(base_url, Secret::new(TOKEN))
            .unwrap()
            .with_retry(quick)
    }

    /// A route that fails with `failure` for the first `failures` calls, then answers `{"ok":
    /// true}`; also counts the calls.
    fn flaky(failures: u32, failure: StatusCode) -> (Router, Arc<AtomicU32>) {
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let handler = move || {
            let counter = counter.clone();
            async move {
                if counter.fetch_add(1, Ordering::SeqCst) < failures {
                    (failure, Json(json!({"detail": "try later"})))
                } else {
                    (StatusCode::OK, Json(json!({"ok": true})))
                }
            }
        };
        let app = Router::new().route("/v1/things", get(handler.clone()).post(handler));
        (app, calls)
    }

    #[tokio::test]
    async fn rate_limited_get_is_retried_until_it_succeeds() {
        let (app, calls) = flaky(2, StatusCode::TOO_MANY_REQUESTS);
        let client = quick_client(&serve(app).await);
        let body: Value = client.get("/things").await.unwrap();
        assert_eq!(body, json!({"ok": true}));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(client.request_count(), 3);
    }

    #[tokio::test]
    async fn a_429_waits_as_long_as_retry_after_says() {
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let handler = move || {
            let counter = counter.clone();
            async move {
                if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                    let headers = [(reqwest::header::RETRY_AFTER, "1")];
                    (StatusCode::TOO_MANY_REQUESTS, headers, Json(json!({})))
                } else {
                    let headers = [(reqwest::header::CACHE_CONTROL, "no-store")];
                    (StatusCode::OK, headers, Json(json!({"ok": true})))
                }
            }
        };
        let client = quick_client(&serve(Router::new().route("/v1/things", get(handler))).await);
        let start = std::time::Instant::now();
        let _: Value = client.get("/things").await.unwrap();
        assert!(
            start.elapsed() >= Duration::from_millis(950),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn more_429s_than_retries_slow_the_client_down_instead_of_failing_it() {
        let (app, calls) = flaky(8, StatusCode::TOO_MANY_REQUESTS);
        let client = quick_client(&serve(app).await);
        let _: Value = client.get("/things").await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 9);
        let (app, calls) = flaky(u32::MAX, StatusCode::TOO_MANY_REQUESTS);
        let client = quick_client(&serve(app).await);
        let error = client.get::<Value>("/things").await.unwrap_err();
        assert!(matches!(error, Error::Status { status, .. } if status == 429));
        assert_eq!(calls.load(Ordering::SeqCst), THROTTLED_ATTEMPTS);
    }

    #[tokio::test]
    async fn requests_in_flight_stay_within_the_configured_most() {
        let in_flight = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        let (now, peak) = (in_flight.clone(), most.clone());
        let handler = move || {
            let (now, peak) = (now.clone(), peak.clone());
            async move {
                let current = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(current, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                Json(json!({"ok": true}))
            }
        };
        let app = Router::new().route("/v1/things", get(handler));
        let client = quick_client(&serve(app).await).with_max_concurrent_requests(3);
        let reads = (0..12).map(|_| client.get::<Value>("/things"));
        for result in futures::future::join_all(reads).await {
            result.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 3);
        assert_eq!(client.max_concurrent_requests(), 3);
    }

    #[tokio::test]
    async fn rate_limited_post_is_retried() {
        let (app, calls) = flaky(2, StatusCode::TOO_MANY_REQUESTS);
        let client = quick_client(&serve(app).await);
        let _: Value = client.post("/things", &json!({})).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn server_error_is_retried_for_get_but_not_for_post() {
        let (app, calls) = flaky(1, StatusCode::SERVICE_UNAVAILABLE);
        let client = quick_client(&serve(app).await);
        let error = client
            .post::<_, Value>("/things", &json!({}))
            .await
            .unwrap_err();
        assert!(matches!(error, Error::Status { status, .. } if status == 503));
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let (app, calls) = flaky(1, StatusCode::SERVICE_UNAVAILABLE);
        let client = quick_client(&serve(app).await);
        let _: Value = client.get("/things").await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn retries_stop_after_the_last_attempt() {
        let (app, calls) = flaky(u32::MAX, StatusCode::BAD_GATEWAY);
        let client = quick_client(&serve(app).await);
        let error = client.get::<Value>("/things").await.unwrap_err();
        assert!(matches!(error, Error::Status { status, .. } if status == 502));
        assert_eq!(calls.load(Ordering::SeqCst), 6);
    }

    #[tokio::test]
    async fn error_names_method_path_status_and_detail() {
        let app = Router::new().route(
            "/v1/load-balancers/pools",
            axum::routing::post(|| async {
                (
                    StatusCode::BAD_REQUEST,
                    Json(json!({"detail": "Invalid algorithm."})),
                )
            }),
        );
        let client = quick_client(&serve(app).await);
        let error = client
            .post::<_, Value>("/load-balancers/pools", &json!({"algorithm": "x"}))
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "cloudscale API: POST /load-balancers/pools: 400 Bad Request: Invalid algorithm."
        );
        assert_eq!(error.kind(), ErrorKind::Api);
        assert_eq!(client.request_count(), 1);
    }

    #[test]
    fn detail_falls_back_to_the_body_text() {
        assert_eq!(error_detail(br#"{"detail":"gone"}"#), "gone");
        assert_eq!(
            error_detail(br#"{"name":["required"]}"#),
            r#"{"name":["required"]}"#
        );
        assert_eq!(error_detail(b"  "), "(no detail)");
    }

    #[tokio::test]
    async fn requests_carry_the_bearer_token() {
        let app = Router::new().route(
            "/v1/whoami",
            get(|headers: HeaderMap| async move {
                let expected = format!("Bearer {TOKEN}");
                match headers.get("authorization") {
                    Some(value) if value == expected.as_str() => (StatusCode::OK, Json(json!([]))),
                    _ => (
                        StatusCode::UNAUTHORIZED,
                        Json(json!({"detail": "Invalid token."})),
                    ),
                }
            }),
        );
        let base_url = serve(app).await;
        let _: Value = quick_client(&base_url).get("/whoami").await.unwrap();
        let stranger = CloudscaleClient::new(&base_url, Secret::new("other")).unwrap();
        let error = stranger.get::<Value>("/whoami").await.unwrap_err();
        assert!(matches!(error, Error::Status { status, .. } if status == 401));
        assert_eq!(error.kind(), ErrorKind::Auth);
    }

    #[tokio::test]
    async fn refused_connection_is_retried_even_for_post() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let client = quick_client(&format!("http://{address}/v1"));
        let error = client
            .post::<_, Value>("/things", &json!({}))
            .await
            .unwrap_err();
        assert!(matches!(error, Error::Transport { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("cloudscale API: POST /things: error sending request"),
            "{error}"
        );
        assert!(error.to_string().contains("refused"), "{error}");
        assert_eq!(error.kind(), ErrorKind::Transport);
        assert_eq!(client.request_count(), 6);
    }

    /// A route whose first answer comes after 500 ms, the others at once.
    fn slow_first() -> (Router, Arc<AtomicU32>) {
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let handler = move || {
            let counter = counter.clone();
            async move {
                if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Json(json!({"ok": true}))
            }
        };
        let app = Router::new().route("/v1/things", get(handler.clone()).post(handler));
        (app, calls)
    }

    #[tokio::test]
    async fn timed_out_get_is_retried_but_timed_out_post_is_not() {
        let (app, calls) = slow_first();
        let client =
            quick_client(&serve(app).await).with_request_timeout(Duration::from_millis(100));
        let _: Value = client.get("/things").await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);

        let (app, calls) = slow_first();
        let client =
            quick_client(&serve(app).await).with_request_timeout(Duration::from_millis(100));
        let error = client
            .post::<_, Value>("/things", &json!({}))
            .await
            .unwrap_err();
        assert!(matches!(error, Error::Transport { .. }), "{error:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn token_comes_from_either_variable() {
        let only = |name: &'static str| {
            move |asked: &str| (asked == name).then(|| "secret-value".to_string())
        };
        assert_eq!(
            token_from(only("CLOUDSCALE_API_TOKEN")).unwrap().expose(),
            "secret-value"
        );
        assert_eq!(
            token_from(only("CLOUDSCALE_ACCESS_TOKEN"))
                .unwrap()
                .expose(),
            "secret-value"
        );
        assert!(matches!(token_from(|_| None), Err(Error::MissingToken)));
        assert_eq!(Error::MissingToken.kind(), ErrorKind::Auth);
        assert!(matches!(
            token_from(|_| Some(String::new())),
            Err(Error::MissingToken)
        ));
    }

    #[test]
    fn token_is_never_printed() {
        let client = CloudscaleClient::new(DEFAULT_BASE_URL, Secret::new(TOKEN)).unwrap();
        assert!(!format!("{client:?}").contains(TOKEN));
        assert_eq!(
            format!("{} {:?}", Secret::new(TOKEN), Secret::new(TOKEN)),
            "*** ***"
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let backoff = Backoff {
            first: Duration::from_millis(200),
            max: Duration::from_secs(5),
        };
        for (failure, full_ms) in [
            (0, 200),
            (1, 400),
            (2, 800),
            (4, 3200),
            (5, 5000),
            (30, 5000),
        ] {
            let delay = backoff.delay(failure);
            let full = Duration::from_millis(full_ms);
            assert!(delay <= full && delay >= full / 2, "{failure}: {delay:?}");
        }
    }
}
