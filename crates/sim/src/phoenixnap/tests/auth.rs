use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::*;

#[tokio::test]
async fn a_token_by_basic_auth_carries_every_scope_and_opens_every_api() {
    let h = Harness::start().await;
    let form = [("grant_type", "client_credentials")];
    let request = h
        .client
        .post(h.url(TOKEN_PATH))
        .basic_auth(DEFAULT_CLIENT_ID, Some(DEFAULT_CLIENT_SECRET))
        .form(&form);
    let (status, body) = h.token_request(request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "bmc bmc.read tags tags.read");
    let token = body["access_token"].as_str().unwrap();
    for path in [
        "/ips/v1/ip-blocks",
        "/networks/v1/public-networks",
        "/tag-manager/v1/tags",
        "/bmc/v1/servers",
    ] {
        let (status, _) = h.call_as(token, Method::GET, path, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn bad_credentials_and_bad_requests_are_refused_as_keycloak_does() {
    let h = Harness::start().await;
    let wrong = [
        ("grant_type", "client_credentials"),
        ("client_id", DEFAULT_CLIENT_ID),
        ("client_secret", "wrong"),
    ];
    let (status, body) = h
        .token_request(h.client.post(h.url(TOKEN_PATH)).form(&wrong))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "unauthorized_client");
    assert!(body["error_description"].is_string());
    assert!(!body.to_string().contains("wrong"));

    let no_credentials = [("grant_type", "client_credentials")];
    let (status, _) = h
        .token_request(h.client.post(h.url(TOKEN_PATH)).form(&no_credentials))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let password = [("grant_type", "password")];
    let (status, body) = h
        .token_request(h.client.post(h.url(TOKEN_PATH)).form(&password))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("unsupported_grant_type"))
    );

    let scope = [
        ("grant_type", "client_credentials"),
        ("client_id", DEFAULT_CLIENT_ID),
        ("client_secret", DEFAULT_CLIENT_SECRET),
        ("scope", "bmc admin"),
    ];
    let (status, body) = h
        .token_request(h.client.post(h.url(TOKEN_PATH)).form(&scope))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_scope"))
    );
}

#[tokio::test]
async fn basic_credentials_are_url_decoded_as_x_oauth2_encodes_them() {
    let dir = tempfile::tempdir().unwrap();
    let options = PnapSimOptions {
        client_id: Some("id with space".into()),
        client_secret: Some("s:cr%t".into()),
        ..PnapSimOptions::default()
    };
    let sim = spawn(
        dir.path().join("w.json"),
        "127.0.0.1:0".parse().unwrap(),
        options,
    )
    .await
    .unwrap();
    let encoded = base64::engine::general_purpose::STANDARD.encode("id+with+space:s%3Acr%25t");
    let response = reqwest::Client::new()
        .post(format!("{}{TOKEN_PATH}", sim.base_url()))
        .header("Authorization", format!("Basic {encoded}"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    sim.shutdown().await.unwrap();
}

#[test]
fn options_debug_hides_the_secret() {
    let options = PnapSimOptions {
        client_secret: Some("hunter2".into()),
        ..PnapSimOptions::default()
    };
    assert!(!format!("{options:?}").contains("hunter2"));
}

#[tokio::test]
async fn api_calls_without_a_valid_token_are_401_with_a_message() {
    let h = Harness::start().await;
    let response = h
        .client
        .get(h.url("/ips/v1/ip-blocks"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let body: serde_json::Value = response.json().await.unwrap();
    assert!(body["message"].is_string());
    let (status, _) = h
        .call_as("not-a-token", Method::GET, "/bmc/v1/servers", None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_token_without_the_needed_scope_is_403() {
    let h = Harness::start().await;
    let read_only = h.token_for(Some("bmc.read tags.read")).await;
    let (status, _) = h
        .call_as(&read_only, Method::GET, "/ips/v1/ip-blocks", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let body = json!({"location": "PHX", "cidrBlockSize": "/29"});
    let (status, answer) = h
        .call_as(&read_only, Method::POST, "/ips/v1/ip-blocks", Some(body))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(answer["message"].as_str().unwrap().contains("bmc"));
    let tag = json!({"name": "usage", "isBillingTag": false});
    let (status, _) = h
        .call_as(
            &read_only,
            Method::POST,
            "/tag-manager/v1/tags",
            Some(tag.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let bmc_only = h.token_for(Some("bmc")).await;
    let (status, _) = h
        .call_as(&bmc_only, Method::GET, "/ips/v1/ip-blocks", None)
        .await;
    assert_eq!(status, StatusCode::OK, "the full scope also reads");
    let (status, _) = h
        .call_as(&bmc_only, Method::GET, "/tag-manager/v1/tags", None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn token_requests_are_counted_beside_the_api_calls() {
    let h = Harness::start().await;
    h.get("/bmc/v1/servers").await;
    let counts = h.sim.requests();
    assert_eq!(counts.by_route[&format!("POST {TOKEN_PATH}")], 1);
    assert_eq!(counts.by_route["GET /bmc/v1/servers"], 1);
    assert_eq!(h.sim.request_count(), 2);
}
