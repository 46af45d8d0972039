use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::*;
use crate::phoenixnap::{ASH_PUBLIC_NETWORK_ID, DEFAULT_PUBLIC_NETWORK_ID};

const DETACHING: &str = "The specified IP block is being removed from the Public Network.";

async fn network(h: &Harness, id: &str) -> Value {
    h.get(&format!("/networks/v1/public-networks/{id}")).await
}

#[tokio::test]
async fn the_fresh_world_has_a_public_network_in_each_location() {
    let h = Harness::start().await;
    let phx = h.get("/networks/v1/public-networks?location=PHX").await;
    assert_eq!(phx.as_array().unwrap().len(), 1);
    assert_eq!(phx[0]["id"], DEFAULT_PUBLIC_NETWORK_ID);
    assert_eq!(
        (phx[0]["name"].as_str(), phx[0]["vlanId"].as_u64()),
        (Some("k8s-public"), Some(10))
    );
    assert_eq!(phx[0]["status"], "READY");
    assert_eq!(h.network_id("ash-public").await, ASH_PUBLIC_NETWORK_ID);
    let (status, _) = h
        .call(
            Method::GET,
            "/networks/v1/public-networks?location=MARS",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn attach_is_202_then_assigning_then_assigned_with_the_network_busy_meanwhile() {
    let h = Harness::start().await;
    let net = DEFAULT_PUBLIC_NETWORK_ID;
    let block = h.ccm_block_untagged("PHX").await;
    let id = block["id"].as_str().unwrap();
    let (status, answer) = h.attach(net, id).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    assert_eq!(
        answer,
        json!({"id": id, "cidr": block["cidr"], "usedIpsCount": "0"})
    );
    let during = h.block(id).await;
    assert_eq!(during["status"], "assigning");
    assert_eq!(during["assignedResourceId"], net);
    assert_eq!(during["assignedResourceType"], "public network");
    assert_eq!(network(&h, net).await["status"], "BUSY");
    let other = h.ccm_block_untagged("PHX").await;
    let (status, _) = h.attach(net, other["id"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::CONFLICT, "a BUSY network refuses");

    h.settle().await;
    assert_eq!(h.block(id).await["status"], "assigned");
    let after = network(&h, net).await;
    assert_eq!(after["status"], "READY");
    assert_eq!(after["ipBlocks"][0]["id"], id);
    let (status, _) = h.attach(net, id).await;
    assert_eq!(status, StatusCode::CONFLICT, "already assigned");
}

#[tokio::test]
async fn a_block_of_another_location_is_400() {
    let h = Harness::start().await;
    let block = h.ccm_block_untagged("ASH").await;
    let (status, answer) = h
        .attach(DEFAULT_PUBLIC_NETWORK_ID, block["id"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        h.block(block["id"].as_str().unwrap()).await["status"],
        "unassigned"
    );
}

#[tokio::test]
async fn delete_is_refused_while_assigned_and_detach_frees_the_block() {
    let h = Harness::start().await;
    let net = DEFAULT_PUBLIC_NETWORK_ID;
    let block = h.ccm_block_untagged("PHX").await;
    let id = block["id"].as_str().unwrap();
    h.attach(net, id).await;
    let (status, _) = h.detach(net, id).await;
    assert_eq!(status, StatusCode::CONFLICT, "still assigning");
    h.settle().await;
    let path = format!("/ips/v1/ip-blocks/{id}");
    let (status, answer) = h.call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(answer["message"].as_str().unwrap().contains("assigned"));
    let (status, _) = h.detach(ASH_PUBLIC_NETWORK_ID, id).await;
    assert_eq!(status, StatusCode::CONFLICT, "not on that network");

    let (status, answer) = h.detach(net, id).await;
    assert_eq!((status, answer), (StatusCode::ACCEPTED, json!(DETACHING)));
    let during = h.block(id).await;
    assert_eq!(
        (
            during["status"].as_str(),
            during["assignedResourceId"].as_str()
        ),
        (Some("unassigning"), Some(net))
    );
    let (status, _) = h.call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::CONFLICT);
    h.settle().await;
    let after = h.block(id).await;
    assert_eq!(after["status"], "unassigned");
    assert!(after["assignedResourceId"].is_null() && after["assignedResourceType"].is_null());
    assert!(network(&h, net).await["ipBlocks"]
        .as_array()
        .unwrap()
        .is_empty());
    let (status, _) = h.call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_network_takes_at_most_ten_blocks() {
    let h = Harness::start().await;
    let net = DEFAULT_PUBLIC_NETWORK_ID;
    for _ in 0..10 {
        let block = h.ccm_block_untagged("PHX").await;
        let (status, _) = h.attach(net, block["id"].as_str().unwrap()).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        h.settle().await;
    }
    let eleventh = h.ccm_block_untagged("PHX").await;
    let (status, answer) = h.attach(net, eleventh["id"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(answer["message"].as_str().unwrap().contains("10"));
}

#[tokio::test]
async fn a_transition_survives_a_restart_and_finishes_on_time() {
    let h = Harness::start().await;
    let block = h.ccm_block_untagged("PHX").await;
    let id = block["id"].as_str().unwrap().to_owned();
    h.attach(DEFAULT_PUBLIC_NETWORK_ID, &id).await;
    let h = h.restart().await;
    assert_eq!(
        h.block(&id).await["assignedResourceId"],
        DEFAULT_PUBLIC_NETWORK_ID
    );
    h.settle().await;
    assert_eq!(h.block(&id).await["status"], "assigned");
}

#[tokio::test]
async fn networks_are_created_patched_and_deleted_freeing_their_blocks() {
    let h = Harness::start().await;
    let block = h.ccm_block_untagged("PHX").await;
    let id = block["id"].as_str().unwrap();
    let body = json!({"name": "extra", "location": "PHX", "vlanId": 20, "ipBlocks": [{"id": id}]});
    let (status, created) = h
        .call(
            Method::POST,
            "/networks/v1/public-networks",
            Some(body.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["ipBlocks"][0]["id"], id);
    let (status, _) = h
        .call(Method::POST, "/networks/v1/public-networks", Some(body))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "the name is taken");
    let same_vlan = json!({"name": "other", "location": "PHX", "vlanId": 20});
    let (status, _) = h
        .call(
            Method::POST,
            "/networks/v1/public-networks",
            Some(same_vlan),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "VLAN 20 is taken");
    let bad = json!({"name": "1234", "location": "PHX", "vlanId": 1});
    let (status, answer) = h
        .call(Method::POST, "/networks/v1/public-networks", Some(bad))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["validationErrors"].as_array().unwrap().len(), 2);

    let net = created["id"].as_str().unwrap();
    let path = format!("/networks/v1/public-networks/{net}");
    let (status, patched) = h
        .call(Method::PATCH, &path, Some(json!({"name": "renamed"})))
        .await;
    assert_eq!(
        (status, patched["name"].as_str()),
        (StatusCode::OK, Some("renamed"))
    );
    let (status, _) = h.call(Method::DELETE, &path, None).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "busy while the block is assigning"
    );
    h.settle().await;
    let (status, _) = h.call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(h.block(id).await["status"], "unassigned");
    let (status, _) = h.call(Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

impl Harness {
    /// A /29 without tags in `location`.
    async fn ccm_block_untagged(&self, location: &str) -> Value {
        let body = json!({"location": location, "cidrBlockSize": "/29"});
        let (status, block) = self
            .call(Method::POST, "/ips/v1/ip-blocks", Some(body))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{block}");
        block
    }
}

#[tokio::test]
async fn a_member_using_a_block_keeps_it_from_being_detached_unless_forced() {
    let h = Harness::start().await;
    let net = DEFAULT_PUBLIC_NETWORK_ID;
    let block = h.ccm_block_untagged("PHX").await;
    let id = block["id"].as_str().unwrap();
    h.attach(net, id).await;
    h.settle().await;
    let servers = h.get("/bmc/v1/servers").await;
    let server = servers[0]["id"].as_str().unwrap();
    let join = format!("/bmc/v1/servers/{server}/network-configuration/public-network-configuration/public-networks");
    let (status, _) = h
        .call(
            Method::POST,
            &join,
            Some(json!({"id": net, "ips": ["192.0.2.1"]})),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "an address outside the network's blocks"
    );
    let (status, answer) = h
        .call(
            Method::POST,
            &join,
            Some(json!({"id": net, "ips": ["198.19.0.3"]})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    assert_eq!(
        (
            answer["statusDescription"].as_str(),
            answer["vlanId"].as_u64()
        ),
        (Some("assigned"), Some(10))
    );
    let (status, _) = h
        .call(
            Method::POST,
            &join,
            Some(json!({"id": net, "ips": ["198.19.0.4"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "already a member");
    let listed = network(&h, net).await;
    assert_eq!(listed["memberships"][0]["resourceId"], server);
    assert_eq!(listed["ipBlocks"][0]["usedIpsCount"], "1");
    assert_eq!(
        h.get(&format!("/bmc/v1/servers/{server}")).await["networkConfiguration"]
            ["publicNetworkConfiguration"]["publicNetworks"][0]["id"],
        net
    );

    let (status, _) = h.detach(net, id).await;
    assert_eq!(status, StatusCode::CONFLICT, "a member uses the block");
    let (status, _) = h
        .call(
            Method::DELETE,
            &format!("/networks/v1/public-networks/{net}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "the network has members");
    let forced = format!("/networks/v1/public-networks/{net}/ip-blocks/{id}?force=true");
    let (status, _) = h.call(Method::DELETE, &forced, None).await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let (status, _) = h.call(Method::DELETE, &format!("{join}/{net}"), None).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(network(&h, net).await["memberships"]
        .as_array()
        .unwrap()
        .is_empty());
    let (status, _) = h.call(Method::DELETE, &format!("{join}/{net}"), None).await;
    assert_eq!(status, StatusCode::CONFLICT, "no longer a member");
}

#[tokio::test]
async fn a_bad_query_string_is_400_in_the_error_format() {
    let h = Harness::start().await;
    let path =
        format!("/networks/v1/public-networks/{DEFAULT_PUBLIC_NETWORK_ID}/ip-blocks/x?force=yes");
    let (status, answer) = h.call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["message"].is_string());
    assert!(
        answer["validationErrors"][0]
            .as_str()
            .unwrap()
            .contains("force"),
        "{answer}"
    );
}
