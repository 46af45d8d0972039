//! Desired vs live LB rules → the changes (each classified by a row of the impact table) and
//! the operations apply will run. Pure: no IO. Rules are matched by public port (one rule per
//! port on the IP); unmatched ones with the same protocol and node port are a public port
//! moved, the rest ports added or removed.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::super::api::{FirewallRule, LoadBalancerRule};
use super::super::live::Inventory;
use super::desired::{Desired, DesiredRule, Members};
use super::found::Found;
use super::impact::{cidrs_change, rule, Change, Version, CIDRLIST_CREATE_SINCE};
use super::ops::{LbOp, MemberVm, NewRule, RuleUpdate};
use crate::ops::Op;
use crate::spec::{CloudstackLoadBalancerSpec, CsProtocol, PublicIp};
use crate::PROVIDER;
use skyplan_core::model::Address;
use skyplan_core::plan::{Action, AttributeChange, Record, ResourceChange};

mod kept;
mod update;

/// How many names of the other rules a reason lists.
const OTHER_RULES_SHOWN: usize = 3;

/// Everything the diff of one load balancer looks at.
pub struct DiffInput<'a> {
    pub address: &'a Address,
    /// The config's spec and its resolution; `None` when removed from the config.
    pub desired: Option<(&'a CloudstackLoadBalancerSpec, &'a Desired)>,
    /// The spec recorded at the last apply.
    pub prior: Option<&'a CloudstackLoadBalancerSpec>,
    pub found: &'a Found<'a>,
    pub live: &'a Inventory,
    pub replace: bool,
    pub allow_delete: bool,
}

/// The change for one load balancer, or why the server would refuse it.
pub fn diff(input: &DiffInput) -> Result<ResourceChange, String> {
    let mut diff = Diff::new(input);
    let action = match input.desired {
        None if !input.found.exists() => Action::NoOp,
        None => {
            diff.removed();
            Action::Delete
        }
        Some((spec, desired)) if !input.found.exists() => {
            diff.created(spec, desired)?;
            Action::Create
        }
        Some((spec, desired)) if input.replace => {
            diff.replaced(spec, desired)?;
            Action::Replace
        }
        Some((spec, desired)) => {
            diff.update(spec, desired);
            if diff.attributes.is_empty() {
                Action::NoOp
            } else {
                Action::Update
            }
        }
    };
    check_cidrlist_on_create(&diff.ops, input.live.server_version())?;
    Ok(ResourceChange {
        address: input.address.clone(),
        provider: PROVIDER.to_string(),
        action,
        requested: action == Action::Replace || (action == Action::Delete && input.allow_delete),
        moved_from: None,
        placement: None,
        attributes: diff.attributes,
        operations: diff
            .ops
            .into_iter()
            .map(|op| crate::ops::planned(Op::Lb(op)))
            .collect(),
        record: input.desired.map(|(spec, _)| Record::of(spec)),
    })
}

/// `createLoadBalancerRule` refuses `cidrlist` before 4.18.
fn check_cidrlist_on_create(ops: &[LbOp], version: Version) -> Result<(), String> {
    if version >= CIDRLIST_CREATE_SINCE {
        return Ok(());
    }
    let refused = ops.iter().find_map(|op| match op {
        LbOp::CreateRule { rule } if !rule.cidrs.is_empty() => Some(rule.name.as_str()),
        _ => None,
    });
    match refused {
        None => Ok(()),
        Some(name) => Err(format!(
            "allowed-cidrs: rule {name} would be created with a cidrlist, which CloudStack {}.{}.{} refuses (\"Parameter cidrList is deprecated\"; it needs 4.18 or later): leave allowed-cidrs empty and use firewall-cidrs",
            version.0, version.1, version.2
        )),
    }
}

/// The firewall protocol of an LB rule's protocol: tcp-proxy is TCP on the wire.
pub fn firewall_protocol(protocol: &str) -> &'static str {
    if protocol.eq_ignore_ascii_case(CsProtocol::Udp.as_str()) {
        "udp"
    } else {
        "tcp"
    }
}

fn names(vms: &[MemberVm]) -> Vec<String> {
    let mut names: Vec<String> = vms.iter().map(|vm| vm.name.clone()).collect();
    names.sort();
    names
}

struct Diff<'a> {
    input: &'a DiffInput<'a>,
    attributes: Vec<AttributeChange>,
    ops: Vec<LbOp>,
    /// "; also reloads N other rules of network X: …", or empty.
    router_note: String,
}

/// Changes that make the virtual router reload haproxy with every LB rule of the network.
fn reloads_router(change: Change) -> bool {
    !matches!(
        change,
        Change::PublicIp
            | Change::Network
            | Change::FirewallCidrs
            | Change::FirewallIgnored
            | Change::LbRemoved
    )
}

impl<'a> Diff<'a> {
    fn new(input: &'a DiffInput<'a>) -> Diff<'a> {
        Diff {
            input,
            attributes: vec![],
            ops: vec![],
            router_note: router_note(input),
        }
    }

    fn note(
        &mut self,
        change: Change,
        path: &str,
        before: Value,
        after: Value,
        object: &str,
        detail: &str,
    ) {
        let row = rule(change);
        let mut reason = format!("{object}: {}", row.happens);
        if !detail.is_empty() {
            reason = format!("{reason} ({detail})");
        }
        if reloads_router(change) {
            reason.push_str(&self.router_note);
        }
        self.attributes.push(AttributeChange {
            path: path.to_string(),
            before,
            after,
            impact: row.impact,
            reason,
            downtime: row.downtime,
            group: object.to_string(),
            effects: Vec::new(),
        });
    }

    fn ip_address(&self) -> String {
        self.input
            .found
            .ip
            .map(|ip| ip.ipaddress.clone())
            .unwrap_or_default()
    }

    // ---- whole load balancer -------------------------------------------------------------

    fn created(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
    ) -> Result<(), String> {
        let detail = match &desired.members {
            Members::AfterCluster {
                address, workers, ..
            } => format!("members: the {workers} workers of {address} after it is applied"),
            Members::Vms(vms) => format!("members: {}", names(vms).join(", ")),
        };
        self.note(
            Change::LbCreated,
            "",
            Value::Null,
            json!(spec.name),
            &format!("load balancer {}", spec.name),
            &detail,
        );
        self.firewall_ignored(spec, desired);
        self.check_ip_network(desired)?;
        self.acquire_ip(spec, false)?;
        for wanted in &desired.rules {
            self.create_rule(spec, desired, wanted);
        }
        Ok(())
    }

    fn removed(&mut self) {
        let allow = self.input.allow_delete;
        let change = if allow {
            Change::LbDeleted
        } else {
            Change::LbRemoved
        };
        let object = format!("load balancer on {}", self.ip_address());
        self.note(
            change,
            "",
            json!(self.ip_address()),
            Value::Null,
            &object,
            "",
        );
        if allow {
            self.delete_all();
        }
    }

    fn replaced(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
    ) -> Result<(), String> {
        let after = match &spec.public_ip {
            PublicIp::Auto => json!("auto"),
            PublicIp::Address(address) => json!(address),
        };
        let object = format!("load balancer {}", spec.name);
        self.note(
            Change::LbReplaced,
            "",
            json!(self.ip_address()),
            after,
            &object,
            "",
        );
        let released = self.delete_all();
        self.acquire_ip(spec, released)?;
        for wanted in &desired.rules {
            self.create_rule(spec, desired, wanted);
        }
        Ok(())
    }

    /// Deletes every firewall rule and LB rule, and releases the IP if skyplan associated it;
    /// returns whether it did.
    fn delete_all(&mut self) -> bool {
        let found = self.input.found;
        for live in &found.rules {
            self.delete_rule(live, true);
        }
        if found.ip_ours {
            self.ops.push(LbOp::ReleaseIp {
                address: self.ip_address(),
            });
        }
        found.ip_ours
    }

    /// Associates (and tags) the IP when the config asks for one skyplan must associate.
    fn acquire_ip(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        released: bool,
    ) -> Result<(), String> {
        let found = self.input.found.ip.filter(|_| !released);
        let address = match (&spec.public_ip, found) {
            (PublicIp::Auto, Some(ip)) if self.input.found.ip_recovered => {
                self.ops.push(LbOp::AdoptIp {
                    id: ip.id.clone(),
                    address: ip.ipaddress.clone(),
                });
                self.ops.push(LbOp::TagIp);
                return Ok(());
            }
            (PublicIp::Auto, Some(_)) => return Ok(()),
            (PublicIp::Auto, None) => None,
            (PublicIp::Address(wanted), Some(ip))
                if ip.ipaddress == *wanted && !ip.state.eq_ignore_ascii_case("free") =>
            {
                return Ok(())
            }
            (PublicIp::Address(wanted), _) => {
                let known = self.input.live.public_ip_by_address(wanted);
                if known.is_none() && !released {
                    return Err(format!(
                        "public-ip: {wanted} is not a public IP of the account (neither allocated nor free)"
                    ));
                }
                Some(wanted.clone())
            }
        };
        let (_, desired) = self.input.desired.expect("acquired for a desired spec");
        self.ops.push(LbOp::AssociateIp {
            address,
            network: desired.network.reference.clone(),
        });
        self.ops.push(LbOp::TagIp);
        Ok(())
    }

    /// A given IP must belong to the rules' network: the server refuses rules on an IP of
    /// another network.
    fn check_ip_network(&self, desired: &Desired) -> Result<(), String> {
        let Some(ip) = self.input.found.ip else {
            return Ok(());
        };
        match (ip.associatednetworkid.as_deref(), desired.network.id()) {
            (Some(own), Some(wanted)) if own != wanted => {
                let name = self
                    .input
                    .live
                    .network(own)
                    .map_or(own, |n| n.name.as_str());
                Err(format!(
                    "public-ip: {} belongs to network {name}, not to network {}",
                    ip.ipaddress,
                    desired.network.name()
                ))
            }
            _ => Ok(()),
        }
    }

    /// Says that firewall-cidrs do nothing on a network without the Firewall service.
    fn firewall_ignored(&mut self, spec: &CloudstackLoadBalancerSpec, desired: &Desired) {
        let open = super::desired::firewall_cidrs(&[]);
        if desired.network.firewall || desired.firewall_cidrs == open {
            return;
        }
        let changed = self
            .input
            .prior
            .is_none_or(|prior| prior.firewall_cidrs != spec.firewall_cidrs);
        if changed {
            let object = format!("network {}", desired.network.name());
            self.note(
                Change::FirewallIgnored,
                "firewall-cidrs",
                self.input
                    .prior
                    .map_or(Value::Null, |p| json!(p.firewall_cidrs)),
                json!(spec.firewall_cidrs),
                &object,
                "",
            );
        }
    }

    // ---- one rule ------------------------------------------------------------------------

    fn create_rule(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
        wanted: &DesiredRule,
    ) {
        self.ops.push(LbOp::CreateRule {
            rule: NewRule {
                name: wanted.name.clone(),
                description: spec.description.clone(),
                public_port: wanted.port.port,
                private_port: wanted.port.node_port,
                protocol: wanted.port.protocol,
                algorithm: spec.algorithm,
                cidrs: desired.allowed_cidrs.clone(),
                network: desired.network.reference.clone(),
            },
        });
        self.ops.push(LbOp::TagRule {
            rule: wanted.name.clone(),
        });
        match &desired.members {
            Members::Vms(vms) if vms.is_empty() => {}
            Members::Vms(vms) => self.ops.push(LbOp::AssignMembers {
                rule: wanted.name.clone(),
                vms: vms.clone(),
            }),
            Members::AfterCluster { cluster, .. } => self.ops.push(LbOp::SyncClusterMembers {
                rule: wanted.name.clone(),
                cluster: cluster.clone(),
            }),
        }
        if desired.network.firewall {
            self.ops.push(LbOp::CreateFirewallRule {
                port: wanted.port.port,
                protocol: firewall_protocol(wanted.port.protocol.as_str()).to_string(),
                cidrs: desired.firewall_cidrs.clone(),
            });
        }
    }

    fn live_firewall(&self, protocol: &str, port: u32) -> Vec<&'a FirewallRule> {
        let Some(ip) = self.input.found.ip else {
            return vec![];
        };
        self.input
            .live
            .firewall_rules_on(&ip.id)
            .filter(|f| f.protocol.eq_ignore_ascii_case(protocol))
            .filter(|f| f.startport == port && f.endport == port)
            .collect()
    }

    fn delete_firewall(&mut self, protocol: &str, port: u32) {
        for fw in self.live_firewall(protocol, port) {
            self.ops.push(LbOp::DeleteFirewallRule {
                id: fw.id.clone(),
                port: u16::try_from(port).unwrap_or(u16::MAX),
                protocol: protocol.to_string(),
            });
        }
    }

    fn delete_rule(&mut self, live: &LoadBalancerRule, with_firewall: bool) {
        if with_firewall {
            self.delete_firewall(firewall_protocol(&live.protocol), live.publicport);
        }
        self.ops.push(LbOp::DeleteRule {
            rule: live.name.clone(),
        });
    }
}

/// Names the other LB rules of the network: each rule change makes the virtual router reload
/// haproxy with all of them (gracefully, so the class is not raised).
fn router_note(input: &DiffInput) -> String {
    let live_network = input.found.rules.iter().find_map(|r| r.networkid.clone());
    let network = match input.desired {
        // Another LB provider (on a shared network) has no haproxy to reload.
        Some((_, d)) if !d.network.virtual_router => None,
        Some((_, d)) => d.network.id().map(str::to_string).or(live_network),
        None => live_network,
    };
    let Some(network) = network else {
        return String::new();
    };
    let own: BTreeSet<&str> = input.found.rules.iter().map(|r| r.id.as_str()).collect();
    let mut others: Vec<&str> = input
        .live
        .rules_in_network(&network)
        .filter(|r| !own.contains(r.id.as_str()))
        .map(|r| r.name.as_str())
        .collect();
    others.sort_unstable();
    if others.is_empty() {
        return String::new();
    }
    let name = input
        .live
        .network(&network)
        .map_or(network.as_str(), |n| n.name.as_str());
    let mut shown = others
        .iter()
        .take(OTHER_RULES_SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if others.len() > OTHER_RULES_SHOWN {
        shown.push_str(", …");
    }
    let noun = if others.len() == 1 { "rule" } else { "rules" };
    format!(
        "; also reloads {} other {noun} of network {name}: {shown} (graceful haproxy reload on the virtual router)",
        others.len()
    )
}
