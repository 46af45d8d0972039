use reqwest::StatusCode;
use serde_json::json;

use super::{uuid, Harness};
use crate::cloudscale::{DEFAULT_SUBNET_UUID, DEFAULT_TOKEN, PUBLIC_SUBNET_UUID};

#[tokio::test]
async fn new_load_balancer_is_changing_then_running_with_a_vip_from_its_subnet() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    assert_eq!(lb["status"], "changing");
    assert_eq!(
        lb["flavor"],
        json!({"slug": "lb-standard", "name": "LB-Standard"})
    );
    assert_eq!(lb["zone"], json!({"slug": "lpg1"}));
    assert_eq!(lb["href"], h.url(&format!("/load-balancers/{}", uuid(&lb))));
    let vip = &lb["vip_addresses"][0];
    assert_eq!(vip["version"], 4);
    assert_eq!(vip["address"], "10.0.0.1");
    assert_eq!(vip["subnet"]["uuid"], DEFAULT_SUBNET_UUID.to_string());
    assert_eq!(vip["subnet"]["cidr"], "10.0.0.0/24");
    h.wait_running(&lb).await;
    let second = h.create_lb("api", json!({})).await;
    assert_eq!(second["vip_addresses"][0]["address"], "10.0.0.2");
}

#[tokio::test]
async fn without_vip_addresses_a_load_balancer_gets_a_public_address() {
    let h = Harness::start().await;
    let (_, lb) = h
        .post(
            "/load-balancers",
            json!({"name": "web", "flavor": "lb-large"}),
        )
        .await;
    let vip = &lb["vip_addresses"][0];
    assert_eq!(vip["address"], "5.102.144.1");
    assert_eq!(vip["subnet"]["uuid"], PUBLIC_SUBNET_UUID.to_string());
    assert_eq!(lb["zone"]["slug"], "lpg1");
}

#[tokio::test]
async fn unknown_flavor_zone_or_subnet_and_missing_fields_are_refused() {
    let h = Harness::start().await;
    let bodies = [
        json!({"name": "a", "flavor": "lb-huge"}),
        json!({"name": "a", "flavor": "lb-standard", "zone": "xyz1"}),
        json!({"name": "a", "flavor": "lb-standard", "vip_addresses": [{"subnet": "9d3b1c0e-7a62-4f0e-9f39-3d2c8b1a6e55"}]}),
        json!({"name": "a", "flavor": "lb-standard", "vip_addresses": [{"subnet": DEFAULT_SUBNET_UUID, "address": "10.9.9.9"}]}),
        json!({"flavor": "lb-standard"}),
    ];
    for body in bodies {
        let (status, error) = h.post("/load-balancers", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error["detail"].is_string(), "{error}");
    }
    assert_eq!(h.get("/load-balancers").await.1, json!([]));
}

#[tokio::test]
async fn patch_changes_name_and_refuses_create_only_fields() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    let path = format!("/load-balancers/{}", uuid(&lb));
    let (status, body) = h
        .patch(&path, json!({"name": "renamed", "tags": {"a": "b"}}))
        .await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, json!(null)));
    for field in ["flavor", "zone", "vip_addresses"] {
        let (status, error) = h.patch(&path, json!({ field: "x", "name": "other" })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(error["detail"].as_str().unwrap().contains(field), "{error}");
    }
    let (_, lb) = h.get(&path).await;
    assert_eq!(lb["name"], "renamed");
    assert_eq!(lb["tags"], json!({"a": "b"}));
}

#[tokio::test]
async fn wrong_or_missing_token_is_401_with_a_detail() {
    let h = Harness::start().await;
    let url = h.url("/load-balancers");
    let missing = h.client.get(&url).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let wrong = h.client.get(&url).bearer_auth("nope").send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let body: serde_json::Value = wrong.json().await.unwrap();
    assert!(body["detail"].is_string());
    let basic = h
        .client
        .get(&url)
        .basic_auth(DEFAULT_TOKEN, None::<&str>)
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn unknown_objects_are_404_and_malformed_json_is_400() {
    let h = Harness::start().await;
    let not_found = json!({"detail": "Not found."});
    assert_eq!(
        h.get("/load-balancers/9d3b1c0e-7a62-4f0e-9f39-3d2c8b1a6e55")
            .await,
        (StatusCode::NOT_FOUND, not_found.clone())
    );
    assert_eq!(
        h.get("/load-balancers/not-a-uuid").await,
        (StatusCode::NOT_FOUND, not_found.clone())
    );
    assert_eq!(
        h.get("/nothing-here").await,
        (StatusCode::NOT_FOUND, not_found)
    );
    let malformed = h
        .client
        .post(h.url("/load-balancers"))
        .bearer_auth(DEFAULT_TOKEN)
        .body("{\"name\":")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn lists_filter_on_tag_values_and_tag_presence() {
    let h = Harness::start().await;
    h.create_lb("a", json!({"skyplan.address": "svc/web", "env": "prod"}))
        .await;
    h.create_lb("b", json!({"skyplan.address": "svc/db"})).await;
    h.create_lb("c", json!({})).await;
    let names = |list: serde_json::Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|lb| lb["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(h.get("/load-balancers").await.1), ["a", "b", "c"]);
    assert_eq!(
        names(
            h.get("/load-balancers?tag:skyplan.address=svc%2Fweb")
                .await
                .1
        ),
        ["a"]
    );
    assert_eq!(
        names(h.get("/load-balancers?tag:skyplan.address").await.1),
        ["a", "b"]
    );
    assert_eq!(
        names(
            h.get("/load-balancers?tag:skyplan.address&tag:env=prod")
                .await
                .1
        ),
        ["a"]
    );
    assert!(names(h.get("/load-balancers?tag:env=dev").await.1).is_empty());
}

/// The first /22 holds 1,021 public addresses (its last host is the gateway); the account goes
/// on past it into the second public subnet, and a deleted load balancer's address is handed
/// out again first.
#[tokio::test]
async fn public_addresses_go_on_past_the_first_subnet_and_are_reused() {
    let h = Harness::start().await;
    let mut last = json!(null);
    for i in 0..1025 {
        let (status, lb) = h
            .post(
                "/load-balancers",
                json!({"name": format!("lb{i}"), "flavor": "lb-standard"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{lb}");
        last = lb;
    }
    let vip = &last["vip_addresses"][0];
    assert_eq!(vip["address"], "198.18.0.4");
    assert_eq!(vip["subnet"]["cidr"], "198.18.0.0/15");
    let listed = h.get("/load-balancers").await.1;
    let second = listed[1].clone();
    assert_eq!(second["vip_addresses"][0]["address"], "5.102.144.2");
    let path = format!("/load-balancers/{}", uuid(&second));
    assert_eq!(h.delete(&path).await, StatusCode::NO_CONTENT);
    let (_, again) = h
        .post(
            "/load-balancers",
            json!({"name": "again", "flavor": "lb-standard"}),
        )
        .await;
    assert_eq!(again["vip_addresses"][0]["address"], "5.102.144.2");
}
