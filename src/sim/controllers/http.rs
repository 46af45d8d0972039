//! The two JSON-over-HTTP clients the controllers use: one for the Kubernetes API, one for the
//! cloudscale API. Deliberately plain reqwest: the simulated controllers must not share a
//! client with skyplan's providers, so a misreading of the wire format on one side shows up
//! as a disagreement in the tests instead of being repeated on both.

use std::fmt;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Every call is short on a local simulator; a hung one must not stall a pass forever.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// A failed call: the HTTP status when the server answered, and what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub status: Option<u16>,
    pub message: String,
}

impl CallError {
    pub fn is_not_found(&self) -> bool {
        self.status == Some(404)
    }

    pub fn is_conflict(&self) -> bool {
        self.status == Some(409)
    }

    pub fn other(message: impl Into<String>) -> Self {
        CallError {
            status: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "HTTP {status}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CallError {}

pub type CallResult<T> = Result<T, CallError>;

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(CALL_TIMEOUT)
        .build()
        .expect("a client without custom TLS always builds")
}

/// Sends and decodes: a body that is empty (204, DELETE) comes back as `Value::Null`.
pub(super) async fn send(request: reqwest::RequestBuilder) -> CallResult<Value> {
    let response = request
        .send()
        .await
        .map_err(|error| CallError::other(error.to_string()))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|error| CallError::other(error.to_string()))?;
    if !status.is_success() {
        return Err(CallError {
            status: Some(status.as_u16()),
            message: error_message(status, &text),
        });
    }
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|error| CallError::other(format!("bad JSON: {error}")))
}

/// Kubernetes answers with a Status (`message`), cloudscale with `{"detail": …}` or field
/// errors; either way one line is enough for a log.
fn error_message(status: StatusCode, text: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let message = parsed.as_ref().and_then(|body| {
        body.get("message")
            .or_else(|| body.get("detail"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    message.unwrap_or_else(|| {
        let text = text.trim();
        if text.is_empty() {
            status.to_string()
        } else {
            text.chars().take(300).collect()
        }
    })
}

/// The Kubernetes API, as the CCM's client-go clients use it (JSON only).
#[derive(Clone)]
pub struct Kube {
    http: reqwest::Client,
    root: String,
}

pub const JSON_PATCH: &str = "application/json-patch+json";
pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const STRATEGIC_PATCH: &str = "application/strategic-merge-patch+json";

impl Kube {
    pub fn new(root: &str) -> Self {
        Kube {
            http: client(),
            root: root.trim_end_matches('/').to_owned(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }

    pub async fn get(&self, path: &str) -> CallResult<Value> {
        send(
            self.http
                .get(self.url(path))
                .header("Accept", "application/json"),
        )
        .await
    }

    /// The `items` of a list, following `metadata.continue` as client-go's pager does.
    pub async fn list(&self, path: &str) -> CallResult<Vec<Value>> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut request = self.http.get(self.url(path)).query(&[("limit", "500")]);
            if let Some(token) = &token {
                request = request.query(&[("continue", token)]);
            }
            let page = send(request.header("Accept", "application/json")).await?;
            if let Some(Value::Array(page_items)) = page.get("items") {
                items.extend(page_items.iter().cloned());
            }
            token = page["metadata"]["continue"]
                .as_str()
                .filter(|token| !token.is_empty())
                .map(str::to_owned);
            if token.is_none() {
                return Ok(items);
            }
        }
    }

    pub async fn put(&self, path: &str, body: &Value) -> CallResult<Value> {
        send(self.http.put(self.url(path)).json(body)).await
    }

    /// The controllers never create Kubernetes objects; the tests do.
    #[cfg(test)]
    pub async fn post(&self, path: &str, body: &Value) -> CallResult<Value> {
        send(self.http.post(self.url(path)).json(body)).await
    }

    pub async fn patch(&self, path: &str, content_type: &str, body: &Value) -> CallResult<Value> {
        let request = self
            .http
            .request(Method::PATCH, self.url(path))
            .header("Content-Type", content_type)
            .header("Accept", "application/json")
            .body(body.to_string());
        send(request).await
    }

    pub async fn delete(&self, path: &str) -> CallResult<()> {
        send(self.http.delete(self.url(path))).await.map(|_| ())
    }
}

/// The cloudscale API with its bearer token (cloudscale-go-sdk's calls).
#[derive(Clone)]
pub struct Cloud {
    http: reqwest::Client,
    base: String,
    token: String,
}

/// Never shows the token.
impl fmt::Debug for Cloud {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cloud").field("base", &self.base).finish()
    }
}

impl Cloud {
    /// `base` is `http://…/v1`.
    pub fn new(base: &str, token: &str) -> Self {
        Cloud {
            http: client(),
            base: base.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
        }
    }

    /// Paths are relative to `/v1` (`servers`); an href from a response is used as it is.
    fn url(&self, path: &str) -> String {
        if path.starts_with("http://") || path.starts_with("https://") {
            path.to_owned()
        } else {
            format!("{}/{}", self.base, path.trim_start_matches('/'))
        }
    }

    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .bearer_auth(&self.token)
    }

    pub async fn get(&self, path: &str) -> CallResult<Value> {
        send(self.request(Method::GET, path)).await
    }

    pub async fn list(&self, path: &str) -> CallResult<Vec<Value>> {
        match self.get(path).await? {
            Value::Array(items) => Ok(items),
            other => Err(CallError::other(format!(
                "expected a list from {path}, got {other}"
            ))),
        }
    }

    pub async fn post(&self, path: &str, body: &Value) -> CallResult<Value> {
        send(self.request(Method::POST, path).json(body)).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> CallResult<()> {
        send(self.request(Method::PATCH, path).json(body))
            .await
            .map(|_| ())
    }

    pub async fn delete(&self, path: &str) -> CallResult<()> {
        send(self.request(Method::DELETE, path)).await.map(|_| ())
    }
}
