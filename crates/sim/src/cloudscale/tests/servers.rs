use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{uuid, Harness};
use crate::cloudscale::DEFAULT_NETWORK_UUID;

async fn create_server(h: &Harness, extra: Value) -> Value {
    let mut body = json!({"name": "node-1", "flavor": "flex-4-2", "image": "debian-12"});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let (status, server) = h.post("/servers", body).await;
    assert_eq!(status, StatusCode::CREATED, "{server}");
    server
}

#[tokio::test]
async fn a_server_needs_an_image_and_shows_it() {
    let h = Harness::start().await;
    let (status, error) = h
        .post("/servers", json!({"name": "x", "flavor": "flex-4-2"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        error["detail"].as_str().unwrap().contains("image"),
        "{error}"
    );
    let server = create_server(&h, json!({})).await;
    assert_eq!(server["image"]["slug"], "debian-12");
}

#[tokio::test]
async fn use_public_network_false_leaves_the_server_without_a_public_interface() {
    let h = Harness::start().await;
    let server = create_server(&h, json!({"use_public_network": false, "interfaces": null})).await;
    assert_eq!(server["interfaces"], json!([]));
    let (status, _) = h
        .post(
            "/servers",
            json!({"name": "x", "flavor": "f", "image": "i", "use_private_network": true}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "not simulated, so refused");
}

#[tokio::test]
async fn power_actions_change_the_status() {
    let h = Harness::start().await;
    let server = create_server(&h, json!({})).await;
    let path = format!("/servers/{}", uuid(&server));
    for (action, status) in [
        ("stop", "stopped"),
        ("start", "running"),
        ("stop", "stopped"),
        ("reboot", "running"),
    ] {
        let (code, _) = h.post(&format!("{path}/{action}"), json!({})).await;
        assert_eq!(code, StatusCode::NO_CONTENT, "{action}");
        assert_eq!(h.get(&path).await.1["status"], status, "after {action}");
    }
    let missing = "/servers/00000000-0000-4000-8000-000000000000/stop";
    assert_eq!(h.post(missing, json!({})).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_flavor_changes_only_on_a_stopped_server_and_on_its_own() {
    let h = Harness::start().await;
    let server = create_server(&h, json!({})).await;
    let path = format!("/servers/{}", uuid(&server));
    let scale = json!({"flavor": "flex-8-4"});
    assert_eq!(
        h.patch(&path, scale.clone()).await.0,
        StatusCode::BAD_REQUEST,
        "running"
    );
    h.post(&format!("{path}/stop"), json!({})).await;
    let together = json!({"flavor": "flex-8-4", "name": "renamed"});
    assert_eq!(
        h.patch(&path, together).await.0,
        StatusCode::BAD_REQUEST,
        "not atomic"
    );
    assert_eq!(h.patch(&path, scale).await.0, StatusCode::NO_CONTENT);
    let (_, scaled) = h.get(&path).await;
    assert_eq!(scaled["flavor"]["slug"], "flex-8-4");
    assert_eq!(
        scaled["name"], "node-1",
        "the refused change left the name alone"
    );
}

#[tokio::test]
async fn interfaces_can_be_replaced_keeping_the_addresses_still_asked_for() {
    let h = Harness::start().await;
    let server = create_server(&h, json!({})).await;
    let public = server["interfaces"][0]["addresses"][0]["address"].clone();
    let path = format!("/servers/{}", uuid(&server));
    let interfaces =
        json!({"interfaces": [{"network": "public"}, {"network": DEFAULT_NETWORK_UUID}]});
    assert_eq!(h.patch(&path, interfaces).await.0, StatusCode::NO_CONTENT);
    let (_, changed) = h.get(&path).await;
    assert_eq!(changed["interfaces"][0]["addresses"][0]["address"], public);
    assert_eq!(changed["interfaces"][1]["type"], "private");
    assert_eq!(
        changed["interfaces"][1]["network"]["uuid"],
        DEFAULT_NETWORK_UUID.to_string()
    );
}
