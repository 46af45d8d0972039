//! HTTP for the tests: what a test sends to a simulator's API or reads from it, as an operator
//! with any HTTP client would. Sent with reqwest (the project's own client, so the tests need
//! nothing but Rust), one connection per request, no redirects followed, no proxy: each
//! request reaches the server as written and its answer comes back as it was sent.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

/// A request being built: `get(url)`, `request("PATCH", url)`, then headers and a body.
pub struct Request {
    method: String,
    url: String,
    builder: reqwest::RequestBuilder,
}

/// An answer: its status and its body, whatever the status.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    /// The body as JSON; `null` when it is empty.
    pub fn json(&self) -> Value {
        match self.body.trim() {
            "" => Value::Null,
            body => serde_json::from_str(body)
                .unwrap_or_else(|e| panic!("{e}: HTTP {} {body}", self.status)),
        }
    }
}

pub fn get(url: &str) -> Request {
    request("GET", url)
}

pub fn request(method: &str, url: &str) -> Request {
    let parsed = reqwest::Method::from_bytes(method.as_bytes())
        .unwrap_or_else(|e| panic!("method {method}: {e}"));
    Request {
        method: method.to_string(),
        url: url.to_string(),
        builder: client().request(parsed, url),
    }
}

impl Request {
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.builder = self.builder.header(name, value);
        self
    }

    /// `Authorization: Bearer <token>`.
    pub fn bearer(mut self, token: &str) -> Request {
        self.builder = self.builder.bearer_auth(token);
        self
    }

    /// HTTP Basic authentication.
    pub fn basic_auth(mut self, user: &str, password: &str) -> Request {
        self.builder = self.builder.basic_auth(user, Some(password));
        self
    }

    /// `body` sent as `content_type`.
    pub fn body(mut self, content_type: &str, body: impl Into<String>) -> Request {
        self.builder = self
            .builder
            .header("Content-Type", content_type)
            .body(body.into());
        self
    }

    /// A JSON body (`Content-Type: application/json`).
    pub fn json(self, body: &Value) -> Request {
        self.body("application/json", body.to_string())
    }

    /// A JSON merge patch (`Content-Type: application/merge-patch+json`), as
    /// `kubectl patch --type merge` sends it.
    pub fn merge_patch(self, patch: &Value) -> Request {
        self.body("application/merge-patch+json", patch.to_string())
    }

    /// Form fields, already encoded (`a=1&b=2`), as an HTML form posts them.
    pub fn form(self, fields: &str) -> Request {
        self.body("application/x-www-form-urlencoded", fields)
    }

    /// Sends the request; the answer whatever its status. Panics when no answer came (the
    /// server could not be reached or the connection broke).
    pub fn send(self) -> Response {
        let (method, url) = (self.method.clone(), self.url.clone());
        self.try_send()
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"))
    }

    /// Sends the request: the body of a 2xx answer; otherwise the status and body, or why no
    /// answer came.
    pub fn ok(self) -> Result<String, String> {
        let response = self.try_send()?;
        if (200..300).contains(&response.status) {
            Ok(response.body)
        } else {
            Err(format!("HTTP {}: {}", response.status, response.body))
        }
    }

    fn try_send(self) -> Result<Response, String> {
        let Request {
            method,
            url,
            builder,
        } = self;
        runtime().block_on(async move {
            let response = builder
                .send()
                .await
                .map_err(|e| format!("{method} {url}: {}", chain(&e)))?;
            let status = response.status().as_u16();
            let body = response
                .text()
                .await
                .map_err(|e| format!("{method} {url}: reading the body: {}", chain(&e)))?;
            Ok(Response { status, body })
        })
    }
}

/// An error with its causes, as `a: b: c`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(Duration::from_secs(120))
                .build()
                .expect("an HTTP client")
        })
        .clone()
}

/// One runtime for every test's requests (tests run on threads of their own and block on it).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the tests' HTTP")
    })
}
