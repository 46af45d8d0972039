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

#[tokio::test]
async fn a_server_shows_its_flavor_image_volumes_keys_and_address_details() {
    let h = Harness::start().await;
    let extra = json!({"volume_size_gb": 50, "bulk_volume_size_gb": 100,
        "interfaces": [{"network": "public"}, {"network": DEFAULT_NETWORK_UUID}]});
    let server = create_server(&h, extra).await;
    let flavor = json!({"slug": "flex-4-2", "name": "Flex-4-2", "vcpu_count": 2, "memory_gb": 4});
    assert_eq!(server["flavor"], flavor);
    let image = json!({"slug": "debian-12", "name": "Debian 12", "operating_system": "Debian",
        "default_username": "debian"});
    assert_eq!(server["image"], image);
    let volumes = server["volumes"].as_array().unwrap();
    let shape: Vec<(&Value, &Value, &Value)> = volumes
        .iter()
        .map(|v| (&v["type"], &v["device_path"], &v["size_gb"]))
        .collect();
    assert_eq!(
        shape,
        [
            (&json!("ssd"), &json!("/dev/vda"), &json!(50)),
            (&json!("bulk"), &json!("/dev/vdb"), &json!(100))
        ]
    );
    assert!(server["ssh_host_keys"][0]
        .as_str()
        .unwrap()
        .starts_with("ssh-ed25519 AAAA"));
    assert_eq!(
        (&server["server_groups"], &server["anti_affinity_with"]),
        (&json!([]), &json!([]))
    );
    let public = &server["interfaces"][0]["addresses"][0];
    let dashed = public["address"].as_str().unwrap().replace('.', "-");
    assert_eq!(
        public["reverse_ptr"],
        format!("{dashed}.cust.cloudscale.ch")
    );
    assert_eq!(public["gateway"], "5.102.147.254");
    let private = &server["interfaces"][1]["addresses"][0];
    assert_eq!(
        (&private["gateway"], &private["reverse_ptr"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(
        h.get(&format!("/servers/{}", uuid(&server))).await.1,
        server,
        "read back"
    );
}

#[tokio::test]
async fn a_flavor_the_cloud_does_not_have_is_refused() {
    let h = Harness::start().await;
    let body = json!({"name": "x", "flavor": "huge", "image": "debian-12"});
    let (status, error) = h.post("/servers", body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        error["detail"].as_str().unwrap().contains("flavor"),
        "{error}"
    );
    let server = create_server(&h, json!({})).await;
    let path = format!("/servers/{}", uuid(&server));
    h.post(&format!("{path}/stop"), json!({})).await;
    let (status, _) = h.patch(&path, json!({"flavor": "huge"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
