//! The cloud operations an apply performs on one CloudStack load balancer, in the order the plan
//! lists them. Each is one mutating API call. Rules are named the way the CCM names them and
//! resolved to IDs when the operation runs (a rule created earlier in the same apply has no ID
//! at plan time); objects that exist at plan time and are only deleted carry their IDs.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::spec::{CsAlgorithm, CsProtocol};

/// The network the rules (and an associated IP) live in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkRef {
    /// Known at plan time.
    Known { id: String, name: String },
    /// The network CKS creates for a cluster that does not exist yet: read from the cluster
    /// (by its CloudStack name) when the operation runs, after the cluster was applied.
    OfCluster { cluster: String },
}

impl fmt::Display for NetworkRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkRef::Known { name, .. } => write!(f, "network {name}"),
            NetworkRef::OfCluster { cluster } => write!(f, "the network of cluster {cluster}"),
        }
    }
}

/// A member VM, by ID with its name for the plan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MemberVm {
    pub id: String,
    pub name: String,
}

/// Everything `createLoadBalancerRule` gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRule {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub public_port: u16,
    pub private_port: u16,
    pub protocol: CsProtocol,
    pub algorithm: CsAlgorithm,
    /// The source ACL; empty: the parameter is left out (it needs CloudStack ≥ 4.18).
    pub cidrs: Vec<String>,
    pub network: NetworkRef,
}

/// What `updateLoadBalancerRule` changes; `None` leaves a field alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<CsAlgorithm>,
    /// Only on CloudStack ≥ 4.22.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidrs: Option<Vec<String>>,
}

impl RuleUpdate {
    pub fn is_empty(&self) -> bool {
        self == &RuleUpdate::default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum LbOp {
    /// associateIpAddress: a new address (`None`, public-ip "auto") or the named one when it is
    /// not allocated yet.
    AssociateIp {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        address: Option<String>,
        network: NetworkRef,
    },
    /// createTags on the public IP: `skyplan.address=<address>`.
    TagIp,
    /// Takes the address an interrupted apply associated (but did not get to tag) as the load
    /// balancer's, instead of associating another; tagging it follows.
    AdoptIp { id: String, address: String },
    /// createLoadBalancerRule (openfirewall=false).
    CreateRule { rule: NewRule },
    /// createTags on the rule: `skyplan.address=<address>`.
    TagRule { rule: String },
    /// updateLoadBalancerRule on the rule named `rule` (its name before the update).
    UpdateRule { rule: String, update: RuleUpdate },
    /// deleteLoadBalancerRule.
    DeleteRule { rule: String },
    /// assignToLoadBalancerRule.
    AssignMembers { rule: String, vms: Vec<MemberVm> },
    /// removeFromLoadBalancerRule.
    RemoveMembers { rule: String, vms: Vec<MemberVm> },
    /// Lists the cluster's worker VMs and the rule's members once the cluster was applied,
    /// then assigns the missing workers and removes members that are not workers.
    SyncClusterMembers { rule: String, cluster: String },
    /// createFirewallRule on the public IP, startport = endport = `port`.
    CreateFirewallRule {
        port: u16,
        /// `tcp` (for tcp and tcp-proxy rules) or `udp`.
        protocol: String,
        cidrs: Vec<String>,
    },
    /// deleteFirewallRule.
    DeleteFirewallRule {
        id: String,
        port: u16,
        protocol: String,
    },
    /// disassociateIpAddress: only for an IP skyplan associated.
    ReleaseIp { address: String },
}

fn vm_names(vms: &[MemberVm]) -> String {
    vms.iter()
        .map(|vm| vm.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// How an association's text begins, in the plan and the journal.
pub const ASSOCIATE_TEXT: &str = "associate ";

impl fmt::Display for LbOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LbOp::AssociateIp {
                address: Some(address),
                network,
            } => write!(f, "{ASSOCIATE_TEXT}public IP {address} with {network}"),
            LbOp::AssociateIp {
                address: None,
                network,
            } => write!(f, "{ASSOCIATE_TEXT}a new public IP with {network}"),
            LbOp::TagIp => f.write_str("tag the public IP"),
            LbOp::AdoptIp { address, .. } => write!(
                f,
                "adopt public IP {address}, associated by the interrupted apply"
            ),
            LbOp::CreateRule { rule } => write!(
                f,
                "create LB rule {} ({} {} → {})",
                rule.name, rule.protocol, rule.public_port, rule.private_port
            ),
            LbOp::TagRule { rule } => write!(f, "tag LB rule {rule}"),
            LbOp::UpdateRule { rule, .. } => write!(f, "update LB rule {rule}"),
            LbOp::DeleteRule { rule } => write!(f, "delete LB rule {rule}"),
            LbOp::AssignMembers { rule, vms } => {
                write!(f, "assign {} to LB rule {rule}", vm_names(vms))
            }
            LbOp::RemoveMembers { rule, vms } => {
                write!(f, "remove {} from LB rule {rule}", vm_names(vms))
            }
            LbOp::SyncClusterMembers { rule, cluster } => {
                write!(
                    f,
                    "assign the workers of cluster {cluster} to LB rule {rule}"
                )
            }
            LbOp::CreateFirewallRule {
                port,
                protocol,
                cidrs,
            } => write!(
                f,
                "create firewall rule {protocol}/{port} from {}",
                cidrs.join(", ")
            ),
            LbOp::DeleteFirewallRule { port, protocol, .. } => {
                write!(f, "delete firewall rule {protocol}/{port}")
            }
            LbOp::ReleaseIp { address } => write!(f, "release public IP {address}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_round_trip_through_a_saved_plan() {
        let op = LbOp::CreateRule {
            rule: NewRule {
                name: "edge-tcp-80".into(),
                description: None,
                public_port: 80,
                private_port: 30080,
                protocol: CsProtocol::Tcp,
                algorithm: CsAlgorithm::RoundRobin,
                cidrs: vec![],
                network: NetworkRef::OfCluster {
                    cluster: "lab".into(),
                },
            },
        };
        let text = serde_json::to_string(&op).unwrap();
        assert_eq!(serde_json::from_str::<LbOp>(&text).unwrap(), op);
        assert_eq!(
            op.to_string(),
            "create LB rule edge-tcp-80 (tcp 80 → 30080)"
        );
    }
}
