//! The node policy's health read (the rollout's health gate) against the real kube-apiserver:
//! nobody sets Ready there, so the test writes each node's status through the status
//! subresource, as a kubelet would, and the provider must read it back as the gate sees it.

use std::collections::BTreeMap;

use serde_json::json;

use crate::kubernetes::real_apiserver::RealCluster;
use skyplan_core::config::{load_texts, ConfigSection};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::ResourceChange;
use skyplan_core::provider::{Health, Provider};
use skyplan_core::state::ResourceState;
use skyplan_kubernetes::spec::NodePolicySpec;
use skyplan_kubernetes::{KubernetesConfig, KubernetesProvider};

static SECTIONS: &[&dyn ConfigSection] = &[&KubernetesConfig];

/// The provider connected to the real server, and the state entry apply leaves for a policy
/// over this test's nodes.
async fn provider_and_entry(cluster: &RealCluster) -> (KubernetesProvider, ResourceState) {
    let policy = format!(
        "[nodes.web]\ncluster = \"prod\"\nnames = [\"{}-node-*\"]\nlabels = {{ tier = \"web\" }}\n",
        cluster.prefix
    );
    let text = format!("{}\n{policy}", cluster.cluster_toml());
    let root = tempfile::tempdir().unwrap();
    let config = load_texts(root.path(), &[("skyplan.toml", &text)], SECTIONS).unwrap();
    let provider = KubernetesProvider::connect(&config, None, vec![], BTreeMap::new())
        .await
        .unwrap();
    let web = config
        .resources
        .iter()
        .find(|r| r.address.kind == ResourceKind::Nodes);
    let spec: &NodePolicySpec = web.unwrap().spec.get().unwrap();
    let entry = ResourceState {
        provider: "kubernetes".into(),
        id: "nodes.web".into(),
        ids: json!(null),
        attributes: serde_json::to_value(spec).unwrap(),
        depends_on: vec![],
    };
    (provider, entry)
}

fn set_ready(cluster: &RealCluster, node: &str, status: &str, reason: &str) {
    let body = json!({"status": {"conditions": [{
        "type": "Ready", "status": status, "reason": reason,
        "lastHeartbeatTime": "2026-11-27T00:00:00Z",
        "lastTransitionTime": "2026-11-27T00:00:00Z",
    }]}});
    let patch = body.to_string();
    let args = [
        "patch",
        "node",
        node,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ];
    cluster.kubectl_ok(&args);
}

#[tokio::test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
async fn a_policy_is_healthy_while_its_nodes_are_ready_and_names_the_node_that_is_not() {
    let cluster = RealCluster::get();
    let nodes: Vec<String> = (1..=2)
        .map(|i| cluster.ready_node(&format!("node-{i}"), json!({}), &format!("10.9.1.{i}")))
        .collect();
    let (provider, entry) = provider_and_entry(&cluster).await;
    let change =
        ResourceChange::no_op(Address::new(ResourceKind::Nodes, "web"), "kubernetes", None);

    let health = provider.health(&change, Some(&entry)).await.unwrap();
    assert_eq!(health, Health::Healthy);

    set_ready(&cluster, &nodes[1], "False", "KubeletNotReady");
    let health = provider.health(&change, Some(&entry)).await.unwrap();
    let expected = format!("node {}: Ready False (KubeletNotReady)", nodes[1]);
    assert_eq!(health, Health::Unhealthy(vec![expected]));

    set_ready(&cluster, &nodes[1], "True", "KubeletReady");
    let health = provider.health(&change, Some(&entry)).await.unwrap();
    assert_eq!(
        health,
        Health::Healthy,
        "read fresh each time, not once per run"
    );
    assert_eq!(
        provider.health(&change, None).await.unwrap(),
        Health::Healthy,
        "deleted"
    );
}
