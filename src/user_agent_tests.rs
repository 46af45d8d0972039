//! Every client says who it is: `User-Agent: skyplan/<version>`, as the server receives it,
//! on every request (PhoenixNAP's token request included).

use serde_json::{json, Value};

use recording::{assert_skyplan_agent, serve};
use skyplan_core::model::{Address, Secret};

#[tokio::test]
async fn cloudscale_requests_carry_skyplan_s_agent() {
    let server = serve(|_| (200, json!([]))).await;
    let client = skyplan_cloudscale::client::CloudscaleClient::new(
        &format!("{}/v1", server.url),
        Secret::new("t"),
    )
    .unwrap();
    client.get::<Value>("/load-balancers").await.unwrap();
    assert_skyplan_agent(&server.received());
}

#[tokio::test]
async fn cloudstack_requests_carry_skyplan_s_agent() {
    use skyplan_cloudstack::client::{CloudstackClient, Credentials};
    let server = serve(|_| {
        (
            200,
            json!({ "listzonesresponse": { "count": 0, "zone": [] } }),
        )
    })
    .await;
    let url = format!("{}/client/api", server.url);
    let client = CloudstackClient::new(Credentials::new(&url, "k", Secret::new("s"))).unwrap();
    client.call("listZones", &Vec::new()).await.unwrap();
    assert_skyplan_agent(&server.received());
}

#[tokio::test]
async fn phoenixnap_requests_and_the_token_request_carry_skyplan_s_agent() {
    use skyplan_phoenixnap::client::{Api, Credentials, PnapClient, TOKEN_PATH};
    let server = serve(|path| match path {
        TOKEN_PATH => (200, json!({ "access_token": "a", "expires_in": 3600 })),
        _ => (200, json!([])),
    })
    .await;
    let credentials = Credentials {
        client_id: "id".into(),
        client_secret: Secret::new("secret"),
    };
    let token_url = format!("{}{TOKEN_PATH}", server.url);
    let client = PnapClient::new(&server.url, &token_url, credentials).unwrap();
    client.get::<Value>(Api::Ips, "/ip-blocks").await.unwrap();
    let received = server.received();
    assert_eq!(received.len(), 2, "the token and the API: {received:?}");
    assert_skyplan_agent(&received);
}

#[tokio::test]
async fn kubernetes_requests_carry_skyplan_s_agent() {
    let server = serve(|_| {
        (
            200,
            json!({ "kind": "NodeList", "apiVersion": "v1", "items": [] }),
        )
    })
    .await;
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
         clusters:\n- name: c\n  cluster:\n    server: {}\n\
         users:\n- name: u\n  user: {{}}\n\
         contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n",
        server.url
    );
    let address: Address = "cluster.prod".parse().unwrap();
    let connection =
        skyplan_kubernetes::connect::connect_with_kubeconfig(&address, &Secret::new(kubeconfig))
            .await
            .unwrap();
    connection.nodes().await.unwrap();
    assert_skyplan_agent(&server.received());
}

mod recording {
    //! A local HTTP server that records what each request carried, as the server received it.

    use std::sync::{Arc, Mutex};

    use axum::extract::Request;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    use axum::Router;

    /// One request as received: its path and its User-Agent header.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Received {
        pub path: String,
        pub user_agent: Option<String>,
    }

    pub struct Recorder {
        pub url: String,
        received: Arc<Mutex<Vec<Received>>>,
    }

    impl Recorder {
        pub fn received(&self) -> Vec<Received> {
            self.received.lock().unwrap().clone()
        }
    }

    /// Serves on a free local port; each request is recorded and answered `answer(path)`
    /// (status, JSON body).
    pub async fn serve(answer: fn(&str) -> (u16, serde_json::Value)) -> Recorder {
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let app = Router::new().fallback(move |request: Request| {
            let log = log.clone();
            async move {
                let path = request.uri().path().to_owned();
                let user_agent = request
                    .headers()
                    .get(axum::http::header::USER_AGENT)
                    .map(|value| value.to_str().unwrap_or("(not text)").to_owned());
                log.lock().unwrap().push(Received {
                    path: path.clone(),
                    user_agent,
                });
                let (status, body) = answer(&path);
                let status = StatusCode::from_u16(status).unwrap();
                (status, axum::Json(body)).into_response()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Recorder {
            url: format!("http://{address}"),
            received,
        }
    }

    /// Asserts that there were requests and each carried `skyplan/<version>`.
    pub fn assert_skyplan_agent(received: &[Received]) {
        assert!(!received.is_empty(), "no request was received");
        let expected = format!("skyplan/{}", env!("CARGO_PKG_VERSION"));
        assert_eq!(skyplan_core::provider::http::USER_AGENT, expected);
        for request in received {
            assert_eq!(
                request.user_agent.as_deref(),
                Some(expected.as_str()),
                "{request:?}"
            );
        }
    }
}
