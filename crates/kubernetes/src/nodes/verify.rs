//! Apply holds the nodes to the plan: each patched Node, as the API answered the patch, carries
//! the labels and taints the operation set and none it removed. Costs nothing: the answers
//! are the nodes after the patch.

use k8s_openapi::api::core::v1::Node;

use crate::ops::Op;
use skyplan_core::model::Impact;
use skyplan_core::plan::{ResourceChange, Verification};

/// What differs between what `op` meant to leave on its node and the node as patched.
pub fn differences(op: &Op, node: &Node) -> Vec<String> {
    let name = &op.node;
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    let has_taint =
        |key: &str, effect: &str| taints.iter().find(|t| t.key == key && t.effect == effect);
    let mut found = Vec::new();
    for (key, value) in &op.set_labels {
        if labels.get(key) != Some(value) {
            found.push(format!("node {name}: label {key} is not {value}"));
        }
    }
    for key in &op.remove_labels {
        if labels.contains_key(key) {
            found.push(format!("node {name}: label {key} is still set"));
        }
    }
    for taint in &op.put_taints {
        let put = has_taint(&taint.key, taint.effect.as_str());
        if put.is_none_or(|t| t.value != taint.value) {
            found.push(format!("node {name}: taint {} is missing", taint.key));
        }
    }
    for taint in &op.remove_taints {
        if has_taint(&taint.key, taint.effect.as_str()).is_some() {
            found.push(format!("node {name}: taint {taint} is still set"));
        }
    }
    found
}

/// The verification of a policy's patches, each op beside the node its patch returned. A node
/// left short of the plan did less than predicted: reported, never an under-prediction.
pub fn verify(change: &ResourceChange, patched: &[(Op, Node)]) -> Verification {
    let predicted: Impact = change.impact();
    Verification {
        address: change.address.to_string(),
        predicted,
        observed: predicted,
        differences: patched
            .iter()
            .flat_map(|(op, node)| differences(op, node))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{TaintEffect, TaintSpec};

    fn node(labels: serde_json::Value, taints: serde_json::Value) -> Node {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "n1", "labels": labels},
            "spec": {"taints": taints},
        }))
        .unwrap()
    }

    fn op() -> Op {
        Op {
            node: "n1".into(),
            set_labels: [("tier".to_string(), "web".to_string())].into(),
            remove_labels: vec!["old".into()],
            put_taints: vec![TaintSpec {
                key: "dedicated".into(),
                value: Some("web".into()),
                effect: TaintEffect::NoSchedule,
            }],
            remove_taints: vec![],
            read: None,
        }
    }

    #[test]
    fn a_node_as_patched_is_as_predicted() {
        let patched = node(
            serde_json::json!({"tier": "web"}),
            serde_json::json!([{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]),
        );
        assert!(differences(&op(), &patched).is_empty());
    }

    #[test]
    fn what_the_patch_did_not_leave_is_named() {
        let patched = node(serde_json::json!({"old": "x"}), serde_json::json!([]));
        let found = differences(&op(), &patched);
        assert_eq!(
            found,
            [
                "node n1: label tier is not web",
                "node n1: label old is still set",
                "node n1: taint dedicated is missing"
            ]
        );
    }
}
