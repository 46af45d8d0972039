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
use crate::model::{Address, CsLoadBalancerSpec, CsProtocol, PublicIp};
use crate::plan::{Action, AttributeChange, ResourceChange};
use crate::provider::cloudstack::ops::Op;
use crate::provider::cloudstack::PROVIDER;
use crate::provider::Operation;

/// How many names of the other rules a reason lists.
const OTHER_RULES_SHOWN: usize = 3;

/// Everything the diff of one load balancer looks at.
pub struct DiffInput<'a> {
    pub address: &'a Address,
    /// The config's spec and its resolution; `None` when removed from the config.
    pub desired: Option<(&'a CsLoadBalancerSpec, &'a Desired)>,
    /// The spec recorded at the last apply.
    pub prior: Option<&'a CsLoadBalancerSpec>,
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
        attributes: diff.attributes,
        operations: diff
            .ops
            .into_iter()
            .map(|op| Operation::Cloudstack(Op::Lb(op)))
            .collect(),
        record: input
            .desired
            .map(|(spec, _)| serde_json::to_value(spec).expect("specs serialize")),
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

/// Differences of one kind found on several rules, shown as one change of the config's key.
#[derive(Default)]
struct Spread {
    rules: Vec<String>,
    before: BTreeSet<String>,
}

impl Spread {
    fn add(&mut self, rule: &str, before: impl Into<String>) {
        self.rules.push(rule.to_string());
        self.before.insert(before.into());
    }

    fn before(&self) -> Value {
        match self.before.len() {
            1 => json!(self.before.iter().next()),
            _ => json!(self.before),
        }
    }

    fn object(&self) -> String {
        format!("LB rules {}", self.rules.join(", "))
    }
}

/// The LB-wide differences of kept rules, noted once each after every rule was looked at.
#[derive(Default)]
struct Spreads {
    name: Spread,
    /// The new names of the renamed rules, in the order of `name`.
    renamed_to: Vec<String>,
    description: Spread,
    algorithm: Spread,
    cidrs: Spread,
    firewall: Spread,
    /// The members the kept rules have now.
    current: BTreeSet<String>,
    added: BTreeSet<String>,
    removed: BTreeSet<String>,
    member_rules: Vec<String>,
    cluster_rules: Vec<String>,
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

    fn created(&mut self, spec: &CsLoadBalancerSpec, desired: &Desired) -> Result<(), String> {
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

    fn replaced(&mut self, spec: &CsLoadBalancerSpec, desired: &Desired) -> Result<(), String> {
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
    fn acquire_ip(&mut self, spec: &CsLoadBalancerSpec, released: bool) -> Result<(), String> {
        let found = self.input.found.ip.filter(|_| !released);
        let address = match (&spec.public_ip, found) {
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
    fn firewall_ignored(&mut self, spec: &CsLoadBalancerSpec, desired: &Desired) {
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

    fn create_rule(&mut self, spec: &CsLoadBalancerSpec, desired: &Desired, wanted: &DesiredRule) {
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

    // ---- update --------------------------------------------------------------------------

    fn update(&mut self, spec: &CsLoadBalancerSpec, desired: &Desired) {
        if self.immutable(spec, desired) {
            return;
        }
        self.firewall_ignored(spec, desired);
        let mut live_left: Vec<&LoadBalancerRule> = self.input.found.rules.clone();
        live_left.sort_by_key(|r| r.publicport);
        let mut want_left: Vec<&DesiredRule> = vec![];
        let mut spreads = Spreads::default();
        for wanted in &desired.rules {
            let at = live_left
                .iter()
                .position(|r| r.publicport == u32::from(wanted.port.port));
            match at {
                Some(index) => {
                    let live = live_left.remove(index);
                    self.kept(spec, desired, live, wanted, &mut spreads);
                }
                None => want_left.push(wanted),
            }
        }
        self.note_spreads(spec, desired, &spreads);
        self.moved_added_removed(spec, desired, live_left, want_left);
    }

    /// Public IP and network cannot change; returns whether one would.
    fn immutable(&mut self, spec: &CsLoadBalancerSpec, desired: &Desired) -> bool {
        let mut refused = false;
        if let (PublicIp::Address(wanted), Some(ip)) = (&spec.public_ip, self.input.found.ip) {
            if ip.ipaddress != *wanted {
                self.note(
                    Change::PublicIp,
                    "public-ip",
                    json!(ip.ipaddress),
                    json!(wanted),
                    &format!("load balancer {}", spec.name),
                    "",
                );
                refused = true;
            }
        }
        let live_network = self
            .input
            .found
            .rules
            .iter()
            .find_map(|r| r.networkid.as_deref())
            .or_else(|| {
                self.input
                    .found
                    .ip
                    .and_then(|ip| ip.associatednetworkid.as_deref())
            });
        if let Some(live_network) = live_network {
            if desired.network.id() != Some(live_network) {
                let before = self
                    .input
                    .live
                    .network(live_network)
                    .map_or(live_network, |n| n.name.as_str());
                self.note(
                    Change::Network,
                    "network",
                    json!(before),
                    json!(desired.network.name()),
                    &format!("load balancer {}", spec.name),
                    "",
                );
                refused = true;
            }
        }
        refused
    }

    fn kept(
        &mut self,
        spec: &CsLoadBalancerSpec,
        desired: &Desired,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
        spreads: &mut Spreads,
    ) {
        let port = wanted.port.port;
        let object = format!("LB rule {}", live.name);
        let mut recreate = false;
        let protocol_changed = !live
            .protocol
            .eq_ignore_ascii_case(wanted.port.protocol.as_str());
        if protocol_changed {
            let udp = |p: &str| p.eq_ignore_ascii_case(CsProtocol::Udp.as_str());
            let change = if udp(&live.protocol) || wanted.port.protocol == CsProtocol::Udp {
                Change::ProtocolUdp
            } else {
                Change::ProtocolProxy
            };
            let detail = format!("{} replaces it", wanted.name);
            self.note(
                change,
                &format!("ports.{port}.protocol"),
                json!(live.protocol),
                json!(wanted.port.protocol),
                &object,
                &detail,
            );
            recreate = true;
        }
        if live.privateport != u32::from(wanted.port.node_port) {
            self.note(
                Change::NodePort,
                &format!("ports.{port}.node-port"),
                json!(live.privateport),
                json!(wanted.port.node_port),
                &object,
                "",
            );
            recreate = true;
        }
        let differences = self.in_place(spec, desired, live, wanted);
        if differences
            .iter()
            .any(|d| d.change == Change::CidrsRecreated)
        {
            recreate = true;
        }
        if recreate {
            for d in differences {
                self.note_within(d, &object);
            }
            self.members_within(desired, live, &object);
            self.recreate(spec, desired, live, wanted, spreads);
            return;
        }
        let mut update = RuleUpdate::default();
        for d in differences {
            match d.change {
                Change::RuleName => {
                    spreads.name.add(&live.name, live.name.clone());
                    spreads.renamed_to.push(wanted.name.clone());
                    update.name = Some(wanted.name.clone());
                }
                Change::RuleDescription => {
                    spreads.description.add(&live.name, text_of(&d.before));
                    update.description = Some(spec.description.clone().unwrap_or_default());
                }
                Change::Algorithm => {
                    spreads.algorithm.add(&live.name, text_of(&d.before));
                    update.algorithm = Some(spec.algorithm);
                }
                _ => {
                    spreads.cidrs.add(&live.name, text_of(&d.before));
                    update.cidrs = Some(desired.allowed_cidrs.clone());
                }
            }
        }
        if !update.is_empty() {
            self.ops.push(LbOp::UpdateRule {
                rule: live.name.clone(),
                update,
            });
        }
        self.members(desired, live, &wanted.name, spreads);
        self.firewall(desired, wanted, spreads);
    }

    /// The rule's fields updateLoadBalancerRule can change (the source ACL only from 4.22).
    fn in_place(
        &self,
        spec: &CsLoadBalancerSpec,
        desired: &Desired,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
    ) -> Vec<Difference> {
        let mut found = vec![];
        let protocol_changed = !live
            .protocol
            .eq_ignore_ascii_case(wanted.port.protocol.as_str());
        if !protocol_changed && live.name != wanted.name {
            found.push(Difference::new(
                Change::RuleName,
                "name",
                &live.name,
                &wanted.name,
            ));
        }
        let (have, want) = (
            live.description.clone().unwrap_or_default(),
            spec.description.clone().unwrap_or_default(),
        );
        if have != want {
            found.push(Difference::new(
                Change::RuleDescription,
                "description",
                &have,
                &want,
            ));
        }
        if live.algorithm != spec.algorithm.as_str() {
            let after = spec.algorithm.as_str();
            found.push(Difference::new(
                Change::Algorithm,
                "algorithm",
                &live.algorithm,
                after,
            ));
        }
        if live.cidrs() != desired.allowed_cidrs {
            let change = cidrs_change(self.input.live.server_version());
            let before = live.cidrs().join(", ");
            let after = desired.allowed_cidrs.join(", ");
            found.push(Difference::new(change, "allowed-cidrs", &before, &after));
        }
        found
    }

    /// A difference that the rule's recreation takes care of: shown, in the recreation's group.
    fn note_within(&mut self, d: Difference, object: &str) {
        if d.change == Change::CidrsRecreated {
            let version = self.input.live.server_version();
            let detail = format!("CloudStack {}.{}.{}", version.0, version.1, version.2);
            self.note(d.change, d.path, d.before, d.after, object, &detail);
            return;
        }
        let row = rule(d.change);
        self.attributes.push(AttributeChange {
            path: d.path.to_string(),
            before: d.before,
            after: d.after,
            impact: row.impact,
            reason: format!(
                "{object}: set anew when the rule is recreated ({})",
                row.what
            ),
            downtime: row.downtime,
            group: object.to_string(),
        });
    }

    /// Member differences of a recreated rule: the new rule gets the wanted members.
    fn members_within(&mut self, desired: &Desired, live: &LoadBalancerRule, object: &str) {
        let mut have: Vec<String> = self
            .member_ids(live)
            .iter()
            .map(|id| self.vm_name(id))
            .collect();
        have.sort();
        let (change, after) = match &desired.members {
            Members::Vms(vms) if names(vms) == have => return,
            Members::Vms(vms) => (Change::Members, json!(names(vms))),
            Members::AfterCluster {
                address, workers, ..
            } => (
                Change::MembersAfterCluster,
                json!(format!(
                    "the {workers} workers of {address} after it is applied"
                )),
            ),
        };
        let d = Difference {
            change,
            path: "members",
            before: json!(have),
            after,
        };
        self.note_within(d, object);
    }

    fn member_ids(&self, live: &LoadBalancerRule) -> BTreeSet<&'a str> {
        self.input
            .live
            .rule_members
            .get(&live.id)
            .map(|ids| ids.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Delete then create (the same IP and port cannot hold two rules): the firewall rule is
    /// kept unless its protocol changes.
    fn recreate(
        &mut self,
        spec: &CsLoadBalancerSpec,
        desired: &Desired,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
        spreads: &mut Spreads,
    ) {
        let old_fw = firewall_protocol(&live.protocol);
        let new_fw = firewall_protocol(wanted.port.protocol.as_str());
        let firewall_follows = old_fw != new_fw;
        self.delete_rule(live, firewall_follows);
        let mut wanted_without_firewall = desired.clone();
        wanted_without_firewall.network.firewall &= firewall_follows;
        self.create_rule(spec, &wanted_without_firewall, wanted);
        if !firewall_follows {
            self.firewall(desired, wanted, spreads);
        }
    }

    fn members(
        &mut self,
        desired: &Desired,
        live: &LoadBalancerRule,
        rule_name: &str,
        spreads: &mut Spreads,
    ) {
        let have = self.member_ids(live);
        for id in &have {
            spreads.current.insert(self.vm_name(id));
        }
        match &desired.members {
            Members::AfterCluster { cluster, .. } => {
                spreads.cluster_rules.push(rule_name.to_string());
                self.ops.push(LbOp::SyncClusterMembers {
                    rule: rule_name.to_string(),
                    cluster: cluster.clone(),
                });
            }
            Members::Vms(vms) => {
                let added: Vec<MemberVm> = vms
                    .iter()
                    .filter(|vm| !have.contains(vm.id.as_str()))
                    .cloned()
                    .collect();
                let wanted: BTreeSet<&str> = vms.iter().map(|vm| vm.id.as_str()).collect();
                let removed: Vec<MemberVm> = have
                    .iter()
                    .filter(|id| !wanted.contains(*id))
                    .map(|id| MemberVm {
                        id: id.to_string(),
                        name: self.vm_name(id),
                    })
                    .collect();
                if added.is_empty() && removed.is_empty() {
                    return;
                }
                spreads.member_rules.push(rule_name.to_string());
                spreads.added.extend(names(&added));
                spreads.removed.extend(names(&removed));
                if !added.is_empty() {
                    self.ops.push(LbOp::AssignMembers {
                        rule: rule_name.to_string(),
                        vms: added,
                    });
                }
                if !removed.is_empty() {
                    self.ops.push(LbOp::RemoveMembers {
                        rule: rule_name.to_string(),
                        vms: removed,
                    });
                }
            }
        }
    }

    fn vm_name(&self, id: &str) -> String {
        self.input
            .live
            .vm(id)
            .map_or_else(|| id.to_string(), |vm| vm.name.clone())
    }

    /// The port's firewall rules hold exactly the wanted CIDRs, or are deleted and created.
    fn firewall(&mut self, desired: &Desired, wanted: &DesiredRule, spreads: &mut Spreads) {
        if !desired.network.firewall {
            return;
        }
        let protocol = firewall_protocol(wanted.port.protocol.as_str());
        let port = wanted.port.port;
        let have = self.live_firewall(protocol, u32::from(port));
        if let [one] = have.as_slice() {
            if one.cidrs() == desired.firewall_cidrs {
                return;
            }
        }
        let before: Vec<String> = have.iter().flat_map(|f| f.cidrs()).collect();
        spreads
            .firewall
            .add(&format!("{protocol}/{port}"), before.join(", "));
        self.delete_firewall(protocol, u32::from(port));
        self.ops.push(LbOp::CreateFirewallRule {
            port,
            protocol: protocol.to_string(),
            cidrs: desired.firewall_cidrs.clone(),
        });
    }

    fn note_spreads(&mut self, spec: &CsLoadBalancerSpec, desired: &Desired, spreads: &Spreads) {
        if !spreads.name.rules.is_empty() {
            let after = match spreads.renamed_to.as_slice() {
                [one] => json!(one),
                many => json!(many),
            };
            self.note(
                Change::RuleName,
                "name",
                spreads.name.before(),
                after,
                &spreads.name.object(),
                "",
            );
        }
        let d = &spreads.description;
        if !d.rules.is_empty() {
            self.note(
                Change::RuleDescription,
                "description",
                d.before(),
                json!(spec.description),
                &d.object(),
                "",
            );
        }
        let a = &spreads.algorithm;
        if !a.rules.is_empty() {
            self.note(
                Change::Algorithm,
                "algorithm",
                a.before(),
                json!(spec.algorithm),
                &a.object(),
                "",
            );
        }
        let c = &spreads.cidrs;
        if !c.rules.is_empty() {
            let version = self.input.live.server_version();
            let detail = format!(
                "CloudStack {}.{}.{}; compared as sets",
                version.0, version.1, version.2
            );
            let change = cidrs_change(version);
            self.note(
                change,
                "allowed-cidrs",
                c.before(),
                json!(desired.allowed_cidrs),
                &c.object(),
                &detail,
            );
        }
        if !spreads.member_rules.is_empty() {
            let detail = format!(
                "added: {}; removed: {}",
                list_or_none(&spreads.added),
                list_or_none(&spreads.removed)
            );
            let object = format!("LB rules {}", spreads.member_rules.join(", "));
            let after = match &desired.members {
                Members::Vms(vms) => json!(names(vms)),
                Members::AfterCluster { .. } => Value::Null,
            };
            self.note(
                Change::Members,
                "members",
                json!(spreads.removed),
                after,
                &object,
                &detail,
            );
        }
        if let (
            false,
            Members::AfterCluster {
                address, workers, ..
            },
        ) = (spreads.cluster_rules.is_empty(), &desired.members)
        {
            let after = format!("the {workers} workers of {address} after it is applied");
            let object = format!("LB rules {}", spreads.cluster_rules.join(", "));
            let detail = format!("members: {after}");
            self.note(
                Change::MembersAfterCluster,
                "members",
                json!(spreads.removed),
                json!(after),
                &object,
                &detail,
            );
        }
        let f = &spreads.firewall;
        if !f.rules.is_empty() {
            let object = format!(
                "firewall rules {} on {}",
                f.rules.join(", "),
                self.ip_address()
            );
            self.note(
                Change::FirewallCidrs,
                "firewall-cidrs",
                f.before(),
                json!(desired.firewall_cidrs),
                &object,
                "",
            );
        }
    }

    /// Ports whose rule is gone or new: a rule with the same protocol and node port on another
    /// public port is that port moved (created first, then the old one deleted).
    fn moved_added_removed(
        &mut self,
        spec: &CsLoadBalancerSpec,
        desired: &Desired,
        live_left: Vec<&LoadBalancerRule>,
        mut want_left: Vec<&DesiredRule>,
    ) {
        let mut removed = vec![];
        for live in live_left {
            let partner = want_left.iter().position(|w| {
                w.port
                    .protocol
                    .as_str()
                    .eq_ignore_ascii_case(&live.protocol)
                    && u32::from(w.port.node_port) == live.privateport
            });
            match partner {
                Some(index) => {
                    let wanted = want_left.remove(index);
                    let detail = format!("{} replaces it", wanted.name);
                    self.note(
                        Change::PublicPort,
                        &format!("ports.{}.port", wanted.port.port),
                        json!(live.publicport),
                        json!(wanted.port.port),
                        &format!("LB rule {}", live.name),
                        &detail,
                    );
                    self.create_rule(spec, desired, wanted);
                    self.delete_rule(live, true);
                }
                None => removed.push(live),
            }
        }
        for live in removed {
            self.note(
                Change::PortRemoved,
                &format!("ports.{}", live.publicport),
                json!(live.name),
                Value::Null,
                &format!("LB rule {}", live.name),
                "",
            );
            self.delete_rule(live, true);
        }
        for wanted in want_left {
            self.note(
                Change::PortAdded,
                &format!("ports.{}", wanted.port.port),
                Value::Null,
                json!(wanted.name),
                &format!("LB rule {}", wanted.name),
                "",
            );
            self.create_rule(spec, desired, wanted);
        }
    }
}

/// One field of a rule that differs.
struct Difference {
    change: Change,
    path: &'static str,
    before: Value,
    after: Value,
}

impl Difference {
    fn new(change: Change, path: &'static str, before: &str, after: &str) -> Difference {
        Difference {
            change,
            path,
            before: json!(before),
            after: json!(after),
        }
    }
}

fn text_of(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn list_or_none(names: &BTreeSet<String>) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// Names the other LB rules of the network: each rule change makes the virtual router reload
/// haproxy with all of them (gracefully, so the class is not raised).
fn router_note(input: &DiffInput) -> String {
    let desired_network = input
        .desired
        .filter(|(_, d)| d.network.virtual_router)
        .and_then(|(_, d)| d.network.id().map(str::to_string));
    let live_network = input.found.rules.iter().find_map(|r| r.networkid.clone());
    let Some(network) = desired_network.or(live_network) else {
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
