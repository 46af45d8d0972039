//! OAuth2 client credentials (RFC 6749 §4.4) at PhoenixNAP's Keycloak: the token is cached and
//! fetched again shortly before it expires, or at once when the API says it is no longer good
//! (401). Neither the secret nor the token is ever shown.

use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Mutex;

use super::credentials::Credentials;
use super::Error;
use skyplan_core::model::Secret;
use skyplan_core::provider::http::with_causes;

/// The scopes the CCM asks for (`phoenixnap/cloud.go`): full and read access to the BMC, IP and
/// network APIs (`bmc`) and the tag manager (`tags`).
pub const SCOPES: &str = "bmc bmc.read tags tags.read";

/// A token is replaced this long before it expires, so that no request carries one that runs
/// out on the way (golang.org/x/oauth2 uses 10 s; a slow apply step can take longer).
const EARLY: Duration = Duration::from_secs(60);

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

#[derive(Deserialize, Default)]
struct TokenError {
    #[serde(default)]
    error: String,
    #[serde(default)]
    error_description: String,
}

struct Cached {
    token: Secret,
    renew_at: Instant,
}

pub struct TokenSource {
    http: reqwest::Client,
    url: String,
    credentials: Credentials,
    cached: Mutex<Option<Cached>>,
}

impl TokenSource {
    pub fn new(http: reqwest::Client, url: String, credentials: Credentials) -> Self {
        TokenSource {
            http,
            url,
            credentials,
            cached: Mutex::new(None),
        }
    }

    /// The cached token, or a new one when there is none or it is about to expire.
    pub async fn token(&self) -> Result<Secret, Error> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| Instant::now() < c.renew_at) {
            return Ok(c.token.clone());
        }
        let fresh = self.fetch().await?;
        let token = fresh.token.clone();
        *cached = Some(fresh);
        Ok(token)
    }

    /// Forgets `rejected` (the API answered 401 to it), so the next call fetches a new one.
    pub async fn reject(&self, rejected: &Secret) {
        let mut cached = self.cached.lock().await;
        if cached.as_ref().is_some_and(|c| &c.token == rejected) {
            *cached = None;
        }
    }

    /// Credentials by HTTP Basic, as golang.org/x/oauth2 tries first and Keycloak accepts.
    async fn fetch(&self) -> Result<Cached, Error> {
        let started = Instant::now();
        let response = self
            .http
            .post(&self.url)
            .basic_auth(
                &self.credentials.client_id,
                Some(self.credentials.client_secret.expose()),
            )
            .form(&[("grant_type", "client_credentials"), ("scope", SCOPES)])
            .send()
            .await
            .map_err(|e| Error::token(with_causes(&e)))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| Error::token(with_causes(&e)))?;
        if !status.is_success() {
            let error: TokenError = serde_json::from_slice(&body).unwrap_or_default();
            let detail = match (error.error.is_empty(), error.error_description.is_empty()) {
                (_, false) => error.error_description,
                (false, true) => error.error,
                (true, true) => "no explanation".into(),
            };
            return Err(Error::token(format!(
                "{status}: {detail} (check PNAP_CLIENT_ID and PNAP_CLIENT_SECRET)"
            )));
        }
        let token: TokenResponse = serde_json::from_slice(&body)
            .map_err(|e| Error::token(format!("unexpected token response: {e}")))?;
        let lifetime = Duration::from_secs(token.expires_in.unwrap_or(300));
        Ok(Cached {
            token: Secret::new(token.access_token),
            renew_at: started + lifetime.saturating_sub(EARLY.min(lifetime / 2)),
        })
    }
}
