//! The controller-mode impact table: what the cloudscale CCM (v1.3 code) does once skyplan has
//! written the Service. One row per line of impact.md's "cloudscale in controller mode" and
//! of the cloudscale table as the CCM carries it out, reviewed against
//! research/kubernetes.md §1.5-1.8. Where the CCM's README and its code disagree, the row
//! follows the code and says so.

use crate::impact::Change as Direct;
use skyplan_core::model::{Downtime, Impact};
use skyplan_core::provider::impact_table::Row;

skyplan_core::provider::impact_table::changes!(
    ServiceCreated,
    LbRenamed,
    RenameWithoutUuid,
    ListenerTimeouts,
    ListenerRecreated,
    StatusOnly,
    ListenerAllowedCidrs,
    FloatingIpAdded,
    FloatingIpRemoved,
    MonitorUpdated,
    MonitorRecreated,
    MonitorCreated,
    ListenerProtocol,
    ListenerPort,
    PortAdded,
    PortRemoved,
    PortRenamed,
    PortProtocol,
    PoolAlgorithm,
    PoolProtocol,
    NodePort,
    NewNodePort,
    MembersChanged,
    NodeSelector,
    NodeLabelsPending,
    TrafficPolicy,
    AllowedSubnets,
    LbFlavor,
    LbZone,
    LbVipAddresses,
    VipCleared,
    ServiceRemoved,
    ServiceDeleted,
    ServiceWritten,
);

use skyplan_core::provider::impact_table::downtime::{
    LB_RECREATE, LISTENER_MOVE as LISTENER_RECREATE, POOL_RECREATE,
};
/// Member or monitor churn: delete, the CCM's 5 s pause, create — longer than the shared
/// `BRIEF` by that pause.
const BRIEF: Downtime = Downtime::new(0, 10);

use Change::*;
use Impact::{Forbidden, Minimal, None as NoImpact, PoolRecreate};

#[rustfmt::skip]
pub const RULES: &[Row<Change>] = &[
    Row { change: ServiceCreated, what: "Service added (or made type LoadBalancer)", happens: "the CCM creates the load balancer with its pools, members, monitors and listeners and writes its uuid on the Service; nothing that serves traffic today is touched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: LbRenamed, what: "LB name (uuid annotation present)", happens: "the CCM finds the load balancer by its uuid annotation and renames it in place", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: RenameWithoutUuid, what: "LB name without the uuid annotation", happens: "the CCM looks the load balancer up by the new name, finds none and creates a second one (the Service's address changes); add the uuid annotation first", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: ListenerTimeouts, what: "listener timeouts (client-data, member-connect, member-data)", happens: "the CCM updates the listener in place", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: ListenerRecreated, what: "listener name differs from the CCM's `protocol/port`", happens: "the listener name is part of the CCM's listener key: it deletes the listener and creates it again; the pool is kept", impact: Minimal, downtime: LISTENER_RECREATE },
    Row { change: StatusOnly, what: "force-hostname, ip-mode", happens: "no cloud call: the CCM only changes what the Service status reports", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: ListenerAllowedCidrs, what: "listener allowed CIDRs", happens: "the CCM updates the listener's allowed CIDRs in place; new connections from addresses no longer allowed are refused", impact: Minimal, downtime: BRIEF },
    Row { change: FloatingIpAdded, what: "floating IP added", happens: "the CCM assigns the floating IP to the load balancer after everything else", impact: Minimal, downtime: BRIEF },
    Row { change: FloatingIpRemoved, what: "floating IP removed", happens: "nothing: the CCM never unassigns a floating IP, it stays on the load balancer", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: MonitorUpdated, what: "health-monitor delay/timeout/up/down thresholds, HTTP host/path/method/expected codes", happens: "the CCM updates the health monitor in place", impact: Minimal, downtime: BRIEF },
    Row { change: MonitorRecreated, what: "health-monitor type or HTTP version", happens: "type and HTTP version are the CCM's monitor key: it deletes the monitor, pauses 5 s and creates it again; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: MonitorCreated, what: "health monitor missing", happens: "the CCM creates the missing health monitor; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: ListenerProtocol, what: "listener protocol", happens: "the protocol is part of the CCM's listener key: the listener is deleted and created again; the pool is kept", impact: Minimal, downtime: LISTENER_RECREATE },
    Row { change: ListenerPort, what: "Service port number changed, port name unchanged", happens: "the listener key `tcp/<port>` changes, so the CCM deletes the listener and creates it on the new port; the apiserver keeps the node port by port name, so the pool and its members are kept", impact: Minimal, downtime: LISTENER_RECREATE },
    Row { change: PortAdded, what: "port added", happens: "the CCM creates a pool with members, monitor and listener for the new port; other ports are untouched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: PortRemoved, what: "port removed", happens: "the CCM deletes the port's pool with its members (listener and monitor go with it): that port stops serving", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PortRenamed, what: "port name changed (including \"\" → \"http\")", happens: "the pool name `tcp/<name>` changes, so the CCM deletes the pool and creates it again; the apiserver allocates a new node port for the renamed port", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PortProtocol, what: "port protocol TCP ↔ UDP", happens: "the pool name and protocol follow the port protocol: the CCM deletes the pool and creates it again", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PoolAlgorithm, what: "pool-algorithm annotation", happens: "the algorithm is part of the CCM's pool key: it deletes the pool with its members and creates it again", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PoolProtocol, what: "pool-protocol annotation (tcp/proxy/proxyv2)", happens: "the protocol is part of the CCM's pool key: it deletes the pool with its members and creates it again", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: NodePort, what: "node port changed", happens: "the node port is part of the CCM's member key: every member of the pool is deleted and created again; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: NewNodePort, what: "a port whose node port the apiserver allocates at apply", happens: "the node port is only known once the Service is written: the pool's members are created again on it (member recreation); the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: MembersChanged, what: "nodes added/removed", happens: "the node-set change makes the service controller call UpdateLoadBalancer: the CCM deletes and creates members; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: NodeSelector, what: "node-selector annotation", happens: "the annotation change makes the CCM reconcile: members of nodes no longer selected are deleted, newly selected ones created; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: NodeLabelsPending, what: "node labels changed, Service unchanged", happens: "a node label change alone does not make the CCM reconcile: the members follow the node-selector only when the Service is next synced (any change to it) or the node set changes", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: TrafficPolicy, what: "externalTrafficPolicy Cluster ↔ Local", happens: "members are recreated (their monitor port becomes the health-check node port) and the monitor is recreated as http /livez; the pool is kept — the CCM README says pools are recreated, its code does not", impact: Minimal, downtime: BRIEF },
    Row { change: AllowedSubnets, what: "listener-allowed-subnets annotation", happens: "only the member filtering changes: members are deleted and created, the pool is kept — the CCM README lists it as pool recreation, its code does not", impact: Minimal, downtime: BRIEF },
    Row { change: LbFlavor, what: "LB flavor", happens: "the CCM refuses (\"flavor … changed, please configure the previous flavor\") and retries forever: nothing changes and the Service never syncs again", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbZone, what: "LB zone", happens: "the CCM refuses (\"zone … changed\") and retries forever; the zone annotation is the CCM's (it takes the nodes' zone)", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbVipAddresses, what: "VIP addresses (non-empty and different)", happens: "the CCM refuses (\"please re-create the service\") and retries forever", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: VipCleared, what: "VIP annotation cleared", happens: "accepted silently: an empty list matches any VIP, the load balancer keeps its address", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: ServiceRemoved, what: "load balancer removed from the config", happens: "deleting the Service would make the CCM delete the load balancer and release its address, and every port stops serving; nothing is done: pass --allow-delete ADDR to delete it", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: ServiceDeleted, what: "load balancer deleted (--allow-delete)", happens: "skyplan deletes the Service; the CCM deletes the load balancer with its pools, members, monitors and listeners and releases its address: every port stops serving", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: ServiceWritten, what: "Service field with no cloud effect", happens: "the Service is written; the CCM reconciles and finds nothing to change in the cloud", impact: NoImpact, downtime: Downtime::ZERO },
];

pub fn rule(change: Change) -> &'static Row<Change> {
    skyplan_core::provider::impact_table::row(RULES, change)
}

/// The controller-mode row of a change the shared cloudscale diff found.
pub fn from_direct(change: Direct) -> Change {
    match change {
        Direct::LbCreated => ServiceCreated,
        Direct::LbRenamed => LbRenamed,
        // Never planned in controller mode: the CCM's load balancer is not skyplan's to tag,
        // the Service finds it. Were it planned, it would write nothing the CCM acts on.
        Direct::LbTagged => ServiceWritten,
        Direct::ListenerTimeouts => ListenerTimeouts,
        Direct::ListenerRenamed | Direct::ListenerCreated => ListenerRecreated,
        Direct::StatusOnly => StatusOnly,
        Direct::ListenerAllowedCidrs => ListenerAllowedCidrs,
        Direct::FloatingIpAdded => FloatingIpAdded,
        Direct::FloatingIpRemoved => FloatingIpRemoved,
        Direct::MonitorUpdated => MonitorUpdated,
        Direct::MonitorRecreated => MonitorRecreated,
        Direct::MonitorCreated => MonitorCreated,
        Direct::ListenerProtocol => ListenerProtocol,
        Direct::ListenerPort => ListenerPort,
        Direct::PortAdded => PortAdded,
        Direct::PortRemoved => PortRemoved,
        Direct::PortRenamed => PortRenamed,
        Direct::PortProtocol => PortProtocol,
        Direct::PoolAlgorithm => PoolAlgorithm,
        Direct::PoolProtocol => PoolProtocol,
        Direct::NodePort => NodePort,
        Direct::MembersChanged => MembersChanged,
        Direct::TrafficPolicy => TrafficPolicy,
        Direct::AllowedSubnets => AllowedSubnets,
        Direct::LbFlavor => LbFlavor,
        Direct::LbZone => LbZone,
        Direct::LbVipAddresses => LbVipAddresses,
        Direct::LbRemoved | Direct::LbDeleted | Direct::LbReplaced => ServiceRemoved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_has_exactly_one_row() {
        skyplan_core::provider::impact_table::assert_one_row_each(RULES, Change::ALL);
    }

    #[test]
    fn every_direct_change_has_a_controller_row() {
        for change in Direct::ALL {
            rule(from_direct(*change));
        }
    }

    #[test]
    fn where_the_ccm_loops_or_duplicates_it_is_forbidden_and_where_it_ignores_none() {
        for change in [LbFlavor, LbZone, LbVipAddresses, RenameWithoutUuid] {
            assert_eq!(rule(change).impact, Forbidden, "{change:?}");
        }
        for change in [VipCleared, FloatingIpRemoved, StatusOnly, NodeLabelsPending] {
            assert_eq!(rule(change).impact, NoImpact, "{change:?}");
        }
        assert_eq!(rule(PortRenamed).impact, PoolRecreate);
        assert!(rule(TrafficPolicy).happens.contains("README"));
        assert!(rule(AllowedSubnets).happens.contains("README"));
    }

    #[test]
    fn disruptive_rows_carry_a_downtime_and_harmless_ones_none() {
        for rule in RULES {
            assert_eq!(
                rule.impact == NoImpact,
                rule.downtime.is_zero(),
                "{:?}",
                rule.change
            );
        }
    }
}
