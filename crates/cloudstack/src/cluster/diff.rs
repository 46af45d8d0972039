//! Desired vs live CKS cluster → the changes (each one row of the impact table) and the
//! operations, in an order CloudStack accepts. Pure: no IO. A cluster added, removed or
//! replaced is planned here; an update in `update.rs`, its service offering part in
//! `offering.rs`.

use serde_json::{json, Value};

use super::checks::{
    check_counts, check_create, check_offering, check_server_features, check_version_usable,
    is_smaller, scales_running_vms, version_step, KubeVersion, VersionStep, NODE_OFFERINGS_SINCE,
};
use super::desired::{node_types, resolve, Resolved};
use super::impact::{rule, Change};
use super::ops::{ClusterOp, CreateCluster, Named, NodeOffering, Target};
use crate::api::{KubernetesCluster, ServiceOffering};
use crate::live::Inventory;
use crate::ops::Op;
use crate::spec::{CloudstackClusterSpec, ClusterRunState, NodeType};
use crate::PROVIDER;
use skyplan_core::model::Address;
use skyplan_core::plan::{Action, AttributeChange, Record, ResourceChange};

/// Everything the diff of one cluster looks at.
pub struct DiffInput<'a> {
    pub address: &'a Address,
    pub desired: Option<&'a CloudstackClusterSpec>,
    /// The spec recorded at the last apply: what cannot be read back from the cloud (a
    /// description that cannot be applied, the worker count under autoscaling, whether the
    /// network was supplied) is compared with it.
    pub prior: Option<&'a CloudstackClusterSpec>,
    pub live: Option<&'a KubernetesCluster>,
    pub inventory: &'a Inventory,
    pub replace: bool,
    pub allow_delete: bool,
}

/// States in which deleteKubernetesCluster is accepted (`validateClusterSate`).
const DELETABLE: &[&str] = &["Running", "Stopped", "Alert", "Error", "Destroying"];

fn is_in(state: &str, states: &[&str]) -> bool {
    states.contains(&state)
}

pub fn diff(input: &DiffInput) -> Result<ResourceChange, String> {
    let mut diff = Diff {
        inventory: input.inventory,
        attributes: vec![],
        ops: vec![],
    };
    let mut requested = false;
    let action = match (input.desired, input.live) {
        (None, None) => Action::NoOp,
        (Some(spec), None) => {
            let want = resolve(spec, input.inventory)?;
            check_create(&want, input.inventory)?;
            diff.note(Change::Created, "", Value::Null, json!(spec.name), "");
            diff.create(&want);
            Action::Create
        }
        (None, Some(live)) => {
            requested = diff.removed(live, input.prior, input.allow_delete);
            Action::Delete
        }
        (Some(spec), Some(live)) if input.replace => {
            let want = resolve(spec, input.inventory)?;
            check_create(&want, input.inventory)?;
            requested = diff.replaced(live, &want, input.prior);
            Action::Replace
        }
        (Some(spec), Some(live)) => {
            let want = resolve(spec, input.inventory)?;
            diff.update(&want, live, input.prior)?;
            if diff.attributes.is_empty() {
                Action::NoOp
            } else {
                Action::Update
            }
        }
    };
    Ok(ResourceChange {
        address: input.address.clone(),
        provider: PROVIDER.to_string(),
        action,
        attributes: diff.attributes,
        operations: diff
            .ops
            .into_iter()
            .map(|op| crate::ops::planned(Op::Cluster(op)))
            .collect(),
        record: input.desired.map(Record::of),
        requested,
        moved_from: None,
        placement: None,
    })
}

struct Diff<'a> {
    inventory: &'a Inventory,
    attributes: Vec<AttributeChange>,
    ops: Vec<ClusterOp>,
}

fn named(id: &str, name: &str) -> Named {
    Named {
        id: id.to_string(),
        name: name.to_string(),
    }
}

fn offering_named(offering: &ServiceOffering) -> Named {
    named(&offering.id, &offering.name)
}

fn target(live: &KubernetesCluster) -> Target {
    Target {
        name: live.name.clone(),
        id: Some(live.id.clone()),
    }
}

mod offering;
mod update;

impl<'a> Diff<'a> {
    fn note(&mut self, change: Change, path: &str, before: Value, after: Value, detail: &str) {
        let group = match change {
            Change::Stop | Change::Start | Change::OfferingStopScaleStart => "whole cluster",
            _ => path,
        };
        self.note_in(change, path, before, after, detail, group);
    }

    fn note_in(
        &mut self,
        change: Change,
        path: &str,
        before: Value,
        after: Value,
        detail: &str,
        group: &str,
    ) {
        let rule = rule(change);
        let mut reason = rule.happens.to_string();
        if !detail.is_empty() {
            reason = format!("{reason} ({detail})");
        }
        self.attributes.push(AttributeChange {
            path: path.to_string(),
            before,
            after,
            impact: rule.impact,
            reason,
            downtime: rule.downtime,
            group: group.to_string(),
            effects: Vec::new(),
        });
    }

    /// Per-type offerings to send: all node types, explicitly, whenever any type's offering
    /// differs from the cluster's (only CloudStack ≥ 4.21 has them).
    fn node_offerings(&self, want: &Resolved) -> Vec<NodeOffering> {
        if self.inventory.server_version() < NODE_OFFERINGS_SINCE {
            return vec![];
        }
        let types = want.node_types();
        if types
            .iter()
            .all(|node| want.offering_of(*node).id == want.offering.id)
        {
            return vec![];
        }
        types
            .into_iter()
            .map(|node| NodeOffering {
                node,
                offering: offering_named(want.offering_of(node)),
            })
            .collect()
    }

    fn create(&mut self, want: &Resolved) {
        let spec = want.spec;
        self.ops.push(ClusterOp::Create(Box::new(CreateCluster {
            name: spec.name.clone(),
            description: spec.description.clone(),
            zone: named(&want.zone.id, &want.zone.name),
            version: named(&want.version.id, &want.version.semanticversion),
            offering: offering_named(want.offering),
            workers: spec.workers,
            control_nodes: spec.control_nodes,
            etcd_nodes: spec.etcd_nodes,
            node_offerings: self.node_offerings(want),
            network: want.network.map(|n| named(&n.id, &n.name)),
            keypair: want.keypair.map(str::to_string),
        })));
        // createKubernetesCluster takes neither autoscaling nor a stopped state: both follow
        // on the new (Running) cluster, which serves nothing yet.
        let created = Target {
            name: spec.name.clone(),
            id: None,
        };
        if let Some(autoscaling) = spec.autoscaling {
            self.ops.push(ClusterOp::Autoscale {
                cluster: created.clone(),
                enabled: true,
                min: autoscaling.min,
                max: autoscaling.max,
            });
        }
        if spec.state == ClusterRunState::Stopped {
            self.ops.push(ClusterOp::Stop { cluster: created });
        }
    }

    /// Removed from the config: a delete, forbidden unless named with --allow-delete. Returns
    /// whether the delete was requested and can run.
    fn removed(
        &mut self,
        live: &KubernetesCluster,
        prior: Option<&CloudstackClusterSpec>,
        allow_delete: bool,
    ) -> bool {
        let detail = self.delete_consequence(live, prior);
        let before = json!(live.name);
        if !allow_delete {
            self.note(Change::Removed, "", before, Value::Null, &detail);
            return false;
        }
        if let Some((row, why)) = self.delete_refusal(live, prior) {
            self.note(row, "", before, Value::Null, &why);
            return false;
        }
        self.note(Change::Deleted, "", before, Value::Null, &detail);
        self.ops.push(ClusterOp::Delete {
            cluster: target(live),
        });
        true
    }

    /// `prior` is the spec the live cluster was made from (how its network came about).
    fn replaced(
        &mut self,
        live: &KubernetesCluster,
        want: &Resolved,
        prior: Option<&CloudstackClusterSpec>,
    ) -> bool {
        let (before, after) = (json!(live.name), json!(want.spec.name));
        if let Some((row, why)) = self.delete_refusal(live, prior) {
            self.note(row, "", before, after, &why);
            return false;
        }
        let detail = self.delete_consequence(live, prior);
        self.note(Change::Replaced, "", before, after, &detail);
        self.ops.push(ClusterOp::Delete {
            cluster: target(live),
        });
        self.create(want);
        true
    }

    /// Why deleteKubernetesCluster would refuse this cluster (`validateClusterSate`, and the
    /// foreign-VM check of a network CKS made), if it would.
    fn delete_refusal(
        &self,
        live: &KubernetesCluster,
        prior: Option<&CloudstackClusterSpec>,
    ) -> Option<(Change, String)> {
        if !is_in(&live.state, DELETABLE) {
            return Some((
                Change::DeleteWrongState,
                format!("the cluster is {}", live.state),
            ));
        }
        // Only known for a cluster skyplan made without a network: CKS made that one.
        let network = live.networkid.as_deref()?;
        if prior.is_none_or(|p| p.network.is_some()) {
            return None;
        }
        let own: Vec<&str> = live
            .virtualmachines
            .iter()
            .map(|vm| vm.id.as_str())
            .collect();
        let foreign: Vec<&str> = self
            .inventory
            .vms
            .iter()
            .filter(|vm| vm.nic.iter().any(|nic| nic.networkid == network))
            .filter(|vm| !own.contains(&vm.id.as_str()))
            .map(|vm| vm.name.as_str())
            .collect();
        (!foreign.is_empty()).then(|| {
            (
                Change::DeleteBlocked,
                format!(
                    "VMs that are not part of the cluster use its network: {}",
                    foreign.join(", ")
                ),
            )
        })
    }

    /// With a network the user supplied, CKS removes only its own rules: what the CCM made for
    /// Services stays (research §3.4).
    fn delete_consequence(
        &self,
        live: &KubernetesCluster,
        spec: Option<&CloudstackClusterSpec>,
    ) -> String {
        let network = live
            .associatednetworkname
            .clone()
            .or(live.networkid.clone())
            .unwrap_or_default();
        let rules = live
            .networkid
            .as_deref()
            .map_or(0, |id| self.inventory.rules_in_network(id).count());
        let leftovers = format!(
            "load-balancer rules and public IPs the CCM made for Services in network {network} are not removed ({rules} LB rules there now): delete those Services or load balancers first"
        );
        match spec.map(|s| s.network.is_some()) {
            Some(true) => format!("the network was supplied, so {leftovers}"),
            Some(false) => format!(
                "CKS made network {network} for the cluster and destroys it, with every LB rule and IP in it"
            ),
            None => format!("if the network was supplied at create, {leftovers}"),
        }
    }
}
