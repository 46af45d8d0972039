//! A Node as the policy diff sees it: name, labels and taints, and which nodes a policy
//! selects.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;

use crate::labels::{glob_matches, LabelSelector};
use crate::spec::{NodeSelection, TaintEffect, TaintSpec};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveNode {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// The taints with an effect skyplan knows (every effect Kubernetes has).
    pub taints: Vec<TaintSpec>,
}

impl LiveNode {
    pub fn from_node(node: &Node) -> LiveNode {
        let taints = node.spec.as_ref().and_then(|s| s.taints.as_ref());
        LiveNode {
            name: node.metadata.name.clone().unwrap_or_default(),
            labels: node.metadata.labels.clone().unwrap_or_default(),
            taints: taints
                .into_iter()
                .flatten()
                .filter_map(|t| {
                    Some(TaintSpec {
                        key: t.key.clone(),
                        value: t.value.clone().filter(|v| !v.is_empty()),
                        effect: TaintEffect::parse(&t.effect)?,
                    })
                })
                .collect(),
        }
    }

    pub fn taint(&self, key: &str, effect: TaintEffect) -> Option<&TaintSpec> {
        self.taints
            .iter()
            .find(|t| t.key == key && t.effect == effect)
    }
}

/// The nodes a policy covers, sorted by name. A selector the config accepted always parses;
/// one that no longer does (a state written by another version) selects nothing.
pub fn selected<'n>(selection: &NodeSelection, nodes: &'n [LiveNode]) -> Vec<&'n LiveNode> {
    let mut chosen: Vec<&LiveNode> = match selection {
        NodeSelection::Selector(text) => match LabelSelector::parse(text) {
            Ok(selector) => nodes
                .iter()
                .filter(|n| selector.matches(&n.labels))
                .collect(),
            Err(_) => vec![],
        },
        NodeSelection::Names(globs) => nodes
            .iter()
            .filter(|n| globs.iter().any(|g| glob_matches(g, &n.name)))
            .collect(),
    };
    chosen.sort_by(|a, b| a.name.cmp(&b.name));
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, labels: &[(&str, &str)]) -> LiveNode {
        LiveNode {
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints: vec![],
        }
    }

    #[test]
    fn a_policy_selects_by_labels_or_by_name() {
        let nodes = [
            node("worker-2", &[("role", "web")]),
            node("worker-1", &[("role", "db")]),
            node("control-1", &[]),
        ];
        let names = |chosen: Vec<&LiveNode>| -> Vec<String> {
            chosen.into_iter().map(|n| n.name.clone()).collect()
        };
        let by_label = NodeSelection::Selector("role=web".into());
        assert_eq!(names(selected(&by_label, &nodes)), ["worker-2"]);
        let by_name = NodeSelection::Names(vec!["worker-*".into()]);
        assert_eq!(names(selected(&by_name, &nodes)), ["worker-1", "worker-2"]);
        let all = NodeSelection::Selector(String::new());
        assert_eq!(selected(&all, &nodes).len(), 3);
    }

    #[test]
    fn taints_are_read_with_their_effect() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "n1", "labels": {"a": "b"}},
            "spec": {"taints": [
                {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                {"key": "gone", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}
            ]}
        }))
        .unwrap();
        let live = LiveNode::from_node(&node);
        assert_eq!(live.labels["a"], "b");
        assert_eq!(live.taints.len(), 2);
        assert_eq!(
            live.taint("gone", TaintEffect::NoExecute).unwrap().value,
            None
        );
    }
}
