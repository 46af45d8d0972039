//! The CCM's PhoenixNAP client: four generated SDK clients (ips, networks, tag-manager, bmc),
//! each with its own `clientcredentials` token source, as `cloud.go` builds them
//! (research/phoenixnap.md §1). Written apart from `provider/phoenixnap`: the wire format is
//! read twice, so a misreading shows up as a disagreement.
//!
//! The token source follows golang.org/x/oauth2 v0.6.0: HTTP Basic with url-escaped id and
//! secret first, the form fields if that is refused (and from then on), the token reused until
//! ten seconds before it expires. The secret and tokens never reach a log or a Debug output.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use reqwest::Method;
use serde_json::Value;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::super::http::{CallError, CallResult};

/// The token endpoint under the simulator's root (the real one is on auth.phoenixnap.com).
pub const TOKEN_PATH: &str = "/auth/realms/BMC/protocol/openid-connect/token";
/// `cloud.go`: the scopes the CCM asks for, space-joined.
pub const SCOPES: &str = "bmc bmc.read tags tags.read";
/// `cloud-provider-phoenixnap/<component version>`.
pub const USER_AGENT: &str = "cloud-provider-phoenixnap/v1.0.0";
/// x/oauth2's `expiryDelta`: a token this close to its expiry is renewed first.
const EXPIRY_DELTA: Duration = Duration::from_secs(10);
/// A local simulator answers in milliseconds; a hung call must not stall a pass forever.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The client credentials of the CCM's config.
#[derive(Clone)]
pub struct Credentials {
    pub client_id: String,
    pub client_secret: String,
}

/// Never shows the secret.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// How the token endpoint accepted the credentials (x/oauth2 `AuthStyle`, auto-detected).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthStyle {
    InHeader,
    InParams,
}

struct Token {
    access: String,
    /// `None`: the answer had no `expires_in`, so it never expires (x/oauth2).
    expires: Option<Instant>,
}

impl Token {
    fn valid(&self) -> bool {
        self.expires
            .is_none_or(|at| Instant::now() + EXPIRY_DELTA < at)
    }
}

#[derive(Default)]
struct Cache {
    token: Option<Token>,
    style: Option<AuthStyle>,
}

/// One `clientcredentials.Config.TokenSource`: a cached token, fetched again when stale.
pub struct TokenSource {
    http: reqwest::Client,
    url: String,
    credentials: Credentials,
    cache: Mutex<Cache>,
}

impl TokenSource {
    fn new(http: reqwest::Client, root: &str, credentials: Credentials) -> Self {
        TokenSource {
            http,
            url: format!("{root}{TOKEN_PATH}"),
            credentials,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The cached access token, or a new one.
    async fn token(&self) -> CallResult<String> {
        let mut cache = self.cache.lock().await;
        if let Some(token) = cache.token.as_ref().filter(|t| t.valid()) {
            return Ok(token.access.clone());
        }
        let (token, style) = match cache.style {
            Some(style) => (self.fetch(style).await?, style),
            None => match self.fetch(AuthStyle::InHeader).await {
                Ok(token) => (token, AuthStyle::InHeader),
                Err(_) => (self.fetch(AuthStyle::InParams).await?, AuthStyle::InParams),
            },
        };
        let access = token.access.clone();
        cache.style = Some(style);
        cache.token = Some(token);
        Ok(access)
    }

    async fn fetch(&self, style: AuthStyle) -> CallResult<Token> {
        let mut fields = vec![("grant_type", "client_credentials"), ("scope", SCOPES)];
        let mut request = self.http.post(&self.url);
        match style {
            AuthStyle::InHeader => {
                request = request.header("Authorization", basic_header(&self.credentials));
            }
            AuthStyle::InParams => {
                fields.push(("client_id", &self.credentials.client_id));
                fields.push(("client_secret", &self.credentials.client_secret));
            }
        }
        let response = request
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_body(&fields))
            .send()
            .await
            .map_err(|e| CallError::other(format!("oauth2: cannot fetch token: {e}")))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(CallError {
                status: Some(status.as_u16()),
                message: format!("oauth2: cannot fetch token: {status} Response: {text}"),
            });
        }
        parse_token(&text)
    }
}

/// x/oauth2 `internal/token.go`: `access_token` required, `expires_in` optional.
fn parse_token(text: &str) -> CallResult<Token> {
    let body: Value = serde_json::from_str(text)
        .map_err(|e| CallError::other(format!("oauth2: cannot parse json: {e}")))?;
    let access = body["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| CallError::other("oauth2: server response missing access_token"))?;
    let expires = body["expires_in"]
        .as_u64()
        .filter(|s| *s > 0)
        .map(|s| Instant::now() + Duration::from_secs(s));
    Ok(Token {
        access: access.to_owned(),
        expires,
    })
}

/// `Basic base64(QueryEscape(id):QueryEscape(secret))`, as x/oauth2 sends it.
fn basic_header(credentials: &Credentials) -> String {
    let pair = format!(
        "{}:{}",
        query_escape(&credentials.client_id),
        query_escape(&credentials.client_secret)
    );
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// `url.Values.Encode`: keys sorted, values query-escaped.
fn form_body(fields: &[(&str, &str)]) -> String {
    let mut fields = fields.to_vec();
    fields.sort_by_key(|(k, _)| *k);
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", query_escape(k), query_escape(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Go's `url.QueryEscape`: unreserved characters kept, space as `+`, the rest `%XX`.
fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// One generated API client (`ipapi`, `networkapi`, `tagapi`, `bmcapi`) with its token source.
#[derive(Clone)]
pub struct ApiClient {
    http: reqwest::Client,
    base: String,
    tokens: Arc<TokenSource>,
}

impl fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiClient")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl ApiClient {
    /// `path` is relative to the API's base (`/ip-blocks`), with its query if any.
    async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> CallResult<Value> {
        let token = self.tokens.token().await?;
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token)
            .header("Accept", "application/json")
            .header("User-Agent", USER_AGENT);
        if let Some(body) = body {
            request = request.json(body);
        }
        super::super::http::send(request).await
    }

    pub async fn get(&self, path: &str) -> CallResult<Value> {
        self.send(Method::GET, path, None).await
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
        self.send(Method::POST, path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: &Value) -> CallResult<Value> {
        self.send(Method::PUT, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> CallResult<Value> {
        self.send(Method::DELETE, path, None).await
    }
}

/// The four clients of one CCM.
#[derive(Debug, Clone)]
pub struct PnapApi {
    pub ips: ApiClient,
    pub networks: ApiClient,
    pub tags: ApiClient,
    pub bmc: ApiClient,
}

impl PnapApi {
    /// `root` is the simulator's `http://127.0.0.1:PORT` (the API bases and the token endpoint
    /// are under it).
    pub fn new(root: &str, credentials: &Credentials) -> Self {
        let root = root.trim_end_matches('/');
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .build()
            .expect("a client without custom TLS always builds");
        let api = |base: &str| ApiClient {
            http: http.clone(),
            base: format!("{root}{base}"),
            tokens: Arc::new(TokenSource::new(http.clone(), root, credentials.clone())),
        };
        PnapApi {
            ips: api("/ips/v1"),
            networks: api("/networks/v1"),
            tags: api("/tag-manager/v1"),
            bmc: api("/bmc/v1"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_is_sorted_and_escaped_as_go_does() {
        assert_eq!(
            form_body(&[("scope", SCOPES), ("grant_type", "client_credentials")]),
            "grant_type=client_credentials&scope=bmc+bmc.read+tags+tags.read"
        );
        assert_eq!(query_escape("a/b:c d~"), "a%2Fb%3Ac+d~");
    }

    #[test]
    fn basic_auth_escapes_id_and_secret_first() {
        let credentials = Credentials {
            client_id: "id:1".into(),
            client_secret: "s e".into(),
        };
        let expected = base64::engine::general_purpose::STANDARD.encode("id%3A1:s+e");
        assert_eq!(basic_header(&credentials), format!("Basic {expected}"));
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let credentials = Credentials {
            client_id: "id".into(),
            client_secret: "very-secret".into(),
        };
        assert!(!format!("{credentials:?}").contains("very-secret"));
        let api = PnapApi::new("http://127.0.0.1:1", &credentials);
        assert!(!format!("{api:?}").contains("very-secret"));
    }

    #[test]
    fn tokens_expire_ten_seconds_early_and_need_an_access_token() {
        let token = parse_token(r#"{"access_token":"t","expires_in":300}"#).unwrap();
        assert!(token.valid());
        let short = parse_token(r#"{"access_token":"t","expires_in":5}"#).unwrap();
        assert!(!short.valid());
        let forever = parse_token(r#"{"access_token":"t"}"#).unwrap();
        assert!(forever.valid());
        assert!(parse_token(r#"{"token_type":"Bearer"}"#).is_err());
    }
}
