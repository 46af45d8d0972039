//! What the CloudStack CCM v1.2.0 will do once the Service is written, predicted from the
//! desired spec, the live Service (its UID names the rules, its node ports are kept by port
//! name), the cluster's nodes and the live rules, the way its `EnsureLoadBalancer`,
//! `checkLoadBalancerRule`, `updateFirewallRule` and `UpdateLoadBalancer` do (research
//! §1.5-1.8). Pure: the result is a list of classified findings and the controller's actions.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, Service};
use serde_json::{json, Value};
use skyplan_core::plan::unknown;

use super::impact::{cidrs_change, Change};
use super::names::{base_name, rule_name, service_port_name};
use super::service::{explicit_node_port, live_node_ports};
use crate::api::{split_cidrs, LoadBalancerRule};
use crate::live::Inventory;
use crate::spec::{CloudstackLoadBalancerSpec, CsProtocol, PublicIp};

/// One predicted effect: the row, the config-shaped path, before/after, the object it is on.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub change: Change,
    pub path: String,
    pub before: Value,
    pub after: Value,
    pub object: String,
    /// Said after the row's text, e.g. the other rules the router reloads.
    pub note: String,
}

#[derive(Debug, Default)]
pub struct Prediction {
    pub findings: Vec<Finding>,
    /// The CCM's actions by where they fall in its sequence (`Step`).
    actions: BTreeSet<(Step, String)>,
}

/// Where an action falls in the CCM's sequence (research §1.5-1.8): `EnsureLoadBalancer` walks
/// the Service's ports in order — each port's rule (deleted before it is created again, or
/// created, or updated), then that port's firewall rules (deletes, then the create) —, then
/// deletes the rules no port names any more (its cleanup loop); `UpdateLoadBalancer`, called
/// for the node set, assigns and removes VMs on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// The port's index in the Service, and the action's place among that port's.
    Port(usize, u8),
    Cleanup,
    Members,
}

const RULE_DELETED: u8 = 0;
const RULE_CREATED: u8 = 1;
const RULE_UPDATED: u8 = 2;
const FIREWALL_DELETED: u8 = 3;
const FIREWALL_CREATED: u8 = 4;

impl Prediction {
    /// The controller's actions, in its order.
    pub fn actions(&self) -> Vec<String> {
        self.actions.iter().map(|(_, a)| a.clone()).collect()
    }

    fn act(&mut self, step: Step, action: String) {
        self.actions.insert((step, action));
    }
}

/// A rule the CCM wants for one Service port.
#[derive(Debug, Clone)]
pub struct WantedRule {
    /// The port's place in the Service: the CCM walks the ports in order.
    pub index: usize,
    pub name: String,
    pub port: u16,
    pub protocol: CsProtocol,
    /// `None`: the apiserver allocates it when the Service is written.
    pub node_port: Option<u16>,
}

/// The CCM's rule base name of the live Service (`None` before the Service exists).
pub fn service_base(service: Option<&Service>) -> Option<String> {
    Some(base_name(service?.metadata.uid.as_deref()?))
}

/// The rules the CCM will want, with the config's node port or else the one the apiserver
/// keeps by port name.
pub fn wanted_rules(
    spec: &CloudstackLoadBalancerSpec,
    base: &str,
    live: Option<&Service>,
) -> Vec<WantedRule> {
    let kept = live_node_ports(live);
    spec.ports
        .iter()
        .enumerate()
        .map(|(index, p)| WantedRule {
            index,
            name: rule_name(base, p.protocol, p.port),
            port: p.port,
            protocol: p.protocol,
            node_port: explicit_node_port(p.node_port)
                .or_else(|| kept.get(&service_port_name(p.protocol, p.port)).copied()),
        })
        .collect()
}

/// The live rules the CCM finds for this base name (`listLoadBalancerRules keyword=<base>`,
/// then keyed by name), by name.
pub fn live_rules<'a>(live: &'a Inventory, base: &str) -> BTreeMap<String, &'a LoadBalancerRule> {
    let prefix = format!("{base}-");
    live.rules
        .iter()
        .filter(|r| r.name.starts_with(&prefix))
        .map(|r| (r.name.clone(), r))
        .collect()
}

pub struct PredictInput<'a> {
    pub spec: &'a CloudstackLoadBalancerSpec,
    pub service: Option<&'a Service>,
    pub nodes: &'a [Node],
    pub live: &'a Inventory,
    /// Workers the cluster gains (negative: loses) in the same apply, before this load
    /// balancer's turn: their Nodes do not exist yet, so they are counted, not named.
    pub scaled_workers: i64,
}

pub fn predict(input: &PredictInput) -> Prediction {
    let mut out = Prediction::default();
    same_port_twice(input.spec, &mut out);
    let Some(base) = service_base(input.service) else {
        out.note(
            Change::ServiceCreated,
            "",
            json!(null),
            json!("LoadBalancer"),
            "service",
            "",
        );
        for (index, port) in input.spec.ports.iter().enumerate() {
            let name = rule_name("<base>", port.protocol, port.port);
            out.act(
                Step::Port(index, RULE_CREATED),
                format!("create LB rule {name}"),
            );
        }
        return out;
    };
    let wanted = wanted_rules(input.spec, &base, input.service);
    let found = live_rules(input.live, &base);
    if found.is_empty() {
        out.note(
            Change::ServiceCreated,
            "",
            json!(null),
            json!(base),
            "service",
            "",
        );
        for rule in &wanted {
            out.act(
                Step::Port(rule.index, RULE_CREATED),
                format!("create LB rule {}", rule.name),
            );
        }
        return out;
    }
    let mut comparer = Comparer {
        input,
        found: &found,
        out: &mut out,
        router: router_note(input.live, &found),
    };
    comparer.compare(&wanted);
    out
}

impl Prediction {
    fn note(
        &mut self,
        change: Change,
        path: &str,
        before: Value,
        after: Value,
        object: &str,
        note: &str,
    ) {
        self.findings.push(Finding {
            change,
            path: path.to_string(),
            before,
            after,
            object: object.to_string(),
            note: note.to_string(),
        });
    }
}

/// Two rules on one IP and port conflict whatever their protocols (537).
fn same_port_twice(spec: &CloudstackLoadBalancerSpec, out: &mut Prediction) {
    let mut seen = BTreeMap::new();
    for port in &spec.ports {
        if let Some(other) = seen.insert(port.port, port.protocol) {
            let path = format!("ports.{}", port.port);
            let both = json!([other.to_string(), port.protocol.to_string()]);
            out.note(
                Change::SamePortTwice,
                &path,
                json!(null),
                both,
                "service",
                "",
            );
        }
    }
}

struct Comparer<'a, 'p> {
    input: &'a PredictInput<'a>,
    found: &'a BTreeMap<String, &'a LoadBalancerRule>,
    out: &'p mut Prediction,
    router: String,
}

impl Comparer<'_, '_> {
    fn compare(&mut self, wanted: &[WantedRule]) {
        let ip = self
            .found
            .values()
            .next()
            .map(|r| r.publicip.clone())
            .unwrap_or_default();
        self.public_ip(&ip);
        let wanted_names: BTreeSet<&str> = wanted.iter().map(|w| w.name.as_str()).collect();
        let mut gone: Vec<&LoadBalancerRule> = self
            .found
            .values()
            .filter(|r| !wanted_names.contains(r.name.as_str()))
            .copied()
            .collect();
        let mut added = Vec::new();
        for rule in wanted {
            match self.found.get(&rule.name) {
                Some(live) => self.existing(rule, live, &ip),
                None => added.push(rule),
            }
        }
        added.retain(|rule| !self.protocol_change(rule, &mut gone));
        self.moved_or_added(added, gone);
        self.members(wanted);
    }

    /// A new rule on a port an old rule of another protocol still holds: the CCM's create
    /// conflicts (537) before its cleanup loop ever runs.
    fn protocol_change(&mut self, rule: &WantedRule, gone: &mut Vec<&LoadBalancerRule>) -> bool {
        let Some(at) = gone
            .iter()
            .position(|r| r.publicport == u32::from(rule.port))
        else {
            return false;
        };
        let old = gone.remove(at);
        let udp = |p: &str| p == "udp";
        let change = match udp(&old.protocol) == udp(&rule.protocol.to_string()) {
            true => Change::ProtocolProxy,
            false => Change::ProtocolUdp,
        };
        let path = format!("ports.{}.protocol", rule.port);
        let object = format!("LB rule {}", old.name);
        self.out.note(
            change,
            &path,
            json!(old.protocol),
            json!(rule.protocol.to_string()),
            &object,
            "",
        );
        true
    }

    /// New names and vanished names of one protocol pair up as public-port moves (create
    /// first, old deleted in the cleanup loop); the rest are ports added or removed.
    fn moved_or_added(&mut self, added: Vec<&WantedRule>, mut gone: Vec<&LoadBalancerRule>) {
        for rule in added {
            self.out.act(
                Step::Port(rule.index, RULE_CREATED),
                format!("create LB rule {}", rule.name),
            );
            let protocol = rule.protocol.to_string();
            match gone.iter().position(|r| r.protocol == protocol) {
                Some(at) => {
                    let old = gone.remove(at);
                    self.out
                        .act(Step::Cleanup, format!("delete LB rule {}", old.name));
                    let path = format!("ports.{}.port", old.publicport);
                    let object = format!("LB rule {}", old.name);
                    let router = self.router.clone();
                    self.out.note(
                        Change::PublicPort,
                        &path,
                        json!(old.publicport),
                        json!(rule.port),
                        &object,
                        &router,
                    );
                }
                None => {
                    let path = format!("ports.{}", rule.port);
                    let object = format!("LB rule {}", rule.name);
                    let router = self.router.clone();
                    self.out.note(
                        Change::PortAdded,
                        &path,
                        json!(null),
                        json!(rule.port),
                        &object,
                        &router,
                    );
                }
            }
        }
        for old in gone {
            self.out
                .act(Step::Cleanup, format!("delete LB rule {}", old.name));
            let path = format!("ports.{}", old.publicport);
            let object = format!("LB rule {}", old.name);
            let router = self.router.clone();
            self.out.note(
                Change::PortRemoved,
                &path,
                json!(old.publicport),
                json!(null),
                &object,
                &router,
            );
        }
    }

    /// `checkLoadBalancerRule` on a rule that keeps its name.
    fn existing(&mut self, rule: &WantedRule, live: &LoadBalancerRule, ip: &str) {
        let object = format!("LB rule {}", rule.name);
        let router = self.router.clone();
        let spec = self.input.spec;
        let wanted_cidrs = ccm_cidrs(&spec.allowed_cidrs);
        let live_cidrs = split_cidrs(live.cidrlist.as_deref().unwrap_or(""));
        let cidrs_changed = wanted_cidrs != live_cidrs;
        let version = self.input.live.server_version();
        let node_port = rule.node_port.map_or(0, u32::from);
        let basic_match = live.publicip == ip && live.privateport == node_port;
        let cidr_row = cidrs_change(version);
        let path = |field: &str| format!("ports.{}.{field}", rule.port);
        if !basic_match || (cidrs_changed && cidr_row == Change::CidrsRecreated) {
            self.out.act(
                Step::Port(rule.index, RULE_DELETED),
                format!("delete LB rule {}", rule.name),
            );
            self.out.act(
                Step::Port(rule.index, RULE_CREATED),
                format!("create LB rule {}", rule.name),
            );
        }
        if live.privateport != node_port {
            let after = rule
                .node_port
                // Known only once the apiserver allocates it: shown as such, never as a number.
                .map_or(unknown("allocated by the apiserver"), |p| json!(p));
            self.out.note(
                Change::NodePort,
                &path("node-port"),
                json!(live.privateport),
                after,
                &object,
                &router,
            );
        }
        if cidrs_changed {
            if cidr_row == Change::CidrsInPlace && basic_match {
                self.out.act(
                    Step::Port(rule.index, RULE_UPDATED),
                    format!("update LB rule {} (cidrlist)", rule.name),
                );
            }
            self.out.note(
                cidr_row,
                "allowed-cidrs",
                json!(live_cidrs),
                json!(wanted_cidrs),
                &object,
                &router,
            );
        }
        if live.algorithm != spec.algorithm.to_string() {
            if basic_match {
                self.out.act(
                    Step::Port(rule.index, RULE_UPDATED),
                    format!("update LB rule {} (algorithm)", rule.name),
                );
            }
            self.out.note(
                Change::Algorithm,
                "algorithm",
                json!(live.algorithm),
                json!(spec.algorithm.to_string()),
                &object,
                &router,
            );
        }
        self.firewall(rule, live);
    }

    /// `updateFirewallRule`: the port's firewall rules against loadBalancerSourceRanges; on a
    /// VPC tier the CCM writes network ACLs and ignores the ranges.
    fn firewall(&mut self, rule: &WantedRule, live: &LoadBalancerRule) {
        let wanted = ccm_cidrs(&self.input.spec.firewall_cidrs);
        let protocol = if rule.protocol == CsProtocol::Udp {
            "udp"
        } else {
            "tcp"
        };
        let port = u32::from(rule.port);
        let matching: Vec<_> = self
            .input
            .live
            .firewall_rules_on(&live.publicipid)
            .filter(|f| f.protocol == protocol && f.startport == port && f.endport == port)
            .collect();
        let has = matching.iter().map(|f| f.cidrs()).collect::<Vec<_>>();
        if has.len() == 1 && has[0] == wanted {
            return;
        }
        let network = live
            .networkid
            .as_deref()
            .and_then(|id| self.input.live.network(id));
        let path = format!("ports.{}.firewall-cidrs", rule.port);
        let object = format!("firewall of LB rule {}", rule.name);
        let before = json!(has.first());
        if network.is_some_and(|n| n.vpcid.as_deref().is_some_and(|v| !v.is_empty())) {
            self.out.note(
                Change::FirewallIgnored,
                &path,
                before,
                json!(wanted),
                &object,
                "",
            );
            return;
        }
        for existing in matching.iter().filter(|f| f.cidrs() != wanted) {
            self.out.act(
                Step::Port(rule.index, FIREWALL_DELETED),
                format!("delete firewall rule {} ({protocol} {port})", existing.id),
            );
        }
        if !has.contains(&wanted) {
            self.out.act(
                Step::Port(rule.index, FIREWALL_CREATED),
                format!(
                    "create firewall rule {protocol} {port} for {}",
                    wanted.join(",")
                ),
            );
        }
        self.out.note(
            Change::FirewallCidrs,
            &path,
            before,
            json!(wanted),
            &object,
            "",
        );
    }

    /// A changed loadBalancerIP is ignored once rules exist.
    fn public_ip(&mut self, ip: &str) {
        let PublicIp::Address(wanted) = &self.input.spec.public_ip else {
            return;
        };
        if wanted != ip {
            self.out.note(
                Change::PublicIpIgnored,
                "public-ip",
                json!(ip),
                json!(wanted),
                "service",
                "",
            );
        }
    }

    /// `UpdateLoadBalancer`: every kept rule gets the VMs of the nodes, matched by name.
    fn members(&mut self, wanted: &[WantedRule]) {
        let scaled = self.input.scaled_workers;
        if self.input.nodes.is_empty() {
            return;
        }
        let vms = node_vms(self.input.nodes, self.input.live);
        for rule in wanted {
            let Some(live) = self.found.get(&rule.name) else {
                continue;
            };
            let has: BTreeSet<String> = self
                .input
                .live
                .rule_members
                .get(&live.id)
                .map(|m| m.iter().cloned().collect())
                .unwrap_or_default();
            let want: BTreeSet<String> = vms.keys().cloned().collect();
            if has == want && scaled == 0 {
                continue;
            }
            let live = self.input.live;
            let name_of =
                |id: &String| live.vm(id).map_or_else(|| id.clone(), |vm| vm.name.clone());
            let added: Vec<String> = want.difference(&has).map(name_of).collect();
            let removed: Vec<String> = has.difference(&want).map(name_of).collect();
            if !added.is_empty() {
                self.out.act(
                    Step::Members,
                    format!("assign {} to LB rule {}", added.join(", "), rule.name),
                );
            }
            if !removed.is_empty() {
                self.out.act(
                    Step::Members,
                    format!("remove {} from LB rule {}", removed.join(", "), rule.name),
                );
            }
            let object = format!("LB rule {}", rule.name);
            let before: Vec<String> = has.iter().map(name_of).collect();
            let mut after: Vec<String> = want.iter().map(name_of).collect();
            let mut note = String::new();
            if let Some(scale) = scale_action(scaled) {
                self.out.act(
                    Step::Members,
                    format!("{} LB rule {}", scale.action, rule.name),
                );
                after.push(scale.member);
                note = scale.note;
            }
            note.push_str(&self.router);
            self.out.note(
                Change::Members,
                "members",
                json!(before),
                json!(after),
                &object,
                &note,
            );
        }
    }
}

/// What the CCM does to a rule for the workers a scale in the same apply adds or removes:
/// their VMs exist only once the cluster is applied, so they are counted, not named.
struct ScaleAction {
    /// "assign 1 new worker VM to"
    action: String,
    /// The members' after-list entry, e.g. "+1 new worker".
    member: String,
    note: String,
}

fn scale_action(scaled: i64) -> Option<ScaleAction> {
    let count = scaled.unsigned_abs();
    let vms = if count == 1 { "VM" } else { "VMs" };
    let workers = if count == 1 { "worker" } else { "workers" };
    match scaled.signum() {
        1 => Some(ScaleAction {
            action: format!("assign {count} new worker {vms} to"),
            member: format!("+{count} new {workers}"),
            note: format!("; the cluster is scaled first in this apply: {count} new {workers}, assigned once their Nodes are Ready"),
        }),
        -1 => Some(ScaleAction {
            action: format!("remove {count} worker {vms} (chosen by CKS) from"),
            member: format!("-{count} {workers} (chosen by CKS)"),
            note: format!("; the cluster is scaled first in this apply: CKS drains and deletes {count} {workers}, the CCM removes their VMs"),
        }),
        _ => None,
    }
}

/// The CCM's view of a CIDR list: empty means everyone (`0.0.0.0/0`), compared as a set.
pub(super) fn ccm_cidrs(cidrs: &[String]) -> Vec<String> {
    match cidrs.is_empty() {
        true => vec!["0.0.0.0/0".to_string()],
        false => split_cidrs(&cidrs.join(",")),
    }
}

/// The nodes the service controller hands the CCM: v1.2.0 pins cloud-provider v0.24, whose
/// `getNodeConditionPredicate` drops a node with the exclude label, with the autoscaler's
/// deletion taint, without conditions, or not Ready — unlike the v0.29 the cloudscale CCM
/// pins, readiness counts here: a stopped VM's node leaves the rules.
pub fn lb_candidate(node: &Node) -> bool {
    use skyplan_kubernetes::lb_nodes::{has_exclude_label, is_autoscaled_away, is_ready};
    !has_exclude_label(node) && !is_autoscaled_away(node) && is_ready(node)
}

/// The VMs the CCM's `verifyHosts` matches: node names lower-cased without their domain,
/// against VM names lower-cased. By VM ID, with the VM name.
pub fn node_vms(nodes: &[Node], live: &Inventory) -> BTreeMap<String, String> {
    let names: BTreeSet<String> = nodes
        .iter()
        .filter(|n| lb_candidate(n))
        .filter_map(|n| n.metadata.name.as_deref())
        .map(|n| n.split('.').next().unwrap_or(n).to_lowercase())
        .collect();
    live.vms
        .iter()
        .filter(|vm| names.contains(&vm.name.to_lowercase()))
        .map(|vm| (vm.id.clone(), vm.name.clone()))
        .collect()
}

/// "; also reloads N other rules of network X" — every LB change on a virtual-router network
/// resends all its LB rules (research §1.9).
fn router_note(live: &Inventory, own: &BTreeMap<String, &LoadBalancerRule>) -> String {
    let Some(network) = own.values().find_map(|r| r.networkid.clone()) else {
        return String::new();
    };
    let mut others: Vec<&str> = live
        .rules_in_network(&network)
        .filter(|r| !own.contains_key(&r.name))
        .map(|r| r.name.as_str())
        .collect();
    others.sort_unstable();
    if others.is_empty() {
        return String::new();
    }
    let name = live
        .network(&network)
        .map_or(network.as_str(), |n| n.name.as_str());
    let noun = if others.len() == 1 { "rule" } else { "rules" };
    format!(
        "; also reloads {} other {noun} of network {name}: {} (graceful haproxy reload on the virtual router)",
        others.len(),
        others.join(", ")
    )
}
