//! Node initialisation and the lifecycle taints against both simulators.

use serde_json::json;

use super::Harness;
use crate::controllers::nodes::{SHUTDOWN_TAINT, UNINITIALIZED_TAINT};

fn taint_keys(node: &serde_json::Value) -> Vec<String> {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["key"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_node_controller_initialises_nodes_from_their_servers() {
    let mut h = Harness::start().await;
    assert!(taint_keys(&h.node("node-1").await).contains(&UNINITIALIZED_TAINT.to_string()));
    h.passes(1).await;
    let uuid = h.server_uuid("node-1").await;
    let node = h.node("node-1").await;
    assert_eq!(node["spec"]["providerID"], format!("cloudscale://{uuid}"));
    assert!(taint_keys(&node).is_empty(), "{node}");
    let labels = &node["metadata"]["labels"];
    assert_eq!(labels["node.kubernetes.io/instance-type"], "flex-8-4");
    assert_eq!(labels["beta.kubernetes.io/instance-type"], "flex-8-4");
    assert_eq!(labels["topology.kubernetes.io/zone"], "lpg1");
    assert_eq!(labels["failure-domain.beta.kubernetes.io/region"], "lpg");
    let addresses: Vec<String> = node["status"]["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(addresses, ["Hostname", "ExternalIP", "InternalIP"]);
    assert_eq!(node["status"]["addresses"][0]["address"], "node-1");
}

#[tokio::test]
async fn a_node_without_a_server_stays_uninitialised() {
    let mut h = Harness::start().await;
    let stray = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "stray"},
        "spec": {"taints": [{"key": UNINITIALIZED_TAINT, "value": "true", "effect": "NoSchedule"}]},
    });
    h.kube.post("/api/v1/nodes", &stray).await.unwrap();
    h.passes(1).await;
    let node = h.node("stray").await;
    // Admission's not-ready taint stays too: nothing here makes the node Ready.
    assert_eq!(
        taint_keys(&node),
        [UNINITIALIZED_TAINT, "node.kubernetes.io/not-ready"]
    );
    assert!(node["spec"]["providerID"].is_null());
    assert!(taint_keys(&h.node("node-2").await).is_empty());
}

#[tokio::test]
async fn a_stopped_server_taints_its_node_and_a_started_one_untaints_it() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    let uuid = h.server_uuid("node-2").await;
    h.cloud
        .post(&format!("servers/{uuid}/stop"), &json!({}))
        .await
        .unwrap();
    h.passes(1).await;
    let node = h.node("node-2").await;
    assert_eq!(taint_keys(&node), [SHUTDOWN_TAINT], "{node}");
    let ready = node["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()
        .clone();
    assert_eq!(ready["status"], "Unknown");
    assert!(taint_keys(&h.node("node-1").await).is_empty());

    h.cloud
        .post(&format!("servers/{uuid}/start"), &json!({}))
        .await
        .unwrap();
    h.passes(2).await;
    assert!(taint_keys(&h.node("node-2").await).is_empty());
}

#[tokio::test]
async fn a_node_whose_server_is_gone_is_deleted() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    let uuid = h.server_uuid("node-3").await;
    h.cloud.delete(&format!("servers/{uuid}")).await.unwrap();
    h.passes(1).await;
    let gone = h.kube.get("/api/v1/nodes/node-3").await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
    assert!(h.kube.get("/api/v1/nodes/node-1").await.is_ok());
}
