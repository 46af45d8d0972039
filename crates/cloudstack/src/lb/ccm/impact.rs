//! The CloudStack controller-mode impact table: what the CloudStack CCM v1.2.0 does once
//! skyplan has written the Service. One row per line of impact.md's "CloudStack load-balancer
//! rules" table, controller-mode column, reviewed against research/cloudstack.md §1.5-1.9.
//! The predictor decides which row a change is; this table alone decides its class.

use skyplan_core::model::{Downtime, Impact};
use skyplan_core::provider::impact_table::Row;

pub use super::super::impact::{Version, CIDRLIST_UPDATE_SINCE};

skyplan_core::provider::impact_table::changes!(
    ServiceCreated,
    PortAdded,
    PortRemoved,
    Algorithm,
    CidrsInPlace,
    CidrsRecreated,
    ProtocolProxy,
    ProtocolUdp,
    PublicPort,
    NodePort,
    Members,
    PublicIpIgnored,
    FirewallCidrs,
    FirewallIgnored,
    SamePortTwice,
    ServiceRemoved,
    ServiceDeleted,
    ServiceWritten,
);

use skyplan_core::provider::impact_table::downtime::{
    BRIEF, LB_RECREATE as LB_DELETED, LISTENER_MOVE as PORT_MOVE, POOL_RECREATE as RULE_RECREATE,
};
/// The controller never converges: every port of the Service is at stake, as when the load
/// balancer goes.
const NEVER_CONVERGES: Downtime = LB_DELETED;

const PROTOCOL_WAY_OUT: &str = "the CCM creates the new rule while the old one holds the port: error 537 forever; delete the Service port first or re-create the Service";

use Change::*;
use Impact::{Forbidden, Minimal, None as NoImpact, PoolRecreate};

#[rustfmt::skip]
pub const RULES: &[Row<Change>] = &[
    Row { change: ServiceCreated, what: "Service added (or made type LoadBalancer)", happens: "the CCM associates a public IP (or the loadBalancerIP) and creates one LB rule per port with its members and firewall rule; nothing that serves traffic today is touched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: PortAdded, what: "port added", happens: "the CCM creates a new rule (with its members and firewall rule); other rules are untouched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: PortRemoved, what: "port removed", happens: "the CCM deletes the port's firewall rule and LB rule after the other ports: that port stops serving", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: Algorithm, what: "algorithm (sessionAffinity)", happens: "the CCM updates the rule in place (updateLoadBalancerRule), its ID and members kept; the router reloads haproxy", impact: Minimal, downtime: BRIEF },
    Row { change: CidrsInPlace, what: "source-cidrs annotation (the rule's cidrlist), CloudStack ≥ 4.22", happens: "the CCM updates the rule's cidrlist in place; this needs the CCM's version check, which calls listManagementServersMetrics and so needs admin keys (without them v1.2.0 does not start)", impact: Minimal, downtime: BRIEF },
    Row { change: CidrsRecreated, what: "source-cidrs annotation (the rule's cidrlist), CloudStack < 4.22", happens: "the CCM deletes the rule and creates it again with the new cidrlist (the version check needs admin keys): that port is down meanwhile", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: ProtocolProxy, what: "protocol tcp ↔ tcp-proxy (proxy-protocol annotation)", happens: PROTOCOL_WAY_OUT, impact: Forbidden, downtime: NEVER_CONVERGES },
    Row { change: ProtocolUdp, what: "protocol tcp ↔ udp", happens: PROTOCOL_WAY_OUT, impact: Forbidden, downtime: NEVER_CONVERGES },
    Row { change: PublicPort, what: "public port", happens: "the rule name carries the port: the CCM creates the rule on the new port first, then deletes the old rule and its firewall rule; clients must move to the new port", impact: Minimal, downtime: PORT_MOVE },
    Row { change: NodePort, what: "private (node) port", happens: "the private port cannot be updated: the CCM deletes the rule and creates it again with its members, that port is down meanwhile", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: Members, what: "members (node VMs) added/removed", happens: "the node-set change makes the CCM assign or remove VMs on every rule (UpdateLoadBalancer); the rules are kept", impact: Minimal, downtime: BRIEF },
    Row { change: PublicIpIgnored, what: "public IP (loadBalancerIP) changed", happens: "written to the Service but never applied: the CCM ignores a changed loadBalancerIP once rules exist (it takes the IP from the rules); re-create the Service to move it", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: FirewallCidrs, what: "firewall CIDRs (loadBalancerSourceRanges)", happens: "the CCM deletes the port's firewall rules first and then creates one with the new CIDRs: new connections are refused in between", impact: Minimal, downtime: BRIEF },
    Row { change: FirewallIgnored, what: "loadBalancerSourceRanges on a VPC tier", happens: "nothing: VPC tiers use network ACLs and the CCM ignores the ranges there", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: SamePortTwice, what: "TCP and UDP on one port", happens: "the second rule on the IP and port conflicts (537) and the CCM retries forever; use another port number", impact: Forbidden, downtime: NEVER_CONVERGES },
    Row { change: ServiceRemoved, what: "load balancer removed from the config", happens: "deleting the Service would make the CCM delete every rule and firewall rule and release the address, and every port stops serving; nothing is done: pass --allow-delete ADDR to delete it", impact: Forbidden, downtime: LB_DELETED },
    Row { change: ServiceDeleted, what: "load balancer deleted (--allow-delete)", happens: "skyplan deletes the Service; the CCM deletes every LB rule and firewall rule and releases the public IP it associated: every port stops serving", impact: Forbidden, downtime: LB_DELETED },
    Row { change: ServiceWritten, what: "Service field with no cloud effect", happens: "the Service is written; the CCM reconciles and finds nothing to change in the cloud", impact: NoImpact, downtime: Downtime::ZERO },
];

pub fn rule(change: Change) -> &'static Row<Change> {
    skyplan_core::provider::impact_table::row(RULES, change)
}

/// A change the CCM never applies (it ignores it): once the Service carries it there is
/// nothing left to do, so on its own it leaves the load balancer alone, still reported.
pub fn never_applied(change: Change) -> bool {
    matches!(change, PublicIpIgnored | FirewallIgnored)
}

/// The row of a source-cidrs change: the CCM's own version gate.
pub fn cidrs_change(version: Version) -> Change {
    match version >= CIDRLIST_UPDATE_SINCE {
        true => CidrsInPlace,
        false => CidrsRecreated,
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
    fn the_controller_column_of_impact_md() {
        let expected = [
            (PortAdded, NoImpact),
            (PortRemoved, PoolRecreate),
            (Algorithm, Minimal),
            (CidrsInPlace, Minimal),
            (CidrsRecreated, PoolRecreate),
            (ProtocolProxy, Forbidden),
            (ProtocolUdp, Forbidden),
            (PublicPort, Minimal),
            (NodePort, PoolRecreate),
            (Members, Minimal),
            (PublicIpIgnored, NoImpact),
            (FirewallCidrs, Minimal),
            (SamePortTwice, Forbidden),
            (ServiceCreated, NoImpact),
        ];
        for (change, impact) in expected {
            assert_eq!(rule(change).impact, impact, "{change:?}");
        }
        assert!(rule(ProtocolProxy).happens.contains("537"));
        assert!(rule(ProtocolUdp).happens.contains("re-create the Service"));
        assert!(rule(CidrsInPlace).happens.contains("admin keys"));
        assert!(rule(PublicIpIgnored).happens.contains("ignores"));
    }

    #[test]
    fn the_cidrlist_row_follows_the_ccms_version_gate() {
        assert_eq!(cidrs_change((4, 22, 0)), CidrsInPlace);
        assert_eq!(cidrs_change((4, 21, 3)), CidrsRecreated);
    }
}
