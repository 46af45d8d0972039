//! Test scaffolding: a tiny fake CloudStack endpoint that checks each request's signature the
//! way the server does and answers what the test's closure says. Not a simulator.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::post;
use axum::{Form, Json, Router};
use serde_json::{json, Value};

use super::retry::RetryPolicy;
use super::{sign, CloudstackClient, Credentials, JobPolicy, Secret};

pub const SECRET: &str = "SECRETkey456";
pub const API_KEY: &str = "APIKEY123";

pub type Request = BTreeMap<String, String>;

pub struct FakeApi {
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl FakeApi {
    /// The parameters of every correctly signed request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// A parameter the request must have.
pub fn param<'a>(request: &'a Request, name: &str) -> &'a str {
    request
        .get(name)
        .unwrap_or_else(|| panic!("no `{name}` in {request:?}"))
}

/// Serves `POST /client/api` on a free local port. A request with a wrong signature or a past
/// `expires` gets 401 like from the server; the others go to `answer` → (status, JSON body).
pub async fn fake_api(
    answer: impl Fn(&Request) -> (u16, Value) + Send + Sync + 'static,
) -> FakeApi {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = requests.clone();
    let answer = Arc::new(answer);
    let handler = move |Form(pairs): Form<Vec<(String, String)>>| {
        let log = log.clone();
        let answer = answer.clone();
        async move {
            let request: Request = pairs.into_iter().collect();
            if !is_signed(&request) {
                let refusal = json!({"errorresponse": {"errorcode": 401,
                    "errortext": "unable to verify user credentials and/or request signature"}});
                return (StatusCode::UNAUTHORIZED, Json(refusal));
            }
            log.lock().unwrap().push(request.clone());
            let (status, body) = answer(&request);
            (StatusCode::from_u16(status).unwrap(), Json(body))
        }
    };
    let app = Router::new().route("/client/api", post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    FakeApi {
        url: format!("http://{address}/client/api"),
        requests,
    }
}

fn is_signed(request: &Request) -> bool {
    let expires = request
        .get("expires")
        .and_then(|text| jiff::fmt::strtime::parse("%Y-%m-%dT%H:%M:%S%z", text).ok())
        .and_then(|parsed| parsed.to_timestamp().ok());
    let fresh = expires.is_some_and(|expires| expires > jiff::Timestamp::now());
    let signed = request.get("signature") == Some(&sign::signature(request, &Secret::new(SECRET)));
    fresh && signed && request.get("apiKey").map(String::as_str) == Some(API_KEY)
}

/// A client of `url` with the test keys, retries (4 attempts) and polls in milliseconds.
pub fn quick_client(url: &str) -> CloudstackClient {
    let credentials = Credentials::new(url, API_KEY, Secret::new(SECRET));
    CloudstackClient::new(credentials)
        .unwrap()
        .with_retry_policy(RetryPolicy {
            first: Duration::from_millis(1),
            max: Duration::from_millis(4),
            attempts: 4,
        })
        .with_job_policy(JobPolicy {
            first_poll: Duration::from_millis(1),
            max_poll: Duration::from_millis(8),
            timeout: Duration::from_secs(5),
        })
}
