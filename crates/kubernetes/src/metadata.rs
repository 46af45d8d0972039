//! Node-metadata drift: for every node, the cloud it belongs to (its providerID's scheme, or —
//! without providerID — a VM of its name, as the cloud controllers match it), and what that
//! cloud's controller would have set against what the node carries. Each mismatch is one
//! entry saying what the controller would set and why it has not. skyplan never fixes these:
//! the controllers own this metadata.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Node;
use serde_json::{json, Value};

use super::instances::{CloudInstance, InstanceStatus};
use super::nodes::impact::{rule, Change};
use skyplan_core::plan::AttributeChange;

pub const UNINITIALIZED: &str = "node.cloudprovider.kubernetes.io/uninitialized";
pub const SHUTDOWN: &str = "node.cloudprovider.kubernetes.io/shutdown";
const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
const ZONE: &str = "topology.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";

/// One cloud's VMs, by the providerID scheme its controller writes.
pub struct Cloud<'a> {
    pub scheme: &'static str,
    pub instances: &'a [CloudInstance],
}

/// What a node carries that its cloud's controller would set otherwise.
pub fn drift(nodes: &[Node], clouds: &[Cloud<'_>]) -> Vec<AttributeChange> {
    let mut sorted: Vec<&Node> = nodes.iter().collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    sorted
        .into_iter()
        .flat_map(|n| node_drift(n, clouds))
        .collect()
}

struct Facts<'n> {
    name: &'n str,
    provider_id: &'n str,
    uninitialized: bool,
    shutdown: bool,
}

fn facts(node: &Node) -> Facts<'_> {
    let spec = node.spec.as_ref();
    let has_taint = |key: &str| {
        spec.and_then(|s| s.taints.as_ref())
            .is_some_and(|taints| taints.iter().any(|t| t.key == key))
    };
    Facts {
        name: node.metadata.name.as_deref().unwrap_or_default(),
        provider_id: spec
            .and_then(|s| s.provider_id.as_deref())
            .map(str::trim)
            .unwrap_or_default(),
        uninitialized: has_taint(UNINITIALIZED),
        shutdown: has_taint(SHUTDOWN),
    }
}

fn node_drift(node: &Node, clouds: &[Cloud<'_>]) -> Vec<AttributeChange> {
    let facts = facts(node);
    let mut found = Vec::new();
    if facts.provider_id.is_empty() {
        let by_name = clouds
            .iter()
            .find_map(|c| c.instances.iter().find(|i| i.name == facts.name));
        match by_name {
            Some(instance) => {
                let reason = format!(
                    "providerID is empty: the cloud controller sets {} (the VM named {}) when it initialises the node{}",
                    instance.provider_id,
                    facts.name,
                    not_yet(&facts)
                );
                found.push(entry(&facts, "provider-id", json!(""), json!(instance.provider_id), reason));
                compare(node, &facts, instance, &mut found);
            }
            None if facts.uninitialized => found.push(uninitialized(
                &facts,
                format!(
                    "still tainted uninitialized: the cloud controller has not initialised it — it is not running, or no VM is named {} (a node without providerID is matched by name)",
                    facts.name
                ),
            )),
            None => {}
        }
        return found;
    }
    let scheme = facts.provider_id.split("://").next().unwrap_or_default();
    // A node of a cloud skyplan is not connected to: nothing to compare it with.
    let Some(cloud) = clouds.iter().find(|c| c.scheme == scheme) else {
        return found;
    };
    match cloud.instances.iter().find(|i| i.provider_id == facts.provider_id) {
        Some(instance) => compare(node, &facts, instance, &mut found),
        None => found.push(entry(
            &facts,
            "vm",
            json!(facts.provider_id),
            Value::Null,
            format!(
                "VM gone: no VM of {scheme} has providerID {}; the node lifecycle controller deletes the Node once it is NotReady",
                facts.provider_id
            ),
        )),
    }
    found
}

/// The node against the VM it belongs to.
fn compare(
    node: &Node,
    facts: &Facts<'_>,
    instance: &CloudInstance,
    found: &mut Vec<AttributeChange>,
) {
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let expected = [
        (INSTANCE_TYPE, &instance.instance_type),
        (ZONE, &instance.zone),
        (REGION, &instance.region),
    ];
    for (label, value) in expected {
        let Some(value) = value else { continue };
        let current = labels.get(label);
        if current == Some(value) {
            continue;
        }
        let why = match facts.uninitialized {
            true => " when it initialises the node, which it has not done yet".to_string(),
            false => " only when it initialises a node: labels are not refreshed afterwards (re-add the uninitialized taint to have them set again)".to_string(),
        };
        let reason = format!("the cloud controller sets {label}={value}{why}");
        let before = current.map_or(Value::Null, |v| json!(v));
        found.push(entry(
            facts,
            &format!("labels.{label}"),
            before,
            json!(value),
            reason,
        ));
    }
    addresses(node, facts, instance, found);
    if facts.uninitialized {
        found.push(uninitialized(
            facts,
            format!(
                "still tainted uninitialized: the cloud controller has not initialised it — it is not running (the VM {} exists)",
                instance.name
            ),
        ));
    }
    vm_status(facts, instance, found);
}

fn addresses(
    node: &Node,
    facts: &Facts<'_>,
    instance: &CloudInstance,
    found: &mut Vec<AttributeChange>,
) {
    let carried: BTreeSet<String> = node
        .status
        .as_ref()
        .and_then(|s| s.addresses.as_ref())
        .into_iter()
        .flatten()
        .map(|a| format!("{}:{}", a.type_, a.address))
        .collect();
    let expected: BTreeSet<String> = instance
        .addresses
        .iter()
        .map(|a| format!("{}:{}", a.kind, a.address))
        .collect();
    if carried != expected && !expected.is_empty() {
        let reason = format!(
            "the cloud controller reports the addresses of VM {} (at initialisation, then every 5 minutes){}",
            instance.name,
            not_yet(facts)
        );
        found.push(entry(
            facts,
            "addresses",
            json!(carried),
            json!(expected),
            reason,
        ));
    }
}

fn vm_status(facts: &Facts<'_>, instance: &CloudInstance, found: &mut Vec<AttributeChange>) {
    match (instance.status, facts.shutdown) {
        (InstanceStatus::Stopped, tainted) => {
            let state = match tainted {
                true => "it is tainted shutdown",
                false => "not tainted yet: only NotReady nodes are checked",
            };
            let reason = format!(
                "VM stopped: the node lifecycle controller taints it shutdown ({state}); its pods are unreachable until the VM runs again"
            );
            found.push(entry(
                facts,
                "vm",
                json!("stopped"),
                json!("running"),
                reason,
            ));
        }
        (InstanceStatus::Running, true) => {
            let path = format!("taints.{SHUTDOWN}:NoSchedule");
            let reason = "tainted shutdown although VM runs: the node lifecycle controller removes the taint once the node is Ready again".to_string();
            found.push(entry(
                facts,
                &path,
                json!(":NoSchedule"),
                Value::Null,
                reason,
            ));
        }
        _ => {}
    }
}

fn not_yet(facts: &Facts<'_>) -> &'static str {
    match facts.uninitialized {
        true => "; it has not initialised the node yet (still tainted uninitialized)",
        false => "",
    }
}

fn uninitialized(facts: &Facts<'_>, reason: String) -> AttributeChange {
    let path = format!("taints.{UNINITIALIZED}:NoSchedule");
    entry(facts, &path, json!("true:NoSchedule"), Value::Null, reason)
}

fn entry(
    facts: &Facts<'_>,
    path: &str,
    before: Value,
    after: Value,
    reason: String,
) -> AttributeChange {
    let row = rule(Change::NodeMetadataDrift);
    AttributeChange {
        path: format!("nodes.{}.{path}", facts.name),
        before,
        after,
        impact: row.impact,
        reason,
        downtime: row.downtime,
        group: format!("node {}", facts.name),
        effects: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instances::InstanceAddress;

    fn instance(name: &str, uuid: &str, status: InstanceStatus) -> CloudInstance {
        CloudInstance {
            name: name.into(),
            provider_id: format!("cloudscale://{uuid}"),
            instance_type: Some("flex-4-2".into()),
            zone: Some("lpg1".into()),
            region: Some("lpg".into()),
            addresses: vec![
                InstanceAddress {
                    kind: "Hostname".into(),
                    address: name.into(),
                },
                InstanceAddress {
                    kind: "InternalIP".into(),
                    address: "10.0.0.5".into(),
                },
            ],
            status,
        }
    }

    fn initialised(name: &str, uuid: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {
                "node.kubernetes.io/instance-type": "flex-4-2",
                "topology.kubernetes.io/zone": "lpg1",
                "topology.kubernetes.io/region": "lpg"}},
            "spec": {"providerID": format!("cloudscale://{uuid}")},
            "status": {"addresses": [
                {"type": "Hostname", "address": name},
                {"type": "InternalIP", "address": "10.0.0.5"}]}
        }))
        .unwrap()
    }

    fn paths(changes: &[AttributeChange]) -> Vec<&str> {
        changes.iter().map(|c| c.path.as_str()).collect()
    }

    #[test]
    fn an_initialised_node_of_a_running_vm_has_no_drift() {
        let vms = [instance("node-1", "u1", InstanceStatus::Running)];
        let clouds = [Cloud {
            scheme: "cloudscale",
            instances: &vms,
        }];
        assert!(drift(&[initialised("node-1", "u1")], &clouds).is_empty());
    }

    #[test]
    fn an_uninitialised_node_without_a_vm_says_why() {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "node-4"},
            "spec": {"taints": [{"key": UNINITIALIZED, "value": "true", "effect": "NoSchedule"}]}
        }))
        .unwrap();
        let vms = [instance("node-1", "u1", InstanceStatus::Running)];
        let clouds = [Cloud {
            scheme: "cloudscale",
            instances: &vms,
        }];
        let found = drift(&[node], &clouds);
        assert_eq!(
            paths(&found),
            ["nodes.node-4.taints.node.cloudprovider.kubernetes.io/uninitialized:NoSchedule"]
        );
        assert!(
            found[0].reason.contains("no VM is named node-4"),
            "{}",
            found[0].reason
        );
        assert_eq!(found[0].impact, skyplan_core::model::Impact::None);
    }

    #[test]
    fn a_node_matched_by_name_lacks_what_initialisation_sets() {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "node-2"},
            "spec": {"taints": [{"key": UNINITIALIZED, "value": "true", "effect": "NoSchedule"}]},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.5"}]}
        }))
        .unwrap();
        let vms = [instance("node-2", "u2", InstanceStatus::Running)];
        let clouds = [Cloud {
            scheme: "cloudscale",
            instances: &vms,
        }];
        let found = drift(&[node], &clouds);
        assert_eq!(
            paths(&found),
            [
                "nodes.node-2.provider-id",
                "nodes.node-2.labels.node.kubernetes.io/instance-type",
                "nodes.node-2.labels.topology.kubernetes.io/zone",
                "nodes.node-2.labels.topology.kubernetes.io/region",
                "nodes.node-2.addresses",
                "nodes.node-2.taints.node.cloudprovider.kubernetes.io/uninitialized:NoSchedule",
            ]
        );
        assert_eq!(found[0].after, json!("cloudscale://u2"));
        assert!(found[5]
            .reason
            .contains("it is not running (the VM node-2 exists)"));
    }

    #[test]
    fn a_stopped_or_gone_vm_and_a_stale_shutdown_taint_are_reported() {
        let vms = [
            instance("node-1", "u1", InstanceStatus::Stopped),
            instance("node-3", "u3", InstanceStatus::Running),
        ];
        let mut tainted = initialised("node-3", "u3");
        tainted.spec.as_mut().unwrap().taints = Some(vec![k8s_openapi::api::core::v1::Taint {
            key: SHUTDOWN.into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        }]);
        let nodes = [
            initialised("node-1", "u1"),
            initialised("node-2", "gone"),
            tainted,
        ];
        let clouds = [Cloud {
            scheme: "cloudscale",
            instances: &vms,
        }];
        let found = drift(&nodes, &clouds);
        assert_eq!(
            paths(&found),
            [
                "nodes.node-1.vm",
                "nodes.node-2.vm",
                "nodes.node-3.taints.node.cloudprovider.kubernetes.io/shutdown:NoSchedule",
            ]
        );
        assert!(found[0]
            .reason
            .starts_with("VM stopped: the node lifecycle controller taints it shutdown"));
        assert!(found[1].reason.starts_with("VM gone"));
        assert!(found[1]
            .reason
            .contains("deletes the Node once it is NotReady"));
    }

    #[test]
    fn nodes_of_other_clouds_are_not_judged() {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "bm-1"}, "spec": {"providerID": "phoenixnap://123"}
        }))
        .unwrap();
        let vms = [instance("node-1", "u1", InstanceStatus::Running)];
        let clouds = [Cloud {
            scheme: "cloudscale",
            instances: &vms,
        }];
        assert!(drift(&[node], &clouds).is_empty());
    }
}
