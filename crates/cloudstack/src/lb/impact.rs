//! The CloudStack load-balancer impact table (direct mode): one row per kind of change,
//! reviewable line by line against impact.md's "CloudStack load-balancer rules" table (the
//! direct-mode column, checked against the CloudStack 4.22 code). The diff decides which row a
//! change is; this table alone decides its class, what happens and its downtime.

use skyplan_core::model::{Downtime, Impact};
use skyplan_core::provider::impact_table::Row;

/// A server version as (major, minor, patch), as `Inventory::server_version` returns it.
pub type Version = (u32, u32, u32);

/// `updateLoadBalancerRule` accepts `cidrlist` from 4.22 (CS PR #11568); before, the source
/// ACL changes only by deleting and creating the rule.
pub const CIDRLIST_UPDATE_SINCE: Version = (4, 22, 0);
/// `createLoadBalancerRule` accepts `cidrlist` again from 4.18; before, it is refused as
/// deprecated.
pub const CIDRLIST_CREATE_SINCE: Version = (4, 18, 0);

skyplan_core::provider::impact_table::changes!(
    LbCreated,
    RuleName,
    RuleDescription,
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
    MembersAfterCluster,
    PublicIp,
    Network,
    FirewallCidrs,
    FirewallIgnored,
    LbRemoved,
    LbDeleted,
    LbReplaced,
);

use skyplan_core::provider::impact_table::downtime::{
    BRIEF, LB_RECREATE, LISTENER_MOVE as PORT_MOVE, POOL_RECREATE as RULE_RECREATE,
};

use Change::*;
use Impact::{Forbidden, Minimal, None as NoImpact, PoolRecreate};

#[rustfmt::skip]
pub const RULES: &[Row<Change>] = &[
    Row { change: LbCreated, what: "load balancer added", happens: "a public IP is associated (\"auto\") and tagged, one LB rule per port is created with its members and firewall rule; nothing that serves traffic today is touched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: RuleName, what: "rule name", happens: "the rule is renamed in place (updateLoadBalancerRule)", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: RuleDescription, what: "rule description", happens: "the rule's description is changed in place (updateLoadBalancerRule)", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: PortAdded, what: "port added", happens: "a new LB rule is created with its members and firewall rule; other rules are untouched", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: PortRemoved, what: "port removed", happens: "the port's LB rule and firewall rule are deleted: that port stops serving", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: Algorithm, what: "algorithm", happens: "the rule is updated in place (updateLoadBalancerRule), its members kept", impact: Minimal, downtime: BRIEF },
    Row { change: CidrsInPlace, what: "allowed-cidrs (the rules' cidrlist), CloudStack ≥ 4.22", happens: "the rule's source ACL is updated in place (updateLoadBalancerRule cidrlist); new connections from addresses no longer allowed are refused", impact: Minimal, downtime: BRIEF },
    Row { change: CidrsRecreated, what: "allowed-cidrs (the rules' cidrlist), CloudStack < 4.22", happens: "updateLoadBalancerRule takes no cidrlist before 4.22: the rule is deleted and created again with its members, that port is down meanwhile", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: ProtocolProxy, what: "protocol tcp ↔ tcp-proxy", happens: "the rule is deleted and created again with the new protocol (a second rule on the same IP and port would conflict, 537): that port is down meanwhile", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: ProtocolUdp, what: "protocol tcp ↔ udp", happens: "the rule is deleted and created again with the new protocol (a second rule on the same IP and port would conflict, 537), and its firewall rule follows the protocol: that port is down meanwhile", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: PublicPort, what: "public port", happens: "the rule on the new port is created with its members and firewall rule, then the old rule and its firewall rule are deleted: clients must move to the new port", impact: Minimal, downtime: PORT_MOVE },
    Row { change: NodePort, what: "private (node) port", happens: "the private port cannot be updated: the rule is deleted and created again with its members, that port is down meanwhile", impact: PoolRecreate, downtime: RULE_RECREATE },
    Row { change: Members, what: "members (VMs) added/removed", happens: "VMs are assigned to or removed from the rules (assignToLoadBalancerRule / removeFromLoadBalancerRule); the rules are kept", impact: Minimal, downtime: BRIEF },
    Row { change: MembersAfterCluster, what: "members of a cluster that is created or scaled in the same apply", happens: "the cluster is applied first; then its worker VMs are listed and assigned to (or removed from) the rules", impact: Minimal, downtime: BRIEF },
    Row { change: PublicIp, what: "public IP", happens: "LB rules cannot move to another IP: the address users reach would change; use --replace to delete every rule and create them on the new IP", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: Network, what: "network (not in impact.md)", happens: "LB rules and their public IP belong to one network and cannot move: every rule would be deleted and created on an IP of the other network, so the address changes; use --replace", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: FirewallCidrs, what: "firewall-cidrs", happens: "the port's firewall rules are deleted, then created with the new CIDRs: new connections are refused in between", impact: Minimal, downtime: BRIEF },
    Row { change: FirewallIgnored, what: "firewall-cidrs on a network without the Firewall service (a VPC tier)", happens: "nothing is done: the network has no Firewall service (VPC tiers use network ACLs), so firewall-cidrs are ignored", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: LbRemoved, what: "load balancer removed from the config", happens: "deleting it would delete every rule (and release its address if skyplan associated it); pass --allow-delete ADDR to delete it", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbDeleted, what: "load balancer deleted (--allow-delete)", happens: "firewall rules and LB rules are deleted, and the public IP is released if skyplan associated it: every port stops serving", impact: Forbidden, downtime: LB_RECREATE },
    Row { change: LbReplaced, what: "load balancer replaced (--replace)", happens: "every firewall rule and LB rule is deleted (and the IP released if skyplan associated it), then all are created on the wanted IP: every port is down meanwhile and the address may change", impact: Forbidden, downtime: LB_RECREATE },
];

/// The row for a change. Every `Change` has exactly one row (checked by a test).
pub fn rule(change: Change) -> &'static Row<Change> {
    skyplan_core::provider::impact_table::row(RULES, change)
}

/// The row of an allowed-cidrs change on a server of this version.
pub fn cidrs_change(version: Version) -> Change {
    if version >= CIDRLIST_UPDATE_SINCE {
        CidrsInPlace
    } else {
        CidrsRecreated
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
    fn the_cidrlist_row_depends_on_the_server_version() {
        assert_eq!(cidrs_change((4, 22, 0)), CidrsInPlace);
        assert_eq!(cidrs_change((4, 23, 1)), CidrsInPlace);
        assert_eq!(cidrs_change((4, 21, 9)), CidrsRecreated);
        assert_eq!(rule(CidrsInPlace).impact, Minimal);
        assert_eq!(rule(CidrsRecreated).impact, PoolRecreate);
    }

    #[test]
    fn the_direct_column_of_impact_md() {
        let expected = [
            (RuleName, NoImpact),
            (RuleDescription, NoImpact),
            (PortAdded, NoImpact),
            (PortRemoved, PoolRecreate),
            (Algorithm, Minimal),
            (ProtocolProxy, PoolRecreate),
            (ProtocolUdp, PoolRecreate),
            (PublicPort, Minimal),
            (NodePort, PoolRecreate),
            (Members, Minimal),
            (PublicIp, Forbidden),
            (FirewallCidrs, Minimal),
            (LbCreated, NoImpact),
            (LbRemoved, Forbidden),
        ];
        for (change, impact) in expected {
            assert_eq!(rule(change).impact, impact, "{change:?}");
        }
    }
}
