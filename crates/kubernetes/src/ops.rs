//! The Kubernetes provider's one operation: a patch of one Node's labels and taints. The plan
//! lists what changes and what it read of the keys the policy manages; apply re-reads the node,
//! refuses it when one of those keys changed since (the plan no longer describes it), and
//! otherwise computes the whole taint list from the fresh node, so the operation holds the
//! intended changes, not the list to write.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::nodes::live::LiveNode;
use crate::spec::{TaintEffect, TaintSpec};

/// A taint identified as kubectl does: by key and effect.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaintId {
    pub key: String,
    pub effect: TaintEffect,
}

impl fmt::Display for TaintId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.key, self.effect)
    }
}

/// A taint spec's identity ([`TaintSpec`] is the model's; its identity is kubectl's).
pub trait TaintKey {
    fn id(&self) -> TaintId;
}

impl TaintKey for TaintSpec {
    fn id(&self) -> TaintId {
        TaintId {
            key: self.key.clone(),
            effect: self.effect,
        }
    }
}

/// `patch node NAME`: labels to set or remove, taints to put (added, or a new value) or remove.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Op {
    pub node: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set_labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub put_taints: Vec<TaintSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_taints: Vec<TaintId>,
    /// What the plan read of the keys the policy manages on the node (`None` in a plan saved
    /// before skyplan recorded it: such a patch is computed on the fresh node alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<ManagedKeys>,
}

/// The labels and taints a policy manages on one node, as they were when read: every label
/// key with its value (`None`: absent), every taint (key and effect) with the node's taint of
/// that id if it had one. Others' labels and taints are not in it: a change to them is not a
/// change to what the plan decided.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ManagedKeys {
    pub labels: BTreeMap<String, Option<String>>,
    pub taint_ids: Vec<TaintId>,
    /// The node's taints among `taint_ids`, in id order.
    pub taints: Vec<TaintSpec>,
}

impl ManagedKeys {
    /// The keys `labels` and `taint_ids` as `node` holds them.
    pub fn read(
        labels: impl IntoIterator<Item = String>,
        mut taint_ids: Vec<TaintId>,
        node: &LiveNode,
    ) -> ManagedKeys {
        taint_ids.sort();
        taint_ids.dedup();
        let labels = labels
            .into_iter()
            .map(|key| {
                let value = node.labels.get(&key).cloned();
                (key, value)
            })
            .collect();
        let taints = taint_ids
            .iter()
            .filter_map(|id| node.taint(&id.key, id.effect).cloned())
            .collect();
        ManagedKeys {
            labels,
            taint_ids,
            taints,
        }
    }

    /// The same keys as `node` holds them now.
    pub fn reread(&self, node: &LiveNode) -> ManagedKeys {
        ManagedKeys::read(self.labels.keys().cloned(), self.taint_ids.clone(), node)
    }

    /// The keys whose value differs in `now`, as `labels.KEY` / `taints.KEY:Effect` with the
    /// two values (for the refusal's message).
    pub fn changed_in(&self, now: &ManagedKeys) -> Vec<String> {
        let shown = |v: Option<&String>| v.map_or("(none)".to_string(), |v| format!("{v:?}"));
        let labels = self.labels.iter().filter_map(|(key, then)| {
            let current = now.labels.get(key).cloned().flatten();
            (then != &current).then(|| {
                let (then, current) = (shown(then.as_ref()), shown(current.as_ref()));
                format!("labels.{key}: {then} then, {current} now")
            })
        });
        let taint = |set: &[TaintSpec], id: &TaintId| {
            let found = set.iter().find(|t| &t.id() == id);
            found.map_or("(none)".to_string(), |t| format!("{:?}", taint_text(t)))
        };
        let taints = self.taint_ids.iter().filter_map(|id| {
            let (then, current) = (taint(&self.taints, id), taint(&now.taints, id));
            (then != current).then(|| format!("taints.{id}: {then} then, {current} now"))
        });
        labels.chain(taints).collect()
    }
}

impl Op {
    pub fn is_empty(&self) -> bool {
        self.set_labels.is_empty()
            && self.remove_labels.is_empty()
            && self.put_taints.is_empty()
            && self.remove_taints.is_empty()
    }
}

fn taint_text(taint: &TaintSpec) -> String {
    match &taint.value {
        Some(value) => format!("{}={value}:{}", taint.key, taint.effect),
        None => format!("{}:{}", taint.key, taint.effect),
    }
}

impl fmt::Display for Op {
    /// `patch node node-1: labels +tier=web -old, taints +dedicated=web:NoSchedule -x:NoExecute`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels: Vec<String> = (self.set_labels.iter().map(|(k, v)| format!("+{k}={v}")))
            .chain(self.remove_labels.iter().map(|k| format!("-{k}")))
            .collect();
        let taints: Vec<String> = (self
            .put_taints
            .iter()
            .map(|t| format!("+{}", taint_text(t))))
        .chain(self.remove_taints.iter().map(|t| format!("-{t}")))
        .collect();
        let mut parts = Vec::new();
        if !labels.is_empty() {
            parts.push(format!("labels {}", labels.join(" ")));
        }
        if !taints.is_empty() {
            parts.push(format!("taints {}", taints.join(" ")));
        }
        write!(f, "patch node {}: {}", self.node, parts.join(", "))
    }
}

/// The operation as a plan carries it.
pub fn planned(op: Op) -> skyplan_core::plan::Operation {
    skyplan_core::plan::Operation::new(super::PROVIDER, &op)
}

impl Op {
    /// This provider's operation in a plan's `operation` (`None` for another's).
    pub fn of(operation: &skyplan_core::plan::Operation) -> Option<Op> {
        operation.read(super::PROVIDER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_reads_as_the_patch_it_makes() {
        let op = Op {
            node: "node-1".into(),
            set_labels: [("tier".to_string(), "web".to_string())].into(),
            remove_labels: vec!["old".into()],
            put_taints: vec![TaintSpec {
                key: "dedicated".into(),
                value: Some("web".into()),
                effect: TaintEffect::NoSchedule,
            }],
            remove_taints: vec![TaintId {
                key: "x".into(),
                effect: TaintEffect::NoExecute,
            }],
            read: None,
        };
        assert_eq!(
            op.to_string(),
            "patch node node-1: labels +tier=web -old, taints +dedicated=web:NoSchedule -x:NoExecute"
        );
    }
}
