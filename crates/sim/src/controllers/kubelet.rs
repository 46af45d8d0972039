//! Not part of the CCM: what the kubelet and kube-controller-manager do to a node whose
//! machine stops or disappears. Its kubelet stops posting status, so after the grace period
//! the node's Ready condition becomes `Unknown` (reason `NodeStatusUnknown`); when the
//! machine runs again the kubelet reports Ready. Without this stand-in the embedded world's
//! nodes would stay Ready forever and the lifecycle controller would never act.

use serde_json::{json, Value};

use super::http::{Cloud, Kube, MERGE_PATCH};
use super::objects::Node;
use super::servers::server_of;

pub const UNKNOWN_REASON: &str = "NodeStatusUnknown";
const KUBELET_REASON: &str = "KubeletReady";

/// Only nodes with a providerID are followed: the others are not initialised yet, and a
/// server found by name only is not certainly the node's machine.
pub async fn follow_servers(kube: &Kube, cloud: &Cloud, raw_nodes: &[Value]) {
    for raw in raw_nodes {
        let Some(node) = Node::from_json(raw) else {
            continue;
        };
        if node.provider_id().is_none() {
            continue;
        }
        let running = match server_of(cloud, &node).await {
            Ok(Some(server)) => server.status == "running",
            Ok(None) => false,
            Err(_) => continue,
        };
        if let Some(conditions) = next_conditions(raw, running) {
            let body = json!({"status": {"conditions": conditions}});
            let path = format!("/api/v1/nodes/{}/status", node.metadata.name);
            if let Err(e) = kube.patch(&path, MERGE_PATCH, &body).await {
                tracing::debug!(node = %node.metadata.name, error = %e, "node condition");
            }
        }
    }
}

/// The conditions with Ready turned Unknown (machine down) or back True (machine up, and the
/// Unknown was ours); `None` when nothing changes.
pub fn next_conditions(raw: &Value, running: bool) -> Option<Vec<Value>> {
    let mut conditions: Vec<Value> = raw["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let index = conditions.iter().position(|c| c["type"] == "Ready");
    let current = index.map(|i| conditions[i].clone()).unwrap_or(Value::Null);
    let ready = current["status"] == "True";
    let ours = current["reason"] == UNKNOWN_REASON;
    let replacement = match (running, ready) {
        (false, true) => json!({
            "type": "Ready", "status": "Unknown", "reason": UNKNOWN_REASON,
            "message": "Kubelet stopped posting node status.",
        }),
        (true, false) if ours => json!({
            "type": "Ready", "status": "True", "reason": KUBELET_REASON,
            "message": "kubelet is posting ready status",
        }),
        _ => return None,
    };
    match index {
        Some(i) => conditions[i] = replacement,
        None => conditions.push(replacement),
    }
    Some(conditions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_follows_the_machine_but_leaves_other_causes_alone() {
        let ready = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let down = next_conditions(&ready, false).unwrap();
        assert_eq!(down[0]["status"], "Unknown");
        assert_eq!(next_conditions(&ready, true), None);
        let unknown = json!({"status": {"conditions": down}});
        assert_eq!(
            next_conditions(&unknown, true).unwrap()[0]["status"],
            "True"
        );
        let not_ready = json!({"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}});
        assert_eq!(next_conditions(&not_ready, true), None);
    }
}
