//! `[nodes.NAME]`: a policy's labels and taints against the live nodes it selects. The diff is
//! per node (`diff.rs`), its classes come from the table (`impact.rs`), and apply patches each
//! node with optimistic concurrency (`patch.rs`).

pub mod diff;
pub mod impact;
pub mod live;
pub mod patch;
pub mod verify;

use std::collections::BTreeMap;

use diff::{diff_node, nothing_left_alone, Wanted};
use impact::{rule, Change};
use live::{selected, LiveNode};

use super::ops::Op;
use crate::spec::NodePolicySpec;
use skyplan_core::model::Address;
use skyplan_core::plan::{Action, AttributeChange, Placement, Record, ResourceChange};
use skyplan_core::provider::{DriftCheck, Operation};

/// One policy target, with the cluster's nodes (`None`: the cluster is not connected).
pub struct PolicyInput<'a> {
    pub address: &'a Address,
    pub desired: Option<&'a NodePolicySpec>,
    pub applied: Option<NodePolicySpec>,
    pub nodes: Option<&'a [LiveNode]>,
    /// The attributes the plan leaves as each node has them (see [`Wanted::left_alone`]).
    pub left_alone: &'a dyn Fn(&str) -> bool,
}

pub fn plan(input: &PolicyInput<'_>) -> ResourceChange {
    let record = input.desired.map(Record::of);
    let mut change = ResourceChange::no_op(input.address.clone(), super::PROVIDER, record);
    let Some(policy) = input.desired.or(input.applied.as_ref()) else {
        return change;
    };
    change.placement = Some(placement(policy));
    let empty = BTreeMap::new();
    let wanted = Wanted {
        labels: input.desired.map_or(&empty, |d| &d.labels),
        taints: input.desired.map_or(&[], |d| &d.taints),
        before_labels: input.applied.as_ref().map(|a| &a.labels),
        before_taints: input.applied.as_ref().map(|a| a.taints.as_slice()),
        left_alone: input.left_alone,
    };
    let Some(nodes) = input.nodes else {
        return unknown_nodes(change, input);
    };
    let (attributes, operations) = diff_selected(&wanted, policy, nodes);
    change.attributes = attributes;
    change.operations = operations;
    change.action = match (input.desired, &input.applied) {
        (None, _) => Action::Delete,
        (Some(_), None) if !change.operations.is_empty() => Action::Create,
        (Some(_), Some(_)) if !change.operations.is_empty() => Action::Update,
        _ => Action::NoOp,
    };
    change
}

/// Where a policy's nodes are, for a rollout grouped by cluster: its cluster's address (as
/// cloudscale writes it). Nodes have no zone skyplan knows.
fn placement(policy: &NodePolicySpec) -> Placement {
    Placement {
        cluster: Some(policy.cluster.to_string()),
        zone: None,
    }
}

/// A policy whose cluster has no API yet (a CKS cluster not created, or stopped): planned as
/// a create (or kept) with nothing to send, so the plan says why it shows no node.
fn unknown_nodes(mut change: ResourceChange, input: &PolicyInput<'_>) -> ResourceChange {
    let Some(desired) = input.desired else {
        // Removed from the config: forgotten; what it set stays on nodes nobody can reach.
        change.action = Action::Delete;
        return change;
    };
    let row = rule(Change::NodesUnknown);
    change.attributes.push(AttributeChange {
        path: "nodes".into(),
        before: serde_json::Value::Null,
        after: serde_json::json!(format!("unknown until {} exists", desired.cluster)),
        impact: row.impact,
        reason: row.happens.to_string(),
        downtime: row.downtime,
        group: String::new(),
        effects: Vec::new(),
    });
    change.action = match &input.applied {
        None => Action::Create,
        Some(applied) if applied != desired => Action::Update,
        Some(_) => {
            change.attributes.clear();
            Action::NoOp
        }
    };
    change
}

/// The operations of every policy, applied to the live nodes: the nodes as this run leaves them.
pub fn planned_nodes(
    nodes: &[k8s_openapi::api::core::v1::Node],
    ops: &[&Op],
) -> Vec<k8s_openapi::api::core::v1::Node> {
    nodes
        .iter()
        .map(|node| {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            ops.iter()
                .filter(|op| op.node == name)
                .fold(node.clone(), |node, op| patch::planned_node(&node, op))
        })
        .collect()
}

/// The live nodes against what was last applied: each difference as the change restoring it.
pub fn drift(input: &PolicyInput<'_>) -> DriftCheck {
    let Some(applied) = &input.applied else {
        return DriftCheck::NotApplied;
    };
    let wanted = Wanted {
        labels: &applied.labels,
        taints: &applied.taints,
        before_labels: None,
        before_taints: None,
        left_alone: &nothing_left_alone,
    };
    let (attributes, _) = diff_selected(&wanted, applied, input.nodes.unwrap_or_default());
    DriftCheck::Compared(attributes)
}

fn diff_selected(
    wanted: &Wanted<'_>,
    policy: &NodePolicySpec,
    nodes: &[LiveNode],
) -> (Vec<AttributeChange>, Vec<Operation>) {
    let mut attributes = Vec::new();
    let mut operations = Vec::new();
    for node in selected(&policy.selection, nodes) {
        let (changes, op) = diff_node(wanted, node);
        attributes.extend(changes);
        if !op.is_empty() {
            operations.push(crate::ops::planned(op));
        }
    }
    (attributes, operations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{NodeSelection, TaintEffect, TaintSpec};
    use skyplan_core::model::ResourceKind;

    fn policy(labels: &[(&str, &str)], taints: Vec<TaintSpec>) -> NodePolicySpec {
        NodePolicySpec {
            cluster: Address::new(ResourceKind::Cluster, "prod"),
            selection: NodeSelection::Names(vec!["node-*".into()]),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints,
        }
    }

    fn node(name: &str) -> LiveNode {
        LiveNode {
            name: name.into(),
            labels: BTreeMap::new(),
            taints: vec![],
        }
    }

    #[test]
    fn a_new_policy_is_one_patch_per_selected_node() {
        let address = Address::new(ResourceKind::Nodes, "web");
        let desired = policy(&[("tier", "web")], vec![]);
        let nodes = [node("node-1"), node("node-2"), node("other")];
        let input = PolicyInput {
            address: &address,
            desired: Some(&desired),
            applied: None,
            nodes: Some(&nodes),
            left_alone: &nothing_left_alone,
        };
        let change = plan(&input);
        assert_eq!(change.action, Action::Create);
        let ops: Vec<String> = change.operations.iter().map(|o| o.to_string()).collect();
        assert_eq!(
            ops,
            [
                "patch node node-1: labels +tier=web",
                "patch node node-2: labels +tier=web"
            ]
        );
        assert!(change.record.is_some());
        let placement = change.placement.unwrap();
        assert_eq!(placement.cluster.as_deref(), Some("cluster.prod"));
        assert_eq!(placement.zone, None);
    }

    #[test]
    fn a_removed_policy_takes_back_what_it_set() {
        let address = Address::new(ResourceKind::Nodes, "web");
        let taint = TaintSpec {
            key: "drain".into(),
            value: None,
            effect: TaintEffect::NoExecute,
        };
        let applied = policy(&[], vec![taint.clone()]);
        let mut tainted = node("node-1");
        tainted.taints.push(taint);
        let nodes = [tainted];
        let input = PolicyInput {
            address: &address,
            desired: None,
            applied: Some(applied),
            nodes: Some(&nodes),
            left_alone: &nothing_left_alone,
        };
        let change = plan(&input);
        assert_eq!(change.action, Action::Delete);
        let placed = change.placement.as_ref().and_then(|p| p.cluster.as_deref());
        assert_eq!(
            placed,
            Some("cluster.prod"),
            "a removed policy is placed as applied"
        );
        assert_eq!(
            change.operations[0].to_string(),
            "patch node node-1: taints -drain:NoExecute"
        );
        assert_eq!(change.record, None);
    }

    #[test]
    fn a_policy_on_a_cluster_without_api_waits_for_its_nodes() {
        let address = Address::new(ResourceKind::Nodes, "web");
        let desired = policy(&[("tier", "web")], vec![]);
        let input = PolicyInput {
            address: &address,
            desired: Some(&desired),
            applied: None,
            nodes: None,
            left_alone: &nothing_left_alone,
        };
        let change = plan(&input);
        assert_eq!(change.action, Action::Create);
        assert!(change.operations.is_empty());
        assert_eq!(change.attributes[0].path, "nodes");
        assert!(change.attributes[0]
            .reason
            .starts_with("nodes unknown until the cluster exists"));
        let applied = PolicyInput {
            applied: Some(desired.clone()),
            ..input
        };
        assert_eq!(plan(&applied).action, Action::NoOp);
    }

    #[test]
    fn drift_is_what_others_changed_on_the_nodes() {
        let address = Address::new(ResourceKind::Nodes, "web");
        let applied = policy(&[("tier", "web")], vec![]);
        let nodes = [node("node-1")];
        let input = PolicyInput {
            address: &address,
            desired: None,
            applied: Some(applied),
            nodes: Some(&nodes),
            left_alone: &nothing_left_alone,
        };
        let DriftCheck::Compared(changes) = drift(&input) else {
            panic!("compared")
        };
        assert_eq!(changes[0].path, "nodes.node-1.labels.tier");
    }
}
