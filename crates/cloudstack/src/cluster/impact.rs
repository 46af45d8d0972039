//! The CKS impact table: one row per kind of change to a CloudStack Kubernetes Service cluster,
//! reviewable line by line against impact.md's "CloudStack Kubernetes Service clusters" table
//! (seed 002, checked against the CloudStack 4.22 code, research/cloudstack.md §3). The diff
//! decides which row a change is; this table alone decides its class, what happens and its
//! downtime.

use skyplan_core::model::{Downtime, Impact};
use skyplan_core::provider::impact_table::Row;

skyplan_core::provider::impact_table::changes!(
    Created,
    Description,
    WorkersUp,
    WorkersDown,
    WorkersWhileStopped,
    WorkersByAutoscaler,
    Autoscaling,
    AutoscalingMovesWorkers,
    VersionUpgrade,
    VersionSkipsMinor,
    VersionDowngrade,
    VersionOtherMajor,
    OfferingInPlace,
    OfferingStopScaleStart,
    OfferingDownWhileRunning,
    OfferingWhileStopped,
    ControlNodes,
    EtcdNodes,
    Zone,
    Network,
    Keypair,
    Stop,
    Start,
    WrongState,
    Removed,
    Deleted,
    DeleteWrongState,
    DeleteBlocked,
    Replaced,
);

/// Stopping or starting the whole cluster: every VM is stopped (or started) and the Kubernetes
/// API and all workloads are down in between. Starting waits until the API server answers and
/// the nodes are Ready again, which on CKS takes 3-10 minutes (the start timeout is 3600 s).
const WHOLE_CLUSTER: Downtime = Downtime::new(180, 600);
/// A rolling operation that drains nodes one at a time (`kubectl drain`): a workload with
/// replicas on other nodes (and a PodDisruptionBudget) keeps serving; a single-replica workload
/// is down until its pod is rescheduled and Ready. skyplan cannot see the workloads, so this is
/// the range from "nothing noticed" to "a pod restarts elsewhere".
const DRAIN: Downtime = Downtime::new(0, 120);
/// A service offering changed in place VM by VM (XenServer, VMware): each VM is scaled while it
/// runs; a hypervisor that cannot hot-add restarts the VM, so count one node restart.
const IN_PLACE_SCALE: Downtime = Downtime::new(0, 120);
/// A new cluster instead of the old one: the old one's workloads, volumes claims and Service
/// addresses are gone; provisioning a CKS cluster takes 10-30 minutes before anything can be
/// deployed again.
const NEW_CLUSTER: Downtime = Downtime::new(600, 1800);

use Change::*;
use Impact::{Forbidden, Minimal, None as NoImpact, PoolRecreate};

#[rustfmt::skip]
pub const RULES: &[Row<Change>] = &[
    Row { change: Created, what: "cluster added", happens: "createKubernetesCluster provisions a new cluster; nothing that serves traffic today is touched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: Description, what: "description", happens: "CloudStack has no API to change a cluster's description: it is recorded but cannot be applied (only a new cluster would carry it)", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: WorkersUp, what: "worker count up", happens: "scaleKubernetesCluster size: new VMs are provisioned and join the cluster; running workloads are not touched", impact: Minimal, downtime: Downtime::ZERO },
    Row { change: WorkersDown, what: "worker count down", happens: "scaleKubernetesCluster size: nodes are drained and deleted, their VMs destroyed and expunged; pods on them are rescheduled", impact: Minimal, downtime: DRAIN },
    Row { change: WorkersWhileStopped, what: "worker count, cluster Stopped", happens: "refused by CloudStack (\"is in Stopped state\"): start the cluster first (state = \"running\"), then change the worker count", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: WorkersByAutoscaler, what: "worker count with autoscaling on", happens: "not planned: with autoscaling on, the cluster autoscaler owns the worker count between min and max", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: Autoscaling, what: "autoscaling on/off, min/max", happens: "scaleKubernetesCluster autoscalingenabled/minsize/maxsize (never together with a size in one call): the cluster autoscaler is (re)configured", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: AutoscalingMovesWorkers, what: "autoscaling bounds that exclude the current worker count", happens: "scaleKubernetesCluster autoscalingenabled/minsize/maxsize, and the cluster autoscaler then adds nodes up to min or drains and removes nodes down to max — impact.md lists autoscaling as none, but the worker count does change here", impact: Minimal, downtime: DRAIN },
    Row { change: VersionUpgrade, what: "Kubernetes patch version, or the next minor", happens: "upgradeKubernetesCluster: nodes are drained and upgraded one at a time, control node first (the Kubernetes API of a single-control-node cluster is briefly unavailable)", impact: Minimal, downtime: DRAIN },
    Row { change: VersionSkipsMinor, what: "skipping a minor version", happens: "refused by CloudStack (\"can be upgraded between next minor or patch version releases\"): upgrade one minor version at a time", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: VersionDowngrade, what: "downgrading", happens: "refused by CloudStack (\"Kubernetes clusters can not be downgraded\"): only a new cluster (--replace) runs an older version", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: VersionOtherMajor, what: "another major version", happens: "refused by CloudStack (\"can be upgraded between next minor or patch version releases\"): only a new cluster (--replace) runs another major version", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: OfferingInPlace, what: "service offering up, VMs on XenServer, VMware or Simulator", happens: "scaleKubernetesCluster serviceofferingid: the VMs are scaled in place, one at a time", impact: Minimal, downtime: IN_PLACE_SCALE },
    Row { change: OfferingStopScaleStart, what: "service offering change while VMs run on another hypervisor (KVM…)", happens: "CloudStack refuses to scale running VMs on this hypervisor, so skyplan stops the cluster, scales it and starts it again: the whole cluster is down", impact: PoolRecreate, downtime: WHOLE_CLUSTER },
    Row { change: OfferingDownWhileRunning, what: "service offering down (less RAM, or less vCPU × MHz) while Running", happens: "refused by CloudStack (\"cannot be scaled down for service offering\"): set state = \"stopped\" in the same change to scale down while stopped, then start it again", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: OfferingWhileStopped, what: "service offering change while Stopped or Created", happens: "scaleKubernetesCluster serviceofferingid on the stopped VMs (accepted on every hypervisor, smaller offerings too); nothing runs to disturb", impact: Minimal, downtime: Downtime::ZERO },
    Row { change: ControlNodes, what: "control-node count", happens: "no API changes it (scaleKubernetesCluster changes workers only): needs a new cluster; --replace deletes this one with its workloads and creates another", impact: Forbidden, downtime: NEW_CLUSTER },
    Row { change: EtcdNodes, what: "etcd-node count", happens: "no API changes it: needs a new cluster; --replace deletes this one with its workloads and creates another", impact: Forbidden, downtime: NEW_CLUSTER },
    Row { change: Zone, what: "zone", happens: "no API moves a cluster: needs a new cluster; --replace deletes this one with its workloads and creates another", impact: Forbidden, downtime: NEW_CLUSTER },
    Row { change: Network, what: "network", happens: "no API moves a cluster to another network: needs a new cluster; --replace deletes this one with its workloads and creates another", impact: Forbidden, downtime: NEW_CLUSTER },
    Row { change: Keypair, what: "keypair", happens: "no API changes a cluster's keypair: needs a new cluster; --replace deletes this one with its workloads and creates another", impact: Forbidden, downtime: NEW_CLUSTER },
    Row { change: Stop, what: "state running → stopped", happens: "stopKubernetesCluster stops every VM: the Kubernetes API and all workloads are down until it is started again", impact: PoolRecreate, downtime: WHOLE_CLUSTER },
    Row { change: Start, what: "state stopped → running", happens: "startKubernetesCluster starts every VM and waits for the Kubernetes API: nothing runs until it is up", impact: PoolRecreate, downtime: WHOLE_CLUSTER },
    Row { change: WrongState, what: "a change the cluster's current state does not allow", happens: "refused by CloudStack (scale needs Created, Running or Stopped; upgrade needs Running; start and stop need a settled state): wait until the cluster is Running or Stopped and plan again", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: Removed, what: "cluster removed from the config", happens: "deleting it would destroy every node and the workloads on it; pass --allow-delete ADDR to delete it", impact: Forbidden, downtime: NEW_CLUSTER },
    Row { change: Deleted, what: "cluster deleted (--allow-delete)", happens: "deleteKubernetesCluster destroys every node: the workloads and their data on the nodes are gone", impact: Forbidden, downtime: NEW_CLUSTER },
    Row { change: DeleteWrongState, what: "cluster deleted in a state that does not allow it", happens: "refused by CloudStack (delete needs Running, Stopped, Alert, Error or Destroying): wait until the cluster settles and plan again", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: DeleteBlocked, what: "cluster deleted while other VMs use the network CKS made for it", happens: "refused by CloudStack (\"has instances using it which are not part of the Kubernetes cluster\"): remove those VMs from the network first", impact: Forbidden, downtime: Downtime::ZERO },
    Row { change: Replaced, what: "cluster replaced (--replace)", happens: "deleteKubernetesCluster, then createKubernetesCluster: the old cluster's workloads are gone and the new one starts empty", impact: Forbidden, downtime: NEW_CLUSTER },
];

/// The row for a change. Every `Change` has exactly one row (checked by a test).
pub fn rule(change: Change) -> &'static Row<Change> {
    skyplan_core::provider::impact_table::row(RULES, change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_has_exactly_one_row() {
        skyplan_core::provider::impact_table::assert_one_row_each(RULES, Change::ALL);
    }

    #[test]
    fn harmless_rows_carry_no_downtime_and_whole_cluster_rows_do() {
        for rule in RULES {
            if rule.impact == NoImpact {
                assert!(rule.downtime.is_zero(), "{:?}", rule.change);
            }
            if rule.impact == PoolRecreate {
                assert!(rule.downtime.min > 0, "{:?}", rule.change);
            }
        }
    }

    #[test]
    fn the_rows_follow_impact_md() {
        assert_eq!(rule(WorkersUp).impact, Minimal);
        assert_eq!(rule(WorkersDown).impact, Minimal);
        assert_eq!(rule(WorkersWhileStopped).impact, Forbidden);
        assert_eq!(rule(Autoscaling).impact, NoImpact);
        assert_eq!(rule(VersionUpgrade).impact, Minimal);
        assert_eq!(rule(VersionSkipsMinor).impact, Forbidden);
        assert_eq!(rule(OfferingInPlace).impact, Minimal);
        assert_eq!(rule(OfferingStopScaleStart).impact, PoolRecreate);
        assert_eq!(rule(OfferingDownWhileRunning).impact, Forbidden);
        assert_eq!(rule(OfferingWhileStopped).impact, Minimal);
        assert_eq!(rule(Stop).impact, PoolRecreate);
        assert_eq!(rule(Start).impact, PoolRecreate);
        for create_only in [ControlNodes, EtcdNodes, Zone, Network, Keypair] {
            assert_eq!(rule(create_only).impact, Forbidden);
            assert!(rule(create_only).happens.contains("new cluster"));
        }
    }
}
