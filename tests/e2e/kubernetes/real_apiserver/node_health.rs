//! The node policy's health read (the rollout's health gate) against the real kube-apiserver:
//! nobody sets Ready there, so the test writes each node's status through the status
//! subresource, as a kubelet would, and the provider must read it back as the gate sees it.

use serde_json::json;

use crate::kubernetes::real_apiserver::RealCluster;
use crate::support::node_health::PolicyHealth;
use skyplan_core::provider::Health;

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
    let policy = format!(
        "[nodes.web]\ncluster = \"prod\"\nnames = [\"{}-node-*\"]\nlabels = {{ tier = \"web\" }}\n",
        cluster.prefix
    );
    let gate = PolicyHealth::connect(&format!("{}\n{policy}", cluster.cluster_toml())).await;
    assert_eq!(gate.read().await.unwrap(), Health::Healthy);

    set_ready(&cluster, &nodes[1], "False", "KubeletNotReady");
    let expected = format!("node {}: Ready False (KubeletNotReady)", nodes[1]);
    assert_eq!(
        gate.read().await.unwrap(),
        Health::Unhealthy(vec![expected])
    );

    set_ready(&cluster, &nodes[1], "True", "KubeletReady");
    let again = gate.read().await.unwrap();
    assert_eq!(
        again,
        Health::Healthy,
        "read fresh each time, not once per run"
    );
    assert_eq!(gate.read_deleted().await.unwrap(), Health::Healthy);
}
