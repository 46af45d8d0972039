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
        .map_err(|error| CallError::other(chain(&error)))?;
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

/// The error with its causes: reqwest's own line names the URL only, the TLS or connection
/// cause is in the chain.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
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

/// The Kubernetes API, as the CCM's client-go clients use it (JSON only): the in-process
/// simulator over plain HTTP, or a real server with its CA and credentials
/// ([`KubeEndpoint`]), seen through the endpoint's [`Scope`].
#[derive(Clone)]
pub struct Kube {
    http: reqwest::Client,
    root: String,
    token: Option<String>,
    scope: Scope,
}

/// Never shows the token.
impl fmt::Debug for Kube {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kube").field("root", &self.root).finish()
    }
}

pub const JSON_PATCH: &str = "application/json-patch+json";
pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const STRATEGIC_PATCH: &str = "application/strategic-merge-patch+json";

/// Where a Kubernetes API is and how to be let in. A real CCM runs in the cluster with its
/// service account's token and the cluster's CA; the kubeconfig gives the same
/// (`kubeconfig.rs`).
#[derive(Clone, Default)]
pub struct KubeEndpoint {
    /// `http://127.0.0.1:PORT` (the simulator) or `https://…` (a real server).
    pub server: String,
    /// The cluster's CA: the only root trusted, as client-go trusts only it.
    pub ca: Option<reqwest::Certificate>,
    pub insecure_skip_tls_verify: bool,
    pub token: Option<String>,
    /// A client certificate and its key.
    pub identity: Option<reqwest::Identity>,
    pub scope: Scope,
}

/// Never shows the token or the key.
impl fmt::Debug for KubeEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeEndpoint")
            .field("server", &self.server)
            .field("ca", &self.ca.is_some())
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("identity", &self.identity.is_some())
            .field("scope", &self.scope)
            .finish()
    }
}

impl KubeEndpoint {
    /// The in-process simulator: plain HTTP, no credentials, the whole cluster.
    pub fn plain(server: &str) -> Self {
        KubeEndpoint {
            server: server.to_owned(),
            ..KubeEndpoint::default()
        }
    }
}

/// What of a cluster the controllers see. A real CCM sees the whole cluster; on an API server
/// shared with other tests (each with its own namespace and labelled nodes) a controller must
/// not finalize their Services nor delete their Nodes, so it may be held to one namespace's
/// Services and to the Nodes matching a label selector.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub namespace: Option<String>,
    /// A label selector as the API takes it (`key=value,…`).
    pub node_selector: Option<String>,
}

impl Kube {
    /// The in-process simulator at `root`.
    pub fn new(root: &str) -> Self {
        Kube::connect(&KubeEndpoint::plain(root)).expect("a plain HTTP client always builds")
    }

    pub fn connect(endpoint: &KubeEndpoint) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder().timeout(CALL_TIMEOUT);
        if let Some(ca) = &endpoint.ca {
            builder = builder
                .tls_built_in_root_certs(false)
                .add_root_certificate(ca.clone());
        }
        if let Some(identity) = &endpoint.identity {
            builder = builder.identity(identity.clone());
        }
        let http = builder
            .danger_accept_invalid_certs(endpoint.insecure_skip_tls_verify)
            .build()
            .map_err(|e| format!("the Kubernetes client: {e}"))?;
        Ok(Kube {
            http,
            root: endpoint.server.trim_end_matches('/').to_owned(),
            token: endpoint.token.clone(),
            scope: endpoint.scope.clone(),
        })
    }

    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, self.url(path));
        match &self.token {
            // bearer_auth marks the header sensitive: it never reaches a Debug or a log.
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// The Nodes in scope.
    pub async fn list_nodes(&self) -> CallResult<Vec<Value>> {
        match &self.scope.node_selector {
            Some(selector) => self.list_query("/api/v1/nodes", Some(selector)).await,
            None => self.list("/api/v1/nodes").await,
        }
    }

    /// The Services in scope.
    pub async fn list_services(&self) -> CallResult<Vec<Value>> {
        match &self.scope.namespace {
            Some(namespace) => {
                self.list(&format!("/api/v1/namespaces/{namespace}/services"))
                    .await
            }
            None => self.list("/api/v1/services").await,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }

    pub async fn get(&self, path: &str) -> CallResult<Value> {
        send(
            self.request(Method::GET, path)
                .header("Accept", "application/json"),
        )
        .await
    }

    /// The `items` of a list, following `metadata.continue` as client-go's pager does.
    pub async fn list(&self, path: &str) -> CallResult<Vec<Value>> {
        self.list_query(path, None).await
    }

    async fn list_query(&self, path: &str, selector: Option<&str>) -> CallResult<Vec<Value>> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut request = self.request(Method::GET, path).query(&[("limit", "500")]);
            if let Some(selector) = selector {
                request = request.query(&[("labelSelector", selector)]);
            }
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
        send(self.request(Method::PUT, path).json(body)).await
    }

    /// The controllers never create Kubernetes objects; the tests do.
    #[cfg(test)]
    pub async fn post(&self, path: &str, body: &Value) -> CallResult<Value> {
        send(self.request(Method::POST, path).json(body)).await
    }

    pub async fn patch(&self, path: &str, content_type: &str, body: &Value) -> CallResult<Value> {
        let request = self
            .request(Method::PATCH, path)
            .header("Content-Type", content_type)
            .header("Accept", "application/json")
            .body(body.to_string());
        send(request).await
    }

    pub async fn delete(&self, path: &str) -> CallResult<()> {
        send(self.request(Method::DELETE, path)).await.map(|_| ())
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
