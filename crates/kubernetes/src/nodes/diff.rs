//! One node against a policy: the labels and taints the policy lists, and those it set
//! before but no longer lists (remembered in the state), each an attribute change of one row
//! of the impact table, and the one patch that makes them. Labels and taints set by others are
//! never touched.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::impact::{rule, Change};
use super::live::LiveNode;
use crate::ops::{ManagedKeys, Op, TaintId, TaintKey};
use crate::spec::{TaintEffect, TaintSpec};
use skyplan_core::plan::AttributeChange;

/// What a policy keeps on its nodes, now (`desired`) and as last applied (`before`).
pub struct Wanted<'a> {
    pub labels: &'a BTreeMap<String, String>,
    pub taints: &'a [TaintSpec],
    pub before_labels: Option<&'a BTreeMap<String, String>>,
    pub before_taints: Option<&'a [TaintSpec]>,
    /// The attributes (`nodes.NODE.labels.KEY`) left as each node has them: neither changed
    /// nor held to the plan (`ignore-changes`).
    pub left_alone: &'a dyn Fn(&str) -> bool,
}

/// Leaves every attribute to the policy.
pub fn nothing_left_alone(_: &str) -> bool {
    false
}

/// Whether `path` names attributes of one node, as the plan spells them below
/// `nodes.NODE.`: `labels`, `labels.KEY`, `taints`, `taints.KEY:EFFECT`.
pub fn check_attribute_path(path: &str) -> Result<(), String> {
    let well_formed = match path.split_once('.') {
        None => path == "labels" || path == "taints",
        Some(("labels", key)) => !key.is_empty(),
        Some(("taints", id)) => id
            .rsplit_once(':')
            .is_some_and(|(key, effect)| !key.is_empty() && TaintEffect::parse(effect).is_some()),
        Some(_) => false,
    };
    if well_formed {
        return Ok(());
    }
    Err("a node policy's attributes are each node's `labels.KEY` and `taints.KEY:EFFECT` (as the plan spells them: `nodes.NODE.labels.KEY`); write `labels.tier` or `taints.dedicated:NoSchedule` for every node, `nodes.NODE.labels.tier` for one".into())
}

/// The changes on one node, and the patch (empty when the node already conforms).
pub fn diff_node(wanted: &Wanted<'_>, node: &LiveNode) -> (Vec<AttributeChange>, Op) {
    let mut changes = Vec::new();
    let mut op = Op {
        node: node.name.clone(),
        ..Op::default()
    };
    let left_alone = |path: &str| (wanted.left_alone)(&node_path(node, path));
    for (key, value) in wanted.labels {
        let current = node.labels.get(key);
        if current != Some(value) && !left_alone(&label_path(key)) {
            let before = current.map_or(Value::Null, |v| json!(v));
            changes.push(change(
                node,
                label_path(key),
                before,
                json!(value),
                Change::LabelSet,
                "",
            ));
            op.set_labels.insert(key.clone(), value.clone());
        }
    }
    for key in wanted.before_labels.into_iter().flat_map(|l| l.keys()) {
        let Some(current) = node.labels.get(key) else {
            continue;
        };
        let path = label_path(key);
        if !wanted.labels.contains_key(key) && !left_alone(&path) {
            changes.push(change(
                node,
                path,
                json!(current),
                Value::Null,
                Change::LabelRemoved,
                "",
            ));
            op.remove_labels.push(key.clone());
        }
    }
    for taint in wanted.taints {
        let current = node.taint(&taint.key, taint.effect);
        if current == Some(taint) || left_alone(&taint_path(&taint.id())) {
            continue;
        }
        let (kind, note) = match (taint.effect, current) {
            (TaintEffect::NoExecute, None) => (Change::NoExecuteTaintAdded, ""),
            (TaintEffect::NoExecute, Some(_)) => (
                Change::NoExecuteTaintAdded,
                " (its value changes: pods tolerating only the old value are evicted)",
            ),
            (_, _) => (Change::SchedulingTaintAdded, ""),
        };
        let before = current.map_or(Value::Null, taint_value);
        let path = taint_path(&taint.id());
        changes.push(change(node, path, before, taint_value(taint), kind, note));
        op.put_taints.push(taint.clone());
    }
    for old in wanted.before_taints.into_iter().flatten() {
        let listed = wanted.taints.iter().any(|t| t.id() == old.id());
        let Some(current) = node.taint(&old.key, old.effect) else {
            continue;
        };
        if listed || left_alone(&taint_path(&old.id())) {
            continue;
        }
        let kind = match old.effect {
            TaintEffect::NoExecute => Change::NoExecuteTaintRemoved,
            _ => Change::SchedulingTaintRemoved,
        };
        let path = taint_path(&old.id());
        changes.push(change(
            node,
            path,
            taint_value(current),
            Value::Null,
            kind,
            "",
        ));
        op.remove_taints.push(old.id());
    }
    if !op.is_empty() {
        op.read = Some(managed_keys(wanted, node));
    }
    (changes, op)
}

/// Every label and taint the policy manages on `node` — those it lists and those it set
/// before — as the node holds them now: what apply checks is unchanged before it writes.
/// A key left alone is not managed: its changes by others do not stop the patch.
fn managed_keys(wanted: &Wanted<'_>, node: &LiveNode) -> ManagedKeys {
    let managed = |path: String| !(wanted.left_alone)(&node_path(node, &path));
    let labels = wanted
        .labels
        .keys()
        .chain(wanted.before_labels.into_iter().flat_map(|l| l.keys()))
        .filter(|key| managed(label_path(key)))
        .cloned();
    let taints = wanted
        .taints
        .iter()
        .chain(wanted.before_taints.into_iter().flatten())
        .map(TaintSpec::id)
        .filter(|id| managed(taint_path(id)))
        .collect();
    ManagedKeys::read(labels, taints, node)
}

/// An attribute's path in the plan: `nodes.NODE.` and its path on the node.
fn node_path(node: &LiveNode, path: &str) -> String {
    format!("nodes.{}.{path}", node.name)
}

fn label_path(key: &str) -> String {
    format!("labels.{key}")
}

fn taint_path(id: &TaintId) -> String {
    format!("taints.{id}")
}

/// A taint as kubectl writes it: `value:Effect`, or `:Effect` without a value.
fn taint_value(taint: &TaintSpec) -> Value {
    json!(format!(
        "{}:{}",
        taint.value.as_deref().unwrap_or(""),
        taint.effect
    ))
}

fn change(
    node: &LiveNode,
    path: String,
    before: Value,
    after: Value,
    kind: Change,
    note: &str,
) -> AttributeChange {
    let row = rule(kind);
    AttributeChange {
        path: node_path(node, &path),
        before,
        after,
        impact: row.impact,
        reason: format!("{}{note}", row.happens),
        downtime: row.downtime,
        // One patch per node: its changes land together.
        group: format!("node {}", node.name),
        effects: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skyplan_core::model::Impact;

    fn taint(key: &str, value: Option<&str>, effect: TaintEffect) -> TaintSpec {
        TaintSpec {
            key: key.into(),
            value: value.map(Into::into),
            effect,
        }
    }

    fn node(labels: &[(&str, &str)], taints: Vec<TaintSpec>) -> LiveNode {
        LiveNode {
            name: "node-1".into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints,
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn missing_labels_and_taints_are_added_with_their_classes() {
        let wanted_labels = labels(&[("tier", "web")]);
        let wanted_taints = [
            taint("dedicated", Some("web"), TaintEffect::NoSchedule),
            taint("drain", None, TaintEffect::NoExecute),
        ];
        let wanted = Wanted {
            labels: &wanted_labels,
            taints: &wanted_taints,
            before_labels: None,
            before_taints: None,
            left_alone: &nothing_left_alone,
        };
        let (changes, op) = diff_node(&wanted, &node(&[("other", "x")], vec![]));
        let rows: Vec<(&str, Impact)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.impact))
            .collect();
        assert_eq!(
            rows,
            [
                ("nodes.node-1.labels.tier", Impact::None),
                ("nodes.node-1.taints.dedicated:NoSchedule", Impact::Minimal),
                ("nodes.node-1.taints.drain:NoExecute", Impact::PoolRecreate),
            ]
        );
        assert_eq!(changes[1].after, json!("web:NoSchedule"));
        assert_eq!(
            op.to_string(),
            "patch node node-1: labels +tier=web, taints +dedicated=web:NoSchedule +drain:NoExecute"
        );
    }

    #[test]
    fn a_conforming_node_has_no_change() {
        let wanted_labels = labels(&[("tier", "web")]);
        let wanted_taints = [taint("dedicated", Some("web"), TaintEffect::NoSchedule)];
        let wanted = Wanted {
            labels: &wanted_labels,
            taints: &wanted_taints,
            before_labels: Some(&wanted_labels),
            before_taints: Some(&wanted_taints),
            left_alone: &nothing_left_alone,
        };
        let live = node(&[("tier", "web")], wanted_taints.to_vec());
        let (changes, op) = diff_node(&wanted, &live);
        assert!(changes.is_empty(), "{changes:?}");
        assert!(op.is_empty());
    }

    #[test]
    fn what_the_policy_set_before_is_removed_and_the_rest_left_alone() {
        let before_labels = labels(&[("tier", "web"), ("old", "1")]);
        let before_taints = [
            taint("drain", None, TaintEffect::NoExecute),
            taint("dedicated", Some("web"), TaintEffect::NoSchedule),
        ];
        let now_labels = labels(&[("tier", "web")]);
        let wanted = Wanted {
            labels: &now_labels,
            taints: &[],
            before_labels: Some(&before_labels),
            before_taints: Some(&before_taints),
            left_alone: &nothing_left_alone,
        };
        let live = node(
            &[("tier", "web"), ("old", "1"), ("theirs", "y")],
            vec![
                taint("drain", None, TaintEffect::NoExecute),
                taint("theirs", None, TaintEffect::NoSchedule),
                // Listed before but already gone from the node: nothing to remove.
            ],
        );
        let (changes, op) = diff_node(&wanted, &live);
        let rows: Vec<(&str, Impact)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.impact))
            .collect();
        assert_eq!(
            rows,
            [
                ("nodes.node-1.labels.old", Impact::None),
                ("nodes.node-1.taints.drain:NoExecute", Impact::Minimal),
            ]
        );
        assert_eq!(
            op.to_string(),
            "patch node node-1: labels -old, taints -drain:NoExecute"
        );
    }

    #[test]
    fn what_is_left_alone_is_neither_changed_nor_checked_before_the_patch() {
        let wanted_labels = labels(&[("tier", "web"), ("team", "web")]);
        let wanted_taints = [taint("dedicated", Some("web"), TaintEffect::NoSchedule)];
        let left_alone = |path: &str| path == "nodes.node-1.labels.team";
        let wanted = Wanted {
            labels: &wanted_labels,
            taints: &wanted_taints,
            before_labels: Some(&wanted_labels),
            before_taints: None,
            left_alone: &left_alone,
        };
        let live = node(&[("team", "api")], vec![]);
        let (changes, op) = diff_node(&wanted, &live);
        let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "nodes.node-1.labels.tier",
                "nodes.node-1.taints.dedicated:NoSchedule"
            ]
        );
        assert_eq!(
            op.to_string(),
            "patch node node-1: labels +tier=web, taints +dedicated=web:NoSchedule"
        );
        let read = op.read.expect("the keys read before the patch");
        let managed: Vec<&str> = read.labels.keys().map(String::as_str).collect();
        assert_eq!(managed, ["tier"], "team is not checked before the patch");
    }

    #[test]
    fn a_taint_value_change_is_classed_by_its_effect() {
        let wanted_taints = [
            taint("dedicated", Some("api"), TaintEffect::NoSchedule),
            taint("drain", Some("now"), TaintEffect::NoExecute),
        ];
        let empty = BTreeMap::new();
        let wanted = Wanted {
            labels: &empty,
            taints: &wanted_taints,
            before_labels: None,
            before_taints: None,
            left_alone: &nothing_left_alone,
        };
        let live = node(
            &[],
            vec![
                taint("dedicated", Some("web"), TaintEffect::NoSchedule),
                taint("drain", None, TaintEffect::NoExecute),
            ],
        );
        let (changes, _) = diff_node(&wanted, &live);
        assert_eq!(changes[0].before, json!("web:NoSchedule"));
        assert_eq!(changes[0].impact, Impact::Minimal);
        assert_eq!(changes[1].impact, Impact::PoolRecreate);
        assert!(changes[1].reason.contains("its value changes"));
    }
}
