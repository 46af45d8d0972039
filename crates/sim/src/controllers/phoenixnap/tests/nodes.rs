//! Node initialisation and lifecycle from the BMC servers.

use serde_json::Value;

use super::Harness;
use crate::controllers::nodes::{SHUTDOWN_TAINT, UNINITIALIZED_TAINT};

fn has_taint(node: &Value, key: &str) -> bool {
    node["spec"]["taints"]
        .as_array()
        .is_some_and(|taints| taints.iter().any(|t| t["key"] == key))
}

async fn server(h: &Harness, hostname: &str) -> Value {
    let servers = h.api.bmc.list("/servers").await.unwrap();
    servers
        .into_iter()
        .find(|s| s["hostname"] == hostname)
        .unwrap()
}

async fn node(h: &Harness, name: &str) -> Value {
    h.kube.get(&format!("/api/v1/nodes/{name}")).await.unwrap()
}

#[tokio::test]
async fn nodes_get_provider_id_type_location_and_addresses_from_their_server() {
    let mut h = Harness::start().await;
    assert!(has_taint(&node(&h, "node-1").await, UNINITIALIZED_TAINT));
    h.passes(1).await;
    for name in ["node-1", "node-2", "node-3"] {
        let node = node(&h, name).await;
        let server = server(&h, name).await;
        let id = server["id"].as_str().unwrap();
        assert_eq!(node["spec"]["providerID"], format!("phoenixnap://{id}"));
        assert!(!has_taint(&node, UNINITIALIZED_TAINT), "{node}");
        let labels = &node["metadata"]["labels"];
        for key in [
            "node.kubernetes.io/instance-type",
            "beta.kubernetes.io/instance-type",
        ] {
            assert_eq!(labels[key], server["type"], "{key}");
        }
        for key in [
            "topology.kubernetes.io/region",
            "failure-domain.beta.kubernetes.io/region",
        ] {
            assert_eq!(labels[key], "PHX", "{key}");
        }
        assert!(labels.get("topology.kubernetes.io/zone").is_none());
        let addresses: Vec<(String, String)> = node["status"]["addresses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["type"].as_str().unwrap().into(),
                    a["address"].as_str().unwrap().into(),
                )
            })
            .collect();
        let mut expected = vec![("Hostname".to_owned(), name.to_owned())];
        for ip in server["publicIpAddresses"].as_array().unwrap() {
            expected.push(("ExternalIP".into(), ip.as_str().unwrap().into()));
        }
        for ip in server["privateIpAddresses"].as_array().unwrap() {
            expected.push(("InternalIP".into(), ip.as_str().unwrap().into()));
        }
        assert_eq!(addresses, expected);
    }
}

#[tokio::test]
async fn a_powered_off_server_taints_its_node_and_a_deleted_one_removes_it() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    let one = server(&h, "node-1").await;
    let two = server(&h, "node-2").await;
    let path = |s: &Value, rest: &str| format!("/servers/{}{rest}", s["id"].as_str().unwrap());
    h.api
        .bmc
        .post(&path(&one, "/actions/power-off"), &serde_json::json!({}))
        .await
        .unwrap();
    h.api.bmc.delete(&path(&two, "")).await.unwrap();
    // The kubelet falls silent in one pass; the lifecycle controller acts in the same pass.
    h.passes(1).await;
    assert!(has_taint(&node(&h, "node-1").await, SHUTDOWN_TAINT));
    let gone = h.kube.get("/api/v1/nodes/node-2").await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
    assert!(!has_taint(&node(&h, "node-3").await, SHUTDOWN_TAINT));

    h.api
        .bmc
        .post(&path(&one, "/actions/power-on"), &serde_json::json!({}))
        .await
        .unwrap();
    h.passes(1).await;
    assert!(!has_taint(&node(&h, "node-1").await, SHUTDOWN_TAINT));
}
