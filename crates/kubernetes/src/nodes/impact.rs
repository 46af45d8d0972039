//! The node-policy impact table (impact.md "Kubernetes nodes", seeds 001, 003, 004): one row
//! per kind of change a node policy makes, plus the node-metadata drift the cluster reports.
//! The diff decides which row a change is; this table alone decides its class.

use skyplan_core::model::{Downtime, Impact};
use skyplan_core::provider::impact_table::Row;

skyplan_core::provider::impact_table::changes!(
    LabelSet,
    LabelRemoved,
    SchedulingTaintAdded,
    SchedulingTaintRemoved,
    NoExecuteTaintAdded,
    NoExecuteTaintRemoved,
    ClusterForgotten,
    NodeMetadataDrift,
    NodesUnknown,
);

/// Pods without a toleration are evicted at once and rescheduled elsewhere: seconds to minutes
/// per pod, with no figure in the seeds; this is skyplan's estimate of a restart elsewhere.
const EVICTION: Downtime = Downtime::new(0, 60);

use Change::*;
use Impact::{Minimal, None as NoImpact, PoolRecreate};

#[rustfmt::skip]
pub const RULES: &[Row<Change>] = &[
    Row { change: LabelSet, what: "label added or changed", happens: "the node's label is set (PATCH node); running pods are untouched, only what selects by the label changes", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: LabelRemoved, what: "label removed from the policy", happens: "the label the policy set is removed from the node (PATCH node); running pods are untouched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: SchedulingTaintAdded, what: "taint NoSchedule / PreferNoSchedule added", happens: "new pods without a toleration are no longer scheduled on the node; running pods stay", impact: Minimal, downtime: Downtime::ZERO },
    Row { change: SchedulingTaintRemoved, what: "taint NoSchedule / PreferNoSchedule removed", happens: "pods may be scheduled on the node again; running pods stay", impact: Minimal, downtime: Downtime::ZERO },
    Row { change: NoExecuteTaintAdded, what: "taint NoExecute added", happens: "running pods without a toleration are evicted from the node and rescheduled elsewhere", impact: PoolRecreate, downtime: EVICTION },
    Row { change: NoExecuteTaintRemoved, what: "taint NoExecute removed", happens: "pods may run on the node again; nothing is evicted", impact: Minimal, downtime: Downtime::ZERO },
    Row { change: ClusterForgotten, what: "cluster removed from the config", happens: "skyplan never creates or deletes a cluster it connects to: the cluster is only forgotten from the state, nothing is sent to it", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: NodeMetadataDrift, what: "node missing its cloud metadata, tainted uninitialized or shutdown, VM gone or stopped", happens: "drift to report: the cloud controller sets this, skyplan never changes it", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: NodesUnknown, what: "policy on a cluster that does not exist (or run) yet", happens: "nodes unknown until the cluster exists: nothing is sent now; the first plan once its API answers patches the nodes the policy selects", impact: NoImpact, downtime: Downtime::ZERO },
];

pub fn rule(change: Change) -> &'static Row<Change> {
    skyplan_core::provider::impact_table::row(RULES, change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_has_one_row() {
        skyplan_core::provider::impact_table::assert_one_row_each(RULES, Change::ALL);
    }

    #[test]
    fn classes_are_impact_md_s() {
        assert_eq!(rule(LabelSet).impact, Impact::None);
        assert_eq!(rule(SchedulingTaintAdded).impact, Impact::Minimal);
        assert_eq!(rule(SchedulingTaintRemoved).impact, Impact::Minimal);
        assert_eq!(rule(NoExecuteTaintAdded).impact, Impact::PoolRecreate);
        assert_eq!(rule(NoExecuteTaintRemoved).impact, Impact::Minimal);
        assert_eq!(rule(NodeMetadataDrift).impact, Impact::None);
    }
}
