//! Every client says who it is: `User-Agent: skyplan/<version>`, as the server receives it,
//! on every request (PhoenixNAP's token request included).

use serde_json::{json, Value};

use super::http::recording::{assert_skyplan_agent, serve};
use crate::model::{Address, Secret};

#[tokio::test]
async fn cloudscale_requests_carry_skyplan_s_agent() {
    let server = serve(|_| (200, json!([]))).await;
    let client = super::cloudscale::client::CloudscaleClient::new(
        &format!("{}/v1", server.url),
        Secret::new("t"),
    )
    .unwrap();
    client.get::<Value>("/load-balancers").await.unwrap();
    assert_skyplan_agent(&server.received());
}

#[tokio::test]
async fn cloudstack_requests_carry_skyplan_s_agent() {
    use super::cloudstack::client::{CloudstackClient, Credentials};
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
    use super::phoenixnap::client::{Api, Credentials, PnapClient, TOKEN_PATH};
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
        super::kubernetes::connect::connect_with_kubeconfig(&address, &Secret::new(kubeconfig))
            .await
            .unwrap();
    connection.nodes().await.unwrap();
    assert_skyplan_agent(&server.received());
}
