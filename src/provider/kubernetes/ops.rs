//! The Kubernetes provider's one operation: a patch of one Node's labels and taints. The plan
//! lists what changes; apply re-reads the node and computes the whole taint list from it, so
//! the operation holds the intended changes, not the list to write.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{TaintEffect, TaintSpec};

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

impl TaintSpec {
    pub fn id(&self) -> TaintId {
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
        };
        assert_eq!(
            op.to_string(),
            "patch node node-1: labels +tier=web -old, taints +dedicated=web:NoSchedule -x:NoExecute"
        );
    }
}
