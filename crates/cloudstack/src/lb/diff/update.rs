//! An existing load balancer: public IP and network cannot change; rules are matched by public
//! port, the LB-wide differences of kept rules are noted once each, and ports without a partner
//! are moved, added or removed.

use super::*;
use skyplan_core::model::Downtime;
use skyplan_core::plan::unknown;

/// Differences of one kind found on several rules, shown as one change of the config's key.
#[derive(Default)]
pub(super) struct Spread {
    pub(super) rules: Vec<String>,
    /// The distinct values the rules had.
    pub(super) before: Vec<Value>,
}

impl Spread {
    pub(super) fn add(&mut self, rule: &str, before: Value) {
        self.rules.push(rule.to_string());
        if !self.before.contains(&before) {
            self.before.push(before);
        }
    }

    fn before(&self) -> Value {
        match self.before.as_slice() {
            [one] => one.clone(),
            many => json!(many),
        }
    }

    fn object(&self) -> String {
        rules_object(&self.rules)
    }
}

/// The LB-wide differences of kept rules, noted once each after every rule was looked at.
#[derive(Default)]
pub(super) struct Spreads {
    pub(super) name: Spread,
    /// The new names of the renamed rules, in the order of `name`.
    pub(super) renamed_to: Vec<String>,
    pub(super) description: Spread,
    pub(super) algorithm: Spread,
    pub(super) cidrs: Spread,
    pub(super) firewall: Spread,
    /// The members the kept rules have now.
    pub(super) current: BTreeSet<String>,
    pub(super) added: BTreeSet<String>,
    pub(super) removed: BTreeSet<String>,
    pub(super) member_rules: Vec<String>,
    pub(super) cluster_rules: Vec<String>,
    /// The member differences of recreated rules, noted with the kept rules' in one row.
    pub(super) recreated_members: Vec<RecreatedMembers>,
}

/// A recreated rule whose new rule gets other members than the old one had.
pub(super) struct RecreatedMembers {
    pub(super) rule: String,
    /// `Members` or `MembersAfterCluster`.
    pub(super) change: Change,
    pub(super) before: Value,
}

/// Rules whose members change alike: one part of the `members` row.
struct MembersPart {
    rules: Vec<String>,
    change: Change,
    before: Value,
    /// What happens, without the rules' names.
    happens: String,
    /// Whether the virtual router reloads for it beyond a recreation it is part of.
    reloads: bool,
    /// The disruption it is part of.
    group: String,
}

impl Diff<'_> {
    pub(super) fn update(&mut self, spec: &CloudstackLoadBalancerSpec, desired: &Desired) {
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
    fn immutable(&mut self, spec: &CloudstackLoadBalancerSpec, desired: &Desired) -> bool {
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

    fn note_spreads(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
        spreads: &Spreads,
    ) {
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
        self.note_members(desired, spreads);
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

    /// The members of the load balancer as one row, whatever rules they change on: kept rules
    /// get them assigned or removed, recreated rules get them with their new rule. The row has
    /// the highest class of its parts and their overlapping downtime, in the kept rules' group
    /// (a disruption of its own) or else the first recreated rule's (whose recreation's
    /// downtime covers it), so the load balancer's downtime is what separate rows gave.
    fn note_members(&mut self, desired: &Desired, spreads: &Spreads) {
        let mut parts: Vec<MembersPart> = vec![];
        if let Some(first) = spreads.recreated_members.first() {
            let rules: Vec<String> = spreads
                .recreated_members
                .iter()
                .map(|r| r.rule.clone())
                .collect();
            let when = if rules.len() == 1 {
                "when the rule is recreated"
            } else {
                "when each rule is recreated"
            };
            let mut before = Spread::default();
            for r in &spreads.recreated_members {
                before.add(&r.rule, r.before.clone());
            }
            parts.push(MembersPart {
                rules,
                change: first.change,
                before: before.before(),
                happens: format!("set anew {when} ({})", rule(first.change).what),
                reloads: false,
                group: format!("LB rule {}", first.rule),
            });
        }
        if !spreads.member_rules.is_empty() {
            parts.push(MembersPart {
                rules: spreads.member_rules.clone(),
                change: Change::Members,
                before: json!(spreads.current),
                happens: format!(
                    "{} (added: {}; removed: {})",
                    rule(Change::Members).happens,
                    list_or_none(&spreads.added),
                    list_or_none(&spreads.removed)
                ),
                reloads: true,
                group: rules_object(&spreads.member_rules),
            });
        }
        if !spreads.cluster_rules.is_empty() {
            parts.push(MembersPart {
                rules: spreads.cluster_rules.clone(),
                change: Change::MembersAfterCluster,
                before: json!(spreads.current),
                happens: rule(Change::MembersAfterCluster).happens.to_string(),
                reloads: true,
                group: rules_object(&spreads.cluster_rules),
            });
        }
        let Some(last) = parts.last() else {
            return;
        };
        // The kept rules' group if any, else the first recreated rule's.
        let group = last.group.clone();
        let mut all: Vec<String> = parts.iter().flat_map(|p| p.rules.clone()).collect();
        all.sort();
        let mut before = Spread::default();
        for part in &parts {
            before.add("", part.before.clone());
        }
        let mut reason = match parts.as_slice() {
            [one] => format!("{}: {}", rules_object(&all), one.happens),
            many => format!(
                "{}: {}",
                rules_object(&all),
                many.iter()
                    .map(|p| format!("for {}, {}", p.rules.join(", "), p.happens))
                    .collect::<Vec<_>>()
                    .join(" — ")
            ),
        };
        if parts.iter().any(|p| p.reloads) {
            reason.push_str(&self.router_note);
        }
        let after = match &desired.members {
            Members::Vms(vms) => json!(names(vms)),
            Members::AfterCluster {
                address, workers, ..
            } => unknown(&format!(
                "the {workers} workers of {address}, known once it is applied"
            )),
        };
        let rows = parts.iter().map(|p| rule(p.change));
        self.attributes.push(AttributeChange {
            path: "members".to_string(),
            before: before.before(),
            after,
            impact: rows.clone().map(|r| r.impact).max().unwrap_or_default(),
            reason,
            downtime: rows.fold(Downtime::ZERO, |d, r| d.alongside(r.downtime)),
            group,
            effects: Vec::new(),
        });
    }

    /// Ports whose rule is gone or new: a rule with the same protocol and node port on another
    /// public port is that port moved (created first, then the old one deleted).
    fn moved_added_removed(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
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

fn list_or_none(names: &BTreeSet<String>) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// "LB rule a" or "LB rules a, b".
fn rules_object(rules: &[String]) -> String {
    match rules {
        [one] => format!("LB rule {one}"),
        many => format!("LB rules {}", many.join(", ")),
    }
}
