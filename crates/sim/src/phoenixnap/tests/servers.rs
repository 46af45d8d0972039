use reqwest::{Method, StatusCode};
use serde_json::json;

use super::*;

#[tokio::test]
async fn the_fresh_servers_have_what_the_ccm_reads() {
    let h = Harness::start().await;
    let servers = h.get("/bmc/v1/servers").await;
    let servers = servers.as_array().unwrap();
    let hostnames: Vec<_> = servers
        .iter()
        .map(|s| s["hostname"].as_str().unwrap())
        .collect();
    assert_eq!(hostnames, ["node-1", "node-2", "node-3"]);
    for server in servers {
        assert_eq!(
            (server["type"].as_str(), server["location"].as_str()),
            (Some("s2.c1.medium"), Some("PHX"))
        );
        assert_eq!(server["status"], "powered-on");
        assert_eq!(server["publicIpAddresses"].as_array().unwrap().len(), 1);
        assert_eq!(server["privateIpAddresses"].as_array().unwrap().len(), 1);
        assert_eq!(server["id"].as_str().unwrap().len(), 24);
    }
}

#[tokio::test]
async fn servers_are_created_powered_off_and_deleted_and_then_403() {
    let h = Harness::start().await;
    let body = json!({"hostname": "node-4", "type": "s1.c1.small", "location": "PHX", "os": "ubuntu/focal"});
    let (status, server) = h.call(Method::POST, "/bmc/v1/servers", Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{server}");
    assert_eq!(server["publicIpAddresses"], json!(["203.0.113.13"]));
    assert_eq!(server["privateIpAddresses"], json!(["10.0.0.13"]));
    let id = server["id"].as_str().unwrap();
    let (status, _) = h
        .call(
            Method::POST,
            &format!("/bmc/v1/servers/{id}/actions/power-off"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        h.get(&format!("/bmc/v1/servers/{id}")).await["status"],
        "powered-off"
    );
    let (status, _) = h
        .call(Method::DELETE, &format!("/bmc/v1/servers/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, answer) = h
        .call(Method::GET, &format!("/bmc/v1/servers/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(answer["message"].is_string());
    let bad = json!({"hostname": "no spaces", "type": "s1.c1.small", "location": "PHX"});
    let (status, _) = h.call(Method::POST, "/bmc/v1/servers", Some(bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn servers_filter_by_tag() {
    let h = Harness::start().await;
    h.tag_names(&["role"]).await;
    let body = json!({"hostname": "cp-1", "type": "s1.c1.small", "location": "ASH", "tags": [{"name": "role", "value": "cp"}]});
    let (status, _) = h.call(Method::POST, "/bmc/v1/servers", Some(body)).await;
    assert_eq!(status, StatusCode::OK);
    let tagged = h.get("/bmc/v1/servers?tag=role.cp").await;
    assert_eq!(tagged.as_array().unwrap().len(), 1);
    assert_eq!(tagged[0]["privateIpAddresses"], json!(["10.1.0.10"]));
}
