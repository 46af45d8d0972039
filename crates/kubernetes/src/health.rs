//! What the rollout's health gate reads of a Kubernetes resource after a change.
//!
//! A node policy is healthy when every node it selects reports the condition `Ready` =
//! `True`: a label or taint it changed can move workloads (and load-balancer members) off or
//! onto a node, so the gate waits for the nodes to be serving. A cluster is always healthy:
//! skyplan never changes one (it only records or forgets it). The provider manages no Service
//! itself: a Service-bound load balancer's ingress is its cloud provider's health to read.

use k8s_openapi::api::core::v1::{Node, NodeCondition};

use crate::nodes::live::{selected, LiveNode};
use crate::spec::NodePolicySpec;
use skyplan_core::provider::Health;

/// The health of the nodes `policy` selects among `nodes` (every node of its cluster, read
/// now). Selecting no node is healthy: there is nothing the change could have taken down.
pub fn policy_health(policy: &NodePolicySpec, nodes: &[Node]) -> Health {
    let live: Vec<LiveNode> = nodes.iter().map(LiveNode::from_node).collect();
    let chosen = selected(&policy.selection, &live);
    let problems = chosen
        .iter()
        .filter_map(|live| {
            let node = nodes
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(live.name.as_str()))?;
            not_ready(node)
        })
        .collect();
    Health::from_problems(problems)
}

/// Why `node` is not Ready, in words (`node node-2: Ready False (KubeletNotReady)`), or `None`
/// when it is.
pub fn not_ready(node: &Node) -> Option<String> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let Some(ready) = ready_condition(node) else {
        return Some(format!("node {name}: no Ready condition"));
    };
    if ready.status == "True" {
        return None;
    }
    let reason = ready
        .reason
        .as_deref()
        .filter(|r| !r.is_empty())
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    Some(format!("node {name}: Ready {}{reason}", ready.status))
}

fn ready_condition(node: &Node) -> Option<&NodeCondition> {
    let status = node.status.as_ref()?;
    let conditions = status.conditions.as_ref()?;
    conditions.iter().find(|c| c.type_ == "Ready")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::spec::NodeSelection;

    fn node(name: &str, role: &str, ready: Option<(&str, &str)>) -> Node {
        let conditions = ready
            .map(|(status, reason)| {
                vec![json!({"type": "Ready", "status": status, "reason": reason})]
            })
            .unwrap_or_default();
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"role": role}},
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    fn policy(selector: &str) -> NodePolicySpec {
        NodePolicySpec {
            cluster: "cluster.lab".parse().unwrap(),
            selection: NodeSelection::Selector(selector.into()),
            labels: BTreeMap::new(),
            taints: vec![],
        }
    }

    #[test]
    fn a_policy_is_healthy_when_every_node_it_selects_is_ready() {
        let nodes = [
            node("node-1", "web", Some(("True", "KubeletReady"))),
            node("node-2", "db", Some(("False", "KubeletNotReady"))),
        ];
        assert_eq!(policy_health(&policy("role=web"), &nodes), Health::Healthy);
    }

    #[test]
    fn each_selected_node_not_ready_is_named_with_its_status_and_reason() {
        let nodes = [
            node("node-1", "web", Some(("True", "KubeletReady"))),
            node("node-2", "web", Some(("False", "KubeletNotReady"))),
            node("node-3", "web", None),
            node("node-4", "web", Some(("Unknown", ""))),
        ];
        assert_eq!(
            policy_health(&policy("role=web"), &nodes),
            Health::Unhealthy(vec![
                "node node-2: Ready False (KubeletNotReady)".into(),
                "node node-3: no Ready condition".into(),
                "node node-4: Ready Unknown".into(),
            ])
        );
    }

    #[test]
    fn a_policy_selecting_no_node_is_healthy() {
        let nodes = [node("node-1", "db", Some(("False", "KubeletNotReady")))];
        assert_eq!(policy_health(&policy("role=web"), &nodes), Health::Healthy);
    }
}
