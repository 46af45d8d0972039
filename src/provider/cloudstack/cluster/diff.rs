//! Desired vs live CKS cluster → the changes (each one row of the impact table) and the
//! operations, in an order CloudStack accepts. Pure: no IO.
//!
//! Order of an update, and why:
//! 1. a service offering change while the cluster is Stopped or Created (any hypervisor, and
//!    smaller offerings are accepted only then);
//! 2. start, if it should run;
//! 3. a service offering change on the running cluster: in place on XenServer/VMware/Simulator,
//!    else stop → scale → start; deferred to after the stop when it should end up stopped;
//! 4. the Kubernetes upgrade (needs Running, and the offering it checks is then the new one);
//! 5. autoscaling, then the worker count (never in one call; after the offering, because one
//!    call with both would remove nodes first and then fail the offering, leaving Alert);
//! 6. stop, if it should be stopped, then a deferred offering change.

use serde_json::{json, Value};

use super::checks::{
    check_counts, check_create, check_offering, check_server_features, check_version_usable,
    is_smaller, scales_running_vms, version_step, KubeVersion, VersionStep, NODE_OFFERINGS_SINCE,
};
use super::desired::{node_types, resolve, Resolved};
use super::impact::{rule, Change};
use super::ops::{ClusterOp, CreateCluster, Named, NodeOffering, Target};
use crate::model::{Address, ClusterRunState, ClusterSpec, NodeType};
use crate::plan::{Action, AttributeChange, ResourceChange};
use crate::provider::cloudstack::api::{KubernetesCluster, ServiceOffering};
use crate::provider::cloudstack::live::Inventory;
use crate::provider::cloudstack::ops::Op;
use crate::provider::cloudstack::PROVIDER;
use crate::provider::Operation;

/// Everything the diff of one cluster looks at.
pub struct DiffInput<'a> {
    pub address: &'a Address,
    pub desired: Option<&'a ClusterSpec>,
    /// The spec recorded at the last apply: what cannot be read back from the cloud (a
    /// description that cannot be applied, the worker count under autoscaling, whether the
    /// network was supplied) is compared with it.
    pub prior: Option<&'a ClusterSpec>,
    pub live: Option<&'a KubernetesCluster>,
    pub inventory: &'a Inventory,
    pub replace: bool,
    pub allow_delete: bool,
}

/// States in which deleteKubernetesCluster is accepted (`validateClusterSate`).
const DELETABLE: &[&str] = &["Running", "Stopped", "Alert", "Error", "Destroying"];
/// States that end up Running without anything being done.
const HEADING_RUNNING: &[&str] = &[
    "Running",
    "Starting",
    "Scaling",
    "Upgrading",
    "Importing",
    "RemovingNodes",
    "Recovering",
];
/// States with no VM running or about to run.
const HEADING_STOPPED: &[&str] = &["Stopped", "Stopping", "ScalingStoppedCluster", "Created"];

fn is_in(state: &str, states: &[&str]) -> bool {
    states.contains(&state)
}

/// scaleKubernetesCluster: state must be Created, Running or Stopped.
fn can_scale(state: &str) -> bool {
    is_in(state, &["Created", "Running", "Stopped"])
}

/// startKubernetesCluster starts the VMs of a settled cluster that is not running.
fn can_start(state: &str) -> bool {
    is_in(state, &["Created", "Stopped", "Alert"])
}

/// stopKubernetesCluster is defined from Running and Alert (a stop during a transient state is
/// not refused, but would cut the running operation short: skyplan does not do it).
fn can_stop(state: &str) -> bool {
    is_in(state, &["Running", "Alert"])
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
            .map(|op| Operation::Cloudstack(Op::Cluster(op)))
            .collect(),
        record: input
            .desired
            .map(|spec| serde_json::to_value(spec).expect("specs serialize")),
        requested,
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

/// The offering id the live nodes of a type have: its own (4.21+) or the cluster's.
fn live_offering_id(live: &KubernetesCluster, node: NodeType) -> &str {
    let own = match node {
        NodeType::Control => live.controlofferingid.as_deref(),
        NodeType::Worker => live.workerofferingid.as_deref(),
        NodeType::Etcd => live.etcdofferingid.as_deref(),
    };
    own.filter(|id| !id.is_empty())
        .unwrap_or(&live.serviceofferingid)
}

/// The cluster's Kubernetes version: from the catalog, else from the version's name
/// (`v1.29.3-calico-x86_64`) when the version was removed from the catalog.
fn live_version(live: &KubernetesCluster, inventory: &Inventory) -> Result<KubeVersion, String> {
    if let Some(version) = inventory.version_by_id(&live.kubernetesversionid) {
        return KubeVersion::parse(&version.semanticversion);
    }
    let name = live.kubernetesversionname.trim_start_matches('v');
    let semantic = name.split(['-', ' ']).next().unwrap_or_default();
    KubeVersion::parse(semantic).map_err(|_| {
        format!(
            "cannot tell the Kubernetes version of cluster {}: version {} is not in the catalog and its name `{}` has no semantic version",
            live.name, live.kubernetesversionid, live.kubernetesversionname
        )
    })
}

/// A planned service offering change: the attributes it answers for and how big a step it is.
struct OfferingChange {
    /// (path, before, after) per config attribute that changes.
    paths: Vec<(String, Value, Value)>,
    /// Some node type would get less (or the current offering is unknown, which counts as less).
    smaller: bool,
    op: ClusterOp,
}

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
        prior: Option<&ClusterSpec>,
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
        prior: Option<&ClusterSpec>,
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
        prior: Option<&ClusterSpec>,
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
    fn delete_consequence(&self, live: &KubernetesCluster, spec: Option<&ClusterSpec>) -> String {
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

    fn update(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        prior: Option<&ClusterSpec>,
    ) -> Result<(), String> {
        let spec = want.spec;
        check_server_features(spec, self.inventory)?;
        let desired_version = KubeVersion::parse(&want.version.semanticversion)?;
        check_counts(spec, desired_version, self.inventory)?;
        self.create_only(want, live, prior);
        self.description(spec, live, prior);

        let desired_running = spec.state == ClusterRunState::Running;
        let needs_start = desired_running && !is_in(&live.state, HEADING_RUNNING);
        let needs_stop = !desired_running && !is_in(&live.state, HEADING_STOPPED);
        let mut now = live.state.clone();
        let mut offering = self.offering_change(want, live)?;
        let mut offering_done = false;

        // 1. A cluster that runs nothing scales on any hypervisor, to a smaller offering too.
        if let Some(change) = offering.take_if(|_| is_in(&now, &["Stopped", "Created"])) {
            self.offering_while_stopped(change, &now);
            offering_done = true;
        }
        // 2. Start.
        if needs_start {
            self.start(live, &mut now);
        }
        // 3. An offering change on the running cluster, unless it should end up stopped.
        let deferred = offering.take_if(|_| needs_stop && can_stop(&now));
        if let Some(change) = offering.take() {
            offering_done = self.offering_while_running(change, live, &now);
        }
        // 4. Upgrade: the global offering it checks is the new one if that changed already.
        let global = if offering_done {
            Some(want.offering)
        } else {
            self.inventory.offering_by_id(&live.serviceofferingid)
        };
        self.version(want, live, &now, global)?;
        // 5. Autoscaling, then the worker count.
        self.autoscaling(spec, live, &now);
        self.workers(want, live, prior, &now, offering_done);
        // 6. Stop, then what only a stopped cluster accepts.
        if needs_stop {
            self.stop(live, &mut now);
            if let Some(change) = deferred {
                self.offering_while_stopped(change, &now);
            }
        }
        Ok(())
    }

    fn offering_name(&self, id: &str) -> String {
        self.inventory
            .offering_by_id(id)
            .map_or_else(|| id.to_string(), |o| o.name.clone())
    }

    /// Control-node and etcd-node counts, zone, network and keypair: no API changes them.
    fn create_only(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        prior: Option<&ClusterSpec>,
    ) {
        let spec = want.spec;
        let replace = "use --replace to delete the cluster and create it anew";
        if spec.control_nodes != live.controlnodes {
            let (before, after) = (json!(live.controlnodes), json!(spec.control_nodes));
            self.note(
                Change::ControlNodes,
                "control-nodes",
                before,
                after,
                replace,
            );
        }
        if spec.etcd_nodes != live.etcdnodes {
            let (before, after) = (json!(live.etcdnodes), json!(spec.etcd_nodes));
            self.note(Change::EtcdNodes, "etcd-nodes", before, after, replace);
        }
        if want.zone.id != live.zoneid {
            let before = json!(if live.zonename.is_empty() {
                &live.zoneid
            } else {
                &live.zonename
            });
            self.note(Change::Zone, "zone", before, json!(want.zone.name), replace);
        }
        let live_network = live
            .associatednetworkname
            .clone()
            .or(live.networkid.clone());
        match want.network {
            Some(network) if live.networkid.as_deref() != Some(network.id.as_str()) => {
                let before = json!(live_network);
                self.note(
                    Change::Network,
                    "network",
                    before,
                    json!(network.name),
                    replace,
                );
            }
            // No network in the config means "CKS made one": a cluster that was applied on a
            // supplied network cannot move to a network of its own.
            None if prior.is_some_and(|p| p.network.is_some()) => {
                let detail =
                    format!("{replace}; without `network` CKS would make a network of its own");
                self.note(
                    Change::Network,
                    "network",
                    json!(live_network),
                    Value::Null,
                    &detail,
                );
            }
            _ => {}
        }
        let live_keypair = live.keypair.as_deref().filter(|k| !k.is_empty());
        if want.keypair != live_keypair {
            let (before, after) = (json!(live_keypair), json!(want.keypair));
            self.note(Change::Keypair, "keypair", before, after, replace);
        }
    }

    /// No update API: shown once, when the config's description changes, and never applied.
    fn description(
        &mut self,
        spec: &ClusterSpec,
        live: &KubernetesCluster,
        prior: Option<&ClusterSpec>,
    ) {
        let live_text = live.description.as_deref().filter(|d| !d.is_empty());
        let wanted = spec.description.as_deref().filter(|d| !d.is_empty());
        let already_recorded =
            prior.is_some_and(|p| p.description.as_deref().filter(|d| !d.is_empty()) == wanted);
        if wanted != live_text && !already_recorded {
            self.note(
                Change::Description,
                "description",
                json!(live_text),
                json!(wanted),
                "",
            );
        }
    }

    fn start(&mut self, live: &KubernetesCluster, now: &mut String) {
        let (before, after) = (json!(live.state), json!("running"));
        if !can_start(now) {
            let detail = format!("the cluster is {now} and cannot be started now");
            self.note(Change::WrongState, "state", before, after, &detail);
            return;
        }
        let detail = match now.as_str() {
            "Alert" => "the cluster is in Alert: starting it starts its stopped VMs",
            "Created" => "the cluster was created but never started",
            _ => "",
        };
        self.note(Change::Start, "state", before, after, detail);
        self.ops.push(ClusterOp::Start {
            cluster: target(live),
        });
        *now = "Running".into();
    }

    fn stop(&mut self, live: &KubernetesCluster, now: &mut String) {
        let (before, after) = (json!(live.state), json!("stopped"));
        if !can_stop(now) {
            let detail = format!("the cluster is {now} and cannot be stopped now");
            self.note(Change::WrongState, "state", before, after, &detail);
            return;
        }
        self.note(Change::Stop, "state", before, after, "");
        self.ops.push(ClusterOp::Stop {
            cluster: target(live),
        });
        *now = "Stopped".into();
    }

    /// What changes in the offerings of the cluster and of each node type, checked against
    /// the minimums of the version the cluster will run.
    fn offering_change(
        &self,
        want: &Resolved,
        live: &KubernetesCluster,
    ) -> Result<Option<OfferingChange>, String> {
        let mut paths: Vec<(String, Value, Value)> = vec![];
        let mut smaller = false;
        let mut add_path = |path: String, before: String, after: &str| {
            if !paths.iter().any(|(p, _, _)| *p == path) {
                paths.push((path, json!(before), json!(after)));
            }
        };
        if live.serviceofferingid != want.offering.id {
            check_offering(want.offering, None, want.version)?;
            let before = self.offering_name(&live.serviceofferingid);
            add_path("service-offering".into(), before, &want.offering.name);
        }
        for node in node_types(live.etcdnodes) {
            let current = live_offering_id(live, node);
            let new = want.offering_of(node);
            if current == new.id {
                continue;
            }
            let own = want.spec.node_offerings.contains_key(&node);
            check_offering(new, own.then_some(node), want.version)?;
            // The scale runs before any upgrade: the running version's minimums apply too.
            if let Some(running) = self.inventory.version_by_id(&live.kubernetesversionid) {
                check_offering(new, own.then_some(node), running)?;
            }
            smaller |= self
                .inventory
                .offering_by_id(current)
                .is_none_or(|old| is_smaller(new, old));
            let path = if own {
                format!("node-offerings.{node}")
            } else {
                "service-offering".to_string()
            };
            add_path(path, self.offering_name(current), &new.name);
        }
        if paths.is_empty() {
            return Ok(None);
        }
        Ok(Some(OfferingChange {
            paths,
            smaller,
            op: ClusterOp::ScaleOffering {
                cluster: target(live),
                offering: offering_named(want.offering),
                node_offerings: self.node_offerings(want),
            },
        }))
    }

    fn note_offering(&mut self, change: &OfferingChange, row: Change, detail: &str) {
        for (path, before, after) in &change.paths {
            self.note(row, path, before.clone(), after.clone(), detail);
        }
    }

    fn offering_while_stopped(&mut self, change: OfferingChange, now: &str) {
        let detail = if change.smaller {
            format!("the cluster is {now}, so a smaller offering is accepted")
        } else {
            String::new()
        };
        self.note_offering(&change, Change::OfferingWhileStopped, &detail);
        self.ops.push(change.op);
    }

    /// Returns whether the offering is changed by the plan.
    fn offering_while_running(
        &mut self,
        change: OfferingChange,
        live: &KubernetesCluster,
        now: &str,
    ) -> bool {
        if now != "Running" {
            let detail = format!("the cluster is {now}; scaling needs Created, Running or Stopped");
            self.note_offering(&change, Change::WrongState, &detail);
            return false;
        }
        if change.smaller {
            self.note_offering(&change, Change::OfferingDownWhileRunning, "");
            return false;
        }
        match self.hypervisors_that_cannot_scale(live) {
            None => {
                self.note_offering(&change, Change::OfferingInPlace, "");
                self.ops.push(change.op);
            }
            Some(hypervisors) => {
                let detail = format!("cluster VMs run on {hypervisors}");
                self.note_offering(&change, Change::OfferingStopScaleStart, &detail);
                let cluster = target(live);
                self.ops.push(ClusterOp::Stop {
                    cluster: cluster.clone(),
                });
                self.ops.push(change.op);
                self.ops.push(ClusterOp::Start { cluster });
            }
        }
        true
    }

    /// The hypervisors of the cluster's VMs that cannot scale a running VM; an unknown one
    /// (a VM the inventory does not show, or a cluster listing no VMs) counts as one.
    fn hypervisors_that_cannot_scale(&self, live: &KubernetesCluster) -> Option<String> {
        let mut found: Vec<String> = live
            .virtualmachines
            .iter()
            .map(|vm| {
                self.inventory
                    .vm(&vm.id)
                    .map_or("an unknown hypervisor", |vm| vm.hypervisor.as_str())
                    .to_string()
            })
            .filter(|h| !scales_running_vms(h))
            .map(|h| {
                if h.is_empty() {
                    "an unknown hypervisor".into()
                } else {
                    h
                }
            })
            .collect();
        if live.virtualmachines.is_empty() {
            found.push("an unknown hypervisor (the cluster lists no VMs)".into());
        }
        found.sort();
        found.dedup();
        (!found.is_empty()).then(|| found.join(", "))
    }

    fn version(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        now: &str,
        global_offering: Option<&ServiceOffering>,
    ) -> Result<(), String> {
        if want.version.id == live.kubernetesversionid {
            return Ok(());
        }
        let from = live_version(live, self.inventory)?;
        let to = KubeVersion::parse(&want.version.semanticversion)?;
        let (before, after) = (json!(from.to_string()), json!(to.to_string()));
        let path = "kubernetes-version";
        match version_step(from, to) {
            VersionStep::Same => {}
            VersionStep::SkipsMinor => {
                let detail = format!("upgrade to {}.{}.x first", from.major, from.minor + 1);
                self.note(Change::VersionSkipsMinor, path, before, after, &detail);
            }
            VersionStep::Downgrade => self.note(Change::VersionDowngrade, path, before, after, ""),
            VersionStep::OtherMajor => {
                self.note(Change::VersionOtherMajor, path, before, after, "")
            }
            VersionStep::Upgrade => {
                check_version_usable(want.version, &want.zone.name)?;
                let global = global_offering.ok_or_else(|| {
                    format!(
                        "the cluster's service offering {} is not in the catalog, so whether it meets the minimums of Kubernetes {to} cannot be checked",
                        live.serviceofferingid
                    )
                })?;
                check_offering(global, None, want.version).map_err(|e| {
                    format!("the cluster's {e}; CloudStack checks the upgrade against it")
                })?;
                if now != "Running" {
                    let detail = format!(
                        "the cluster is {now}: an upgrade needs it Running (state = \"running\")"
                    );
                    self.note(Change::WrongState, path, before, after, &detail);
                    return Ok(());
                }
                self.note(Change::VersionUpgrade, path, before, after, "");
                self.ops.push(ClusterOp::Upgrade {
                    cluster: target(live),
                    version: named(&want.version.id, &want.version.semanticversion),
                });
            }
        }
        Ok(())
    }

    fn autoscaling(&mut self, spec: &ClusterSpec, live: &KubernetesCluster, now: &str) {
        let current = live
            .autoscalingenabled
            .then_some((live.minsize, live.maxsize));
        let wanted = spec.autoscaling.map(|a| (a.min, a.max));
        if current == wanted {
            return;
        }
        let show = |bounds: Option<(u32, u32)>| {
            bounds.map_or(Value::Null, |(min, max)| json!({ "min": min, "max": max }))
        };
        let (before, after) = (show(current), show(wanted));
        // CloudStack accepts the call in Created, Running or Stopped, but it deploys (or
        // removes) the cluster autoscaler through the running control node: skyplan asks for
        // Running rather than let apply find out.
        if now != "Running" {
            let detail = format!(
                "the cluster is {now}: the cluster autoscaler is set up inside the running cluster, so start it first (state = \"running\")"
            );
            self.note(Change::WrongState, "autoscaling", before, after, &detail);
            return;
        }
        let (min, max) = wanted.unwrap_or((0, 0));
        if wanted.is_some() && !(min..=max).contains(&live.size) {
            let detail = format!("the cluster has {} workers, outside {min}-{max}", live.size);
            self.note(
                Change::AutoscalingMovesWorkers,
                "autoscaling",
                before,
                after,
                &detail,
            );
        } else {
            self.note(Change::Autoscaling, "autoscaling", before, after, "");
        }
        self.ops.push(ClusterOp::Autoscale {
            cluster: target(live),
            enabled: wanted.is_some(),
            min,
            max,
        });
    }

    fn workers(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        prior: Option<&ClusterSpec>,
        now: &str,
        offering_changed: bool,
    ) {
        let spec = want.spec;
        let path = "workers";
        if spec.autoscaling.is_some() {
            if prior.is_some_and(|p| p.workers != spec.workers) {
                let before = json!(prior.map(|p| p.workers));
                let detail = format!("the cluster has {} workers now", live.size);
                self.note(
                    Change::WorkersByAutoscaler,
                    path,
                    before,
                    json!(spec.workers),
                    &detail,
                );
            }
            return;
        }
        if spec.workers == live.size {
            return;
        }
        let (before, after) = (json!(live.size), json!(spec.workers));
        if now == "Stopped" {
            let detail = "set state = \"running\" to start it first";
            self.note(Change::WorkersWhileStopped, path, before, after, detail);
            return;
        }
        if !can_scale(now) {
            let detail = format!("the cluster is {now}; scaling needs Created, Running or Stopped");
            self.note(Change::WrongState, path, before, after, &detail);
            return;
        }
        let down = spec.workers < live.size;
        let detail = if down && offering_changed {
            "a separate call after the offering change: in one call CloudStack would remove the nodes first and then fail the offering change, leaving the cluster in Alert"
        } else {
            ""
        };
        let row = if down {
            Change::WorkersDown
        } else {
            Change::WorkersUp
        };
        self.note(row, path, before, after, detail);
        self.ops.push(ClusterOp::ScaleSize {
            cluster: target(live),
            workers: spec.workers,
            pinned: self.node_offerings(want),
        });
    }
}
