//! The client itself: one signed POST form per attempt to the API url, the answer's envelope
//! opened, and failed attempts retried where that is safe.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::retry::{is_retryable, RetryPolicy};
use super::{envelope, sign, Credentials, Error, JobPolicy, Params};
use skyplan_core::provider::http::USER_AGENT;

/// Parameters every request carries, set by the client; a caller's own value is dropped.
const RESERVED: [&str; 6] = [
    "command",
    "apiKey",
    "response",
    "signatureversion",
    "expires",
    "signature",
];

/// A client for one CloudStack account. Debug shows the secret key as `***`.
#[derive(Debug)]
pub struct CloudstackClient {
    http: reqwest::Client,
    credentials: Credentials,
    request_timeout: Duration,
    retry: RetryPolicy,
    pub(super) job_policy: JobPolicy,
    requests: AtomicU64,
}

impl CloudstackClient {
    pub fn new(credentials: Credentials) -> Result<CloudstackClient, Error> {
        reqwest::Url::parse(&credentials.api_url)
            .map_err(|error| Error::Build(format!("api-url `{}`: {error}", credentials.api_url)))?;
        if credentials.ssl_no_verify {
            tracing::warn!(
                api_url = credentials.api_url,
                "CloudStack: TLS certificate verification is off (ssl-no-verify)"
            );
        }
        let http = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .connect_timeout(Duration::from_secs(10))
            .danger_accept_invalid_certs(credentials.ssl_no_verify)
            // A followed redirect turns the POST into a GET without the form: report it instead.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| Error::Build(error.to_string()))?;
        Ok(CloudstackClient {
            http,
            credentials,
            // Synchronous commands can take a while (the server works before it answers).
            request_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            job_policy: JobPolicy::default(),
            requests: AtomicU64::new(0),
        })
    }

    /// Polls quicker or slower than the default (the embedded simulator finishes jobs fast).
    pub fn with_job_policy(mut self, policy: JobPolicy) -> CloudstackClient {
        self.job_policy = policy;
        self
    }

    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> CloudstackClient {
        self.retry = retry;
        self
    }

    pub fn with_request_timeout(mut self, timeout: Duration) -> CloudstackClient {
        self.request_timeout = timeout;
        self
    }

    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// API requests made so far (every HTTP request, polls and retries included).
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// One synchronous command; returns the object under `<command>response`.
    pub async fn call(&self, command: &str, params: &Params) -> Result<Value, Error> {
        let mut failures = 0;
        loop {
            match self.attempt(command, params).await {
                Err(error)
                    if failures + 1 < self.retry.attempts && is_retryable(command, &error) =>
                {
                    let pause = self.retry.delay(failures);
                    tracing::debug!(command, ?pause, "CloudStack: retrying: {error}");
                    tokio::time::sleep(pause).await;
                    failures += 1;
                }
                outcome => return outcome,
            }
        }
    }

    /// The server's version (`listCapabilities` → `capability.cloudstackversion`, which any
    /// account may call), e.g. `4.22.0.0`.
    pub async fn server_version(&self) -> Result<String, Error> {
        let command = "listCapabilities";
        let answer = self.call(command, &Params::new()).await?;
        answer
            .pointer("/capability/cloudstackversion")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| Error::Decode {
                command: command.to_string(),
                detail: "no capability.cloudstackversion".to_string(),
            })
    }

    /// One request, signed afresh (so a retry after a long pause has not expired).
    async fn attempt(&self, command: &str, params: &Params) -> Result<Value, Error> {
        let transport = |source| Error::Transport {
            command: command.to_string(),
            source,
        };
        let params = self.request_params(command, params, jiff::Timestamp::now());
        let body = sign::signed_form_body(&params, &self.credentials.secret_key);
        self.requests.fetch_add(1, Ordering::Relaxed);
        let response = self
            .http
            .post(&self.credentials.api_url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.request_timeout)
            .body(body)
            .send()
            .await
            .map_err(transport)?;
        let status = response.status().as_u16();
        tracing::debug!(command, status, "CloudStack API request");
        if response.status().is_redirection() {
            return Err(redirected(command, status, response.headers()));
        }
        let body = response.bytes().await.map_err(transport)?;
        envelope::open(command, status, &body)
    }

    /// The caller's parameters and the client's own: the command, JSON answers, the API key
    /// and signature version 3 with an expiry.
    fn request_params(
        &self,
        command: &str,
        params: &Params,
        now: jiff::Timestamp,
    ) -> BTreeMap<String, String> {
        let mut all: BTreeMap<String, String> = params
            .iter()
            .filter(|(name, _)| !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name)))
            .cloned()
            .collect();
        let own = [
            ("command", command.to_string()),
            ("apiKey", self.credentials.api_key.clone()),
            ("response", "json".to_string()),
            ("signatureversion", "3".to_string()),
            ("expires", sign::expires_at(now)),
        ];
        all.extend(own.map(|(name, value)| (name.to_string(), value)));
        if let Some(project) = &self.credentials.project_id {
            if creates_in_project(command)
                && !all.keys().any(|k| k.eq_ignore_ascii_case("projectid"))
            {
                all.insert("projectid".to_string(), project.clone());
            }
        }
        all
    }
}

/// Commands that make an object owned by the caller's account, or by a project when given
/// one: with the cloud-config's project-id they make it in the project, where the lists (which
/// send projectid too) find it. Rules, firewall rules and tags belong to their IP or object.
fn creates_in_project(command: &str) -> bool {
    ["createKubernetesCluster", "associateIpAddress"]
        .iter()
        .any(|c| c.eq_ignore_ascii_case(command))
}

/// A redirect (http → https, an old host): the request was not executed; the fix is the url.
fn redirected(command: &str, status: u16, headers: &reqwest::header::HeaderMap) -> Error {
    let location = headers
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("(no location)");
    Error::Api {
        command: command.to_string(),
        errorcode: status,
        cserrorcode: None,
        text: format!("redirected to {location}; set api-url to the address it redirects to"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;
    use std::sync::Arc;

    use serde_json::json;

    use super::super::test_support::{fake_api, param, quick_client, SECRET};
    use super::*;
    use skyplan_core::model::Secret;

    #[test]
    fn creates_go_into_the_cloud_configs_project_and_other_calls_do_not() {
        let mut credentials =
            Credentials::new("http://127.0.0.1:1/client/api", "k", Secret::new("s"));
        credentials.project_id = Some("p-1".into());
        let client = CloudstackClient::new(credentials).unwrap();
        let now = jiff::Timestamp::now();
        let create = client.request_params("createKubernetesCluster", &vec![], now);
        assert_eq!(create.get("projectid").map(String::as_str), Some("p-1"));
        let associate = client.request_params("associateIpAddress", &vec![], now);
        assert_eq!(associate.get("projectid").map(String::as_str), Some("p-1"));
        let scale = client.request_params("scaleKubernetesCluster", &vec![], now);
        assert_eq!(
            scale.get("projectid"),
            None,
            "an existing object knows its owner"
        );
    }

    #[tokio::test]
    async fn call_posts_a_signed_form_and_opens_the_envelope() {
        let api = fake_api(|request| {
            assert_eq!(param(request, "command"), "deployThing");
            assert_eq!(param(request, "name"), "a b~c&d=e");
            assert_eq!(param(request, "nodeofferings[0].node"), "worker");
            (200, json!({"deploythingresponse": {"id": "t-1"}}))
        })
        .await;
        let client = quick_client(&api.url);
        let params = vec![
            ("name".to_string(), "a b~c&d=e".to_string()),
            ("nodeofferings[0].node".to_string(), "worker".to_string()),
        ];
        let answer = client.call("deployThing", &params).await.unwrap();
        assert_eq!(answer, json!({"id": "t-1"}));
        assert_eq!(client.request_count(), 1);
        let sent = &api.requests()[0];
        assert_eq!(param(sent, "response"), "json");
        assert_eq!(param(sent, "apiKey"), "APIKEY123");
        assert_eq!(param(sent, "signatureversion"), "3");
    }

    #[tokio::test]
    async fn a_wrong_secret_is_reported_without_the_keys() {
        let api = fake_api(|_| (200, json!({"listzonesresponse": {}}))).await;
        let wrong = "not-the-secret-0000";
        let credentials = Credentials::new(&api.url, "APIKEY123", Secret::new(wrong));
        let client = CloudstackClient::new(credentials).unwrap();
        let error = client.call("listZones", &Params::new()).await.unwrap_err();
        assert!(matches!(error, Error::Unauthorized { .. }), "{error:?}");
        let text = format!("{error} {error:?}");
        assert!(text.contains("clock"), "{text}");
        assert!(!text.contains(wrong) && !text.contains(SECRET), "{text}");
        assert_eq!(client.request_count(), 1, "401 is not retried");
    }

    #[tokio::test]
    async fn own_parameters_cannot_be_overridden() {
        let api = fake_api(|_| (200, json!({"listzonesresponse": {}}))).await;
        let client = quick_client(&api.url);
        let params = vec![
            ("command".to_string(), "deleteEverything".to_string()),
            ("response".to_string(), "xml".to_string()),
        ];
        client.call("listZones", &params).await.unwrap();
        let sent = &api.requests()[0];
        assert_eq!(param(sent, "command"), "listZones");
        assert_eq!(param(sent, "response"), "json");
    }

    /// An API that fails `failures` times with `status` (CloudStack's envelope), then answers.
    async fn flaky(
        failures: u32,
        status: u16,
    ) -> (super::super::test_support::FakeApi, Arc<AtomicU32>) {
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let api = fake_api(move |request| {
            let key = format!("{}response", param(request, "command").to_lowercase());
            if counter.fetch_add(1, Ordering::SeqCst) < failures {
                (
                    status,
                    json!({key: {"errorcode": status, "errortext": "busy"}}),
                )
            } else {
                (200, json!({key: {"ok": true}}))
            }
        })
        .await;
        (api, calls)
    }

    #[tokio::test]
    async fn rate_limit_is_retried_even_for_a_create() {
        let (api, calls) = flaky(2, 429).await;
        let client = quick_client(&api.url);
        client.call("createTags", &Params::new()).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(client.request_count(), 3);
    }

    #[tokio::test]
    async fn server_errors_are_retried_for_lists_but_not_for_creates() {
        let (api, calls) = flaky(1, 503).await;
        let client = quick_client(&api.url);
        let error = client.call("createTags", &Params::new()).await.unwrap_err();
        assert!(error.is_uncertain(), "{error:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let (api, calls) = flaky(1, 503).await;
        let client = quick_client(&api.url);
        client.call("listTags", &Params::new()).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn cloudstack_refusals_are_neither_retried_nor_uncertain() {
        let (api, calls) = flaky(1, 537).await;
        let client = quick_client(&api.url);
        let error = client.call("listTags", &Params::new()).await.unwrap_err();
        assert_eq!(error.code(), Some(537));
        assert!(!error.is_uncertain());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn retries_stop_after_the_last_attempt() {
        let (api, calls) = flaky(u32::MAX, 502).await;
        let client = quick_client(&api.url);
        let error = client.call("listZones", &Params::new()).await.unwrap_err();
        assert_eq!(error.code(), Some(502));
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    /// A server that reads each request and closes the connection without answering.
    async fn hanging_up() -> (String, Arc<AtomicU32>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicU32::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                counter.fetch_add(1, Ordering::SeqCst);
                let mut buffer = [0u8; 4096];
                let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut buffer).await;
                drop(socket);
            }
        });
        (format!("http://{address}/client/api"), accepted)
    }

    #[tokio::test]
    async fn dropped_connection_is_retried_for_reads_and_uncertain_for_writes() {
        let (url, accepted) = hanging_up().await;
        let client = quick_client(&url);
        let error = client
            .call("createLoadBalancerRule", &Params::new())
            .await
            .unwrap_err();
        assert!(matches!(error, Error::Transport { .. }), "{error:?}");
        assert!(error.is_uncertain());
        assert_eq!(accepted.load(Ordering::SeqCst), 1);

        let (url, accepted) = hanging_up().await;
        let client = quick_client(&url);
        let error = client.call("listZones", &Params::new()).await.unwrap_err();
        assert!(matches!(error, Error::Transport { .. }), "{error:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 4);
        assert_eq!(client.request_count(), 4);
    }

    #[tokio::test]
    async fn refused_connection_is_retried_even_for_writes_and_is_certain() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let client = quick_client(&format!("http://{address}/client/api"));
        let error = client.call("createTags", &Params::new()).await.unwrap_err();
        assert!(!error.is_uncertain(), "{error:?}");
        assert!(
            error.to_string().starts_with("CloudStack createTags: "),
            "{error}"
        );
        assert_eq!(client.request_count(), 4);
    }

    #[tokio::test]
    async fn server_version_comes_from_list_capabilities() {
        let api = fake_api(|request| {
            assert_eq!(param(request, "command"), "listCapabilities");
            (
                200,
                json!({"listcapabilitiesresponse": {"capability": {"cloudstackversion": "4.22.0.0"}}}),
            )
        })
        .await;
        assert_eq!(
            quick_client(&api.url).server_version().await.unwrap(),
            "4.22.0.0"
        );
    }

    #[tokio::test]
    async fn a_redirect_is_reported_not_followed() {
        let app = axum::Router::new().route(
            "/client/api",
            axum::routing::post(|| async {
                axum::response::Redirect::permanent("https://cloud.example.com/client/api")
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let client = quick_client(&format!("http://{address}/client/api"));
        let error = client.call("createTags", &Params::new()).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "CloudStack createTags: 308: redirected to https://cloud.example.com/client/api; \
             set api-url to the address it redirects to"
        );
        assert!(!error.is_uncertain());
        assert_eq!(client.request_count(), 1);
    }

    /// A subscriber that keeps every callsite open and records nothing, alive for the whole
    /// test binary. tracing caches each callsite's interest process-wide, computed by the
    /// first thread to reach it: with one subscriber registered, a test thread without one
    /// caches `never`, and the capture below then missed the client's debug lines (a flaky
    /// failure). With this one registered too, interest is asked of every subscriber and is
    /// never `never`; each event is then offered to the thread's own.
    struct KeepCallsitesOpen;

    impl tracing::Subscriber for KeepCallsitesOpen {
        fn register_callsite(
            &self,
            _: &'static tracing::Metadata<'static>,
        ) -> tracing::subscriber::Interest {
            tracing::subscriber::Interest::sometimes()
        }
        fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
            Some(tracing::level_filters::LevelFilter::TRACE)
        }
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            false
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, _: &tracing::Event<'_>) {}
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    static CALLSITES_OPEN: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();

    /// Everything the client logs, at every level, while `work` runs.
    async fn logs_of<F: std::future::Future<Output = ()>>(work: F) -> String {
        CALLSITES_OPEN.get_or_init(|| tracing::Dispatch::new(KeepCallsitesOpen));
        let buffer = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || LogSink(sink.clone()))
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        work.await;
        drop(guard);
        let text = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
        text
    }

    struct LogSink(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for LogSink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn ssl_no_verify_is_warned_about_once_and_logs_never_show_the_secret() {
        let (api, _) = flaky(2, 503).await;
        let logs = logs_of(async {
            let mut credentials = quick_client(&api.url).credentials().clone();
            credentials.ssl_no_verify = true;
            let client = CloudstackClient::new(credentials)
                .unwrap()
                .with_retry_policy(RetryPolicy {
                    first: Duration::from_millis(1),
                    max: Duration::from_millis(1),
                    attempts: 4,
                });
            client.call("listZones", &Params::new()).await.unwrap();
            client.call("listZones", &Params::new()).await.unwrap();
        })
        .await;
        assert_eq!(
            logs.matches("TLS certificate verification is off").count(),
            1,
            "{logs}"
        );
        assert!(logs.contains("retrying"), "{logs}");
        assert!(!logs.contains(SECRET), "{logs}");
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let credentials = Credentials::new("http://x/client/api", "K", Secret::new(SECRET));
        let client = CloudstackClient::new(credentials).unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains(SECRET), "{debug}");
    }

    #[test]
    fn a_bad_url_is_refused_up_front() {
        let credentials = Credentials::new("not a url", "K", Secret::new(SECRET));
        let error = CloudstackClient::new(credentials).unwrap_err();
        assert!(error.to_string().contains("api-url `not a url`"), "{error}");
    }
}
