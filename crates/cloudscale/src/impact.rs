//! The cloudscale impact table: one row per kind of change, reviewable line by line against
//! impact.md's cloudscale table (seed 003, checked against the CCM v1.3 code). The diff decides
//! which row a change is; this table alone decides its class, what happens and its downtime.

use skyplan_core::model::{Downtime, Impact};
use skyplan_core::provider::impact_table::Row;

skyplan_core::provider::impact_table::changes!(
    LbCreated,
    LbRenamed,
    LbTagged,
    ListenerTimeouts,
    ListenerRenamed,
    StatusOnly,
    ListenerAllowedCidrs,
    FloatingIpAdded,
    FloatingIpRemoved,
    MonitorUpdated,
    MonitorRecreated,
    MonitorCreated,
    ListenerProtocol,
    ListenerPort,
    ListenerCreated,
    PortAdded,
    PortRemoved,
    PortRenamed,
    PortProtocol,
    PoolAlgorithm,
    PoolProtocol,
    NodePort,
    MembersChanged,
    TrafficPolicy,
    AllowedSubnets,
    LbFlavor,
    LbZone,
    LbVipAddresses,
    LbRemoved,
    LbDeleted,
    LbReplaced,
);

use skyplan_core::provider::impact_table::downtime::{
    BRIEF, LB_RECREATE, LISTENER_MOVE as LISTENER_RECREATE, POOL_RECREATE,
};

use Change::*;
use Impact::{Forbidden, Minimal, None as NoImpact, PoolRecreate};

#[rustfmt::skip]
pub const RULES: &[Row<Change>] = &[
    Row { change: LbCreated, what: "load balancer added", happens: "a new load balancer is created with its pools, members, monitors and listeners; nothing that serves traffic today is touched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: LbRenamed, what: "LB name", happens: "the load balancer is renamed in place (PATCH)", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: LbTagged, what: "skyplan.address tag missing (an imported load balancer)", happens: "the tag is added to the load balancer's tags in place (PATCH), the others kept, so that a lost state finds it by the tag instead of creating another", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: ListenerTimeouts, what: "listener timeouts (client-data, member-connect, member-data)", happens: "the listener's timeouts are changed in place (PATCH listener)", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: ListenerRenamed, what: "listener name", happens: "the listener is renamed in place (PATCH listener)", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: StatusOnly, what: "hostname reported in status, IP mode", happens: "no cloud call: only what the Service status reports changes", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: ListenerAllowedCidrs, what: "listener allowed CIDRs", happens: "the listener's allowed CIDRs are changed in place (PATCH listener); new connections from addresses no longer allowed are refused", impact: Minimal, downtime: BRIEF },
    Row { change: FloatingIpAdded, what: "floating IP added", happens: "the floating IP is assigned to the load balancer (PATCH floating IP, done last)", impact: Minimal, downtime: BRIEF },
    Row { change: FloatingIpRemoved, what: "floating IP removed", happens: "nothing is done: the IP stays assigned to the load balancer, the API has no way to unassign it", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: MonitorUpdated, what: "health-monitor delay/timeout/up/down thresholds, HTTP host/path/method/expected codes", happens: "the health monitor is changed in place (PATCH monitor); new connections may time out until members are re-checked", impact: Minimal, downtime: BRIEF },
    Row { change: MonitorRecreated, what: "health-monitor type or HTTP version", happens: "the health monitor is deleted and created again; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: MonitorCreated, what: "health monitor missing", happens: "the missing health monitor is created; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: ListenerProtocol, what: "listener protocol", happens: "the listener is deleted and created again; the pool is kept", impact: Minimal, downtime: LISTENER_RECREATE },
    Row { change: ListenerPort, what: "Service port number changed, port name unchanged", happens: "the listener is deleted and created on the new port; the pool and its members are kept", impact: Minimal, downtime: LISTENER_RECREATE },
    Row { change: ListenerCreated, what: "listener missing", happens: "the missing listener is created; the pool is kept", impact: Minimal, downtime: BRIEF },
    Row { change: PortAdded, what: "port added", happens: "a pool with its members, monitor and listener is created for the new port; other ports are untouched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: PortRemoved, what: "port removed", happens: "the port's listener, pool, members and monitor are deleted: that port stops serving", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PortRenamed, what: "port name changed (including \"\" → \"http\")", happens: "the pool name is derived from the port name, so the pool is deleted and created again with its members, monitor and listener", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PortProtocol, what: "port protocol TCP ↔ UDP", happens: "the pool name and protocol follow the port protocol, so the pool is deleted and created again with its members, monitor and listener", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PoolAlgorithm, what: "pool algorithm", happens: "a pool's algorithm cannot change in place: the pool is deleted and created again with its members, monitor and listener", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: PoolProtocol, what: "pool protocol (tcp/proxy/proxyv2)", happens: "a pool's protocol cannot change in place: the pool is deleted and created again with its members, monitor and listener", impact: PoolRecreate, downtime: POOL_RECREATE },
    Row { change: NodePort, what: "node port changed", happens: "the members on the new node port are created first, then the old ones deleted (make before break): the pool never serves from no member and is kept", impact: Minimal, downtime: BRIEF },
    Row { change: MembersChanged, what: "nodes added/removed, node selector", happens: "new members are created first, then the old ones deleted (make before break): the pool never serves from no member and is kept", impact: Minimal, downtime: BRIEF },
    Row { change: TrafficPolicy, what: "externalTrafficPolicy Cluster ↔ Local", happens: "members are recreated one at a time with the health-check node port as monitor port (a pool of one member serves nothing while it is) and the monitor follows (http /livez with Local); the pool is kept — the CCM README says pool recreation, its code does not recreate pools", impact: Minimal, downtime: BRIEF },
    Row { change: AllowedSubnets, what: "listener allowed subnets", happens: "only the member filtering changes: members inside the allowed subnets are created first, then those outside deleted — the CCM README lists it as pool recreation, its code does not recreate pools", impact: Minimal, downtime: BRIEF },
    Row { change: LbFlavor, what: "LB flavor", happens: "refused by the CCM (\"flavor changed, please configure the previous flavor\"): a new flavor needs a new load balancer and its address is lost", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbZone, what: "LB zone", happens: "refused by the CCM: a new zone needs a new load balancer and its address is lost", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbVipAddresses, what: "VIP addresses (non-empty and different)", happens: "refused by the CCM (\"please re-create the service\"): new VIP addresses need a new load balancer", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbRemoved, what: "load balancer removed from the config", happens: "deleting it would release its address and stop every port; pass --allow-delete ADDR to delete it", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbDeleted, what: "load balancer deleted (--allow-delete)", happens: "the load balancer and everything under it are deleted: its address is released and every port stops serving", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbReplaced, what: "load balancer replaced (--replace)", happens: "the load balancer is destroyed and created again: its VIP address changes (floating IPs are re-assigned) and every port is down until the new one runs", impact: Forbidden, downtime: LB_RECREATE },
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

    #[test]
    fn the_ccm_code_wins_over_its_readme() {
        assert_eq!(rule(TrafficPolicy).impact, Minimal);
        assert_eq!(rule(AllowedSubnets).impact, Minimal);
        assert_eq!(rule(FloatingIpRemoved).impact, NoImpact);
        assert!(rule(TrafficPolicy).happens.contains("README"));
    }
}
