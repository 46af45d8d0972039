//! Controllers held to a scope (`sim serve --ccm-namespace --ccm-node-selector`): on a server
//! shared with others they initialise only the selected Nodes and reconcile only the one
//! namespace's Services.

use serde_json::json;

use super::Harness;
use crate::controllers::http::{Kube, KubeEndpoint, Scope, MERGE_PATCH};
use crate::controllers::nodes::UNINITIALIZED_TAINT;

#[tokio::test]
async fn scoped_controllers_leave_other_nodes_and_namespaces_alone() {
    let mut h = Harness::start().await;
    let label = json!({"metadata": {"labels": {"team": "mine"}}});
    h.kube
        .patch("/api/v1/nodes/node-1", MERGE_PATCH, &label)
        .await
        .unwrap();
    let theirs = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "theirs"}});
    h.kube.post("/api/v1/namespaces", &theirs).await.unwrap();
    let service = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
               "spec": {"type": "LoadBalancer", "selector": {"app": name},
                        "ports": [{"name": "http", "port": 80}]}})
    };
    let path = |ns: &str| format!("/api/v1/namespaces/{ns}/services");
    h.kube
        .post(&path("default"), &service("mine"))
        .await
        .unwrap();
    h.kube
        .post(&path("theirs"), &service("other"))
        .await
        .unwrap();

    let endpoint = KubeEndpoint {
        scope: Scope {
            namespace: Some("default".into()),
            node_selector: Some("team=mine".into()),
        },
        ..KubeEndpoint::plain(&h.kube_url)
    };
    h.options.kube = Kube::connect(&endpoint).unwrap();
    h.restart_controllers();
    h.passes(2).await;

    let tainted = |node: &serde_json::Value| {
        node["spec"]["taints"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["key"] == UNINITIALIZED_TAINT))
    };
    assert!(!tainted(&h.node("node-1").await), "selected: initialised");
    assert!(tainted(&h.node("node-2").await), "not selected: left alone");
    let mine = h.service("mine").await;
    assert!(mine["metadata"]["finalizers"].is_array(), "{mine:#}");
    let other = h
        .kube
        .get(&format!("{}/other", path("theirs")))
        .await
        .unwrap();
    assert!(other["metadata"].get("finalizers").is_none(), "{other:#}");
    assert!(other["metadata"]["annotations"].is_null(), "{other:#}");
    let balancers = h.list("load-balancers").await;
    assert_eq!(balancers.len(), 1, "only mine: {balancers:#?}");
    // The members are node-1's alone: the CCM sees no other node.
    let pools = h.list("load-balancers/pools").await;
    let pool = pools[0]["uuid"].as_str().unwrap();
    let members = h
        .list(&format!("load-balancers/pools/{pool}/members"))
        .await;
    let node_1 = h.node("node-1").await;
    let internal = node_1["status"]["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["type"] == "InternalIP")
        .unwrap()["address"]
        .clone();
    assert_eq!(members.len(), 1, "{members:#?}");
    assert_eq!(members[0]["address"], internal);
}
