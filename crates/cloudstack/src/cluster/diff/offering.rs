//! A service offering change: which attributes it answers for, whether it is a step down,
//! and how it can run — while stopped, in place, or by stopping the whole cluster.

use super::*;

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

/// A planned service offering change: the attributes it answers for and how big a step it is.
pub(super) struct OfferingChange {
    /// (path, before, after) per config attribute that changes.
    paths: Vec<(String, Value, Value)>,
    /// Some node type would get less (or the current offering is unknown, which counts as less).
    smaller: bool,
    op: ClusterOp,
}

impl Diff<'_> {
    fn offering_name(&self, id: &str) -> String {
        self.inventory
            .offering_by_id(id)
            .map_or_else(|| id.to_string(), |o| o.name.clone())
    }

    /// What changes in the offerings of the cluster and of each node type, checked against
    /// the minimums of the version the cluster will run.
    pub(super) fn offering_change(
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

    pub(super) fn offering_while_stopped(&mut self, change: OfferingChange, now: &str) {
        let detail = if change.smaller {
            format!("the cluster is {now}, so a smaller offering is accepted")
        } else {
            String::new()
        };
        self.note_offering(&change, Change::OfferingWhileStopped, &detail);
        self.ops.push(change.op);
    }

    /// Returns whether the offering is changed by the plan.
    pub(super) fn offering_while_running(
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
}
