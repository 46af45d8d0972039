//! The CloudStack API as cloudstack-go v2.19 (the CCM's client) calls it: GET with every
//! parameter in the query, signed (`url.Values.Encode()` sorted by name, `+` → `%20`, lower
//! case, HMAC-SHA1, Base64), answers unwrapped from `{"<command>response": …}`, async commands
//! polled with `queryAsyncJobResult` until the job ends. Written here, not borrowed from the
//! simulator's signature check or skyplan's client: a third reading of the same protocol.

use std::fmt;
use std::time::Duration;

use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha1::Sha1;

/// A local simulator answers in milliseconds; a hung call must not stall a pass forever.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// cloudstack-go's async timeout is 300 s; a simulated job ends well within this.
const JOB_LIMIT: Duration = Duration::from_secs(30);
const JOB_POLL: Duration = Duration::from_millis(10);

/// A refused call: `errorcode` (the HTTP status, or the failed job's code) and `errortext`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsError {
    pub code: Option<u16>,
    pub text: String,
}

impl CsError {
    fn other(text: impl Into<String>) -> Self {
        CsError {
            code: None,
            text: text.into(),
        }
    }
}

/// Worded as cloudstack-go words it, so a test reads the server's code and text.
impl fmt::Display for CsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(code) => write!(f, "CloudStack API error {code}: {}", self.text),
            None => f.write_str(&self.text),
        }
    }
}

pub type CsResult<T> = Result<T, CsError>;

/// Where the cloud is and the keys to sign with. Debug never shows the secret.
#[derive(Clone)]
pub struct CsApi {
    http: reqwest::Client,
    url: String,
    api_key: String,
    secret_key: String,
}

impl fmt::Debug for CsApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CsApi")
            .field("url", &self.url)
            .field("api_key", &self.api_key)
            .finish()
    }
}

impl CsApi {
    /// `url` is the endpoint, `http://…/client/api`.
    pub fn new(url: &str, api_key: &str, secret_key: &str) -> Self {
        CsApi {
            http: reqwest::Client::builder()
                .timeout(CALL_TIMEOUT)
                .build()
                .expect("a client without custom TLS always builds"),
            url: url.to_owned(),
            api_key: api_key.to_owned(),
            secret_key: secret_key.to_owned(),
        }
    }

    /// A synchronous command: the object under its response key.
    pub async fn call(&self, command: &str, params: &[(&str, String)]) -> CsResult<Value> {
        let mut pairs: Vec<(String, String)> = vec![
            ("command".into(), command.into()),
            ("response".into(), "json".into()),
            ("apiKey".into(), self.api_key.clone()),
        ];
        pairs.extend(params.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
        pairs.sort();
        let query = encode(&pairs);
        let signature = sign(&query, &self.secret_key);
        let url = format!("{}?{query}&signature={}", self.url, go_escape(&signature));
        let response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| CsError::other(e.to_string()))?;
        let status = response.status().as_u16();
        let body: Value = response
            .json()
            .await
            .map_err(|e| CsError::other(format!("bad JSON from {command}: {e}")))?;
        let inner = body
            .as_object()
            .and_then(|o| o.values().next())
            .cloned()
            .unwrap_or(Value::Null);
        if status != 200 || inner.get("errorcode").is_some() {
            return Err(error_of(&inner, Some(status)));
        }
        Ok(inner)
    }

    /// An async command, waited for: the job's result, or the failed job's error.
    pub async fn run(&self, command: &str, params: &[(&str, String)]) -> CsResult<Value> {
        let started = self.call(command, params).await?;
        let job_id = started["jobid"]
            .as_str()
            .ok_or_else(|| CsError::other(format!("{command} started no job")))?
            .to_owned();
        let deadline = tokio::time::Instant::now() + JOB_LIMIT;
        while tokio::time::Instant::now() < deadline {
            let job = self
                .call("queryAsyncJobResult", &[("jobid", job_id.clone())])
                .await?;
            match job["jobstatus"].as_i64() {
                Some(1) => return Ok(job["jobresult"].clone()),
                Some(2) => return Err(error_of(&job["jobresult"], None)),
                _ => tokio::time::sleep(JOB_POLL).await,
            }
        }
        Err(CsError::other(format!(
            "timed out waiting for async job {job_id} ({command})"
        )))
    }

    /// A list command's items under `key` (no paging: the CCM sends none, research §1.5).
    pub async fn list(
        &self,
        command: &str,
        key: &str,
        params: &[(&str, String)],
    ) -> CsResult<Vec<Value>> {
        let answer = self.call(command, params).await?;
        Ok(answer[key].as_array().cloned().unwrap_or_default())
    }
}

fn error_of(body: &Value, status: Option<u16>) -> CsError {
    let code = body["errorcode"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .or(status);
    let text = body["errortext"].as_str().unwrap_or("no error text");
    CsError {
        code,
        text: text.to_owned(),
    }
}

/// Go's `url.Values.Encode` of sorted pairs.
fn encode(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", go_escape(k), go_escape(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `url.QueryEscape` with cloudstack-go's `+` → `%20`: only `A-Za-z0-9-_.~` stay as they are.
fn go_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// HMAC-SHA1 over the lower-cased query, Base64.
fn sign(query: &str, secret: &str) -> String {
    let mut mac = Hmac::<Sha1>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(query.to_lowercase().as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_go_with_spaces_as_percent_20() {
        assert_eq!(go_escape("a b+c/d,e~f"), "a%20b%2Bc%2Fd%2Ce~f");
    }

    /// Vector 2 of research §4.3 (cs and the server agree on it).
    #[test]
    fn signs_like_the_server_verifies() {
        let mut pairs: Vec<(String, String)> = [
            ("command", "updateLoadBalancerRule"),
            ("id", "5c1f0a3e-0000-4000-8000-000000000001"),
            ("algorithm", "source"),
            ("protocol", "tcp-proxy"),
            ("cidrlist", "10.0.0.0/8,192.168.1.0/24"),
            ("response", "json"),
            ("apiKey", "APIKEY123"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        pairs.sort();
        assert_eq!(
            sign(&encode(&pairs), "SECRETkey456"),
            "Hysktc0syEudHDO7esXMlndEv3w="
        );
    }
}
