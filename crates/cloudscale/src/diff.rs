//! Desired vs live cloudscale objects → the changes (each classified by a row of the impact
//! table) and the operations apply will run. Pure: no IO. Mirrors the CCM's reconcile order:
//! load balancer, pools, then members, listeners and monitors of kept pools, floating IPs last.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{json, Value};

use super::impact::{rule, Change};
use super::objects::{LbObjects, ListenerObject, MonitorObject, PoolSet, OWNER_TAG};
use super::ops::Op;
use super::order::order_operations;
use crate::spec::{CloudscaleLoadBalancerSpec, VipAddress};
use skyplan_core::model::Address;
use skyplan_core::plan::{Action, AttributeChange, Record, ResourceChange};

pub const PROVIDER: &str = "cloudscale";

/// Everything the diff of one load balancer looks at.
pub struct DiffInput<'a> {
    pub address: &'a Address,
    /// The config's spec and the objects derived from it; `None` when removed from the config.
    pub desired: Option<(&'a CloudscaleLoadBalancerSpec, &'a LbObjects)>,
    /// The spec recorded at the last apply, for what the cloud does not show (status-only
    /// fields, floating IPs that cannot be unassigned).
    pub prior: Option<&'a CloudscaleLoadBalancerSpec>,
    pub live: Option<&'a LbObjects>,
    pub replace: bool,
    pub allow_delete: bool,
    /// Whether a live load balancer without skyplan's `skyplan.address` tag (one imported) is
    /// to be tagged: a plan in direct mode. Not drift (the tag is skyplan's bookkeeping, which
    /// an import leaves to the next apply), not the CCM's load balancer (found by its Service,
    /// never written by skyplan), not a generated config's check (the tag is the import's).
    pub tag: bool,
}

pub fn diff(input: &DiffInput) -> ResourceChange {
    diff_classified(input).0
}

/// The change with the table row of each of its attributes (in the same order) and the
/// operations before ordering: controller mode re-reads each row as what the CCM does.
pub fn diff_classified(input: &DiffInput) -> (ResourceChange, Vec<Change>, Vec<Op>) {
    let mut diff = Diff::default();
    let action = match (input.desired, input.live) {
        (None, None) => Action::NoOp,
        (Some((_, desired)), None) => {
            diff.note(
                Change::LbCreated,
                "",
                Value::Null,
                json!(desired.lb.name),
                "load balancer",
                "",
            );
            diff.create_all(desired);
            Action::Create
        }
        (None, Some(live)) => {
            diff.removed(live, input.allow_delete);
            Action::Delete
        }
        (Some((_, desired)), Some(live)) if input.replace => {
            diff.note(
                Change::LbReplaced,
                "",
                json!(live.lb.name),
                json!(desired.lb.name),
                "load balancer",
                "",
            );
            diff.ops.push(Op::DeleteLb {
                name: live.lb.name.clone(),
            });
            diff.create_all(desired);
            Action::Replace
        }
        (Some((spec, desired)), Some(live)) => {
            if input.tag {
                diff.tag(desired, live);
            }
            diff.update(spec, desired, live, input.prior);
            if diff.attributes.is_empty() {
                Action::NoOp
            } else {
                Action::Update
            }
        }
    };
    let change = ResourceChange {
        address: input.address.clone(),
        provider: PROVIDER.to_string(),
        action,
        requested: matches!(action, Action::Replace)
            || (action == Action::Delete && input.allow_delete),
        moved_from: None,
        placement: None,
        attributes: diff.attributes,
        operations: order_operations(input.address, diff.ops.clone())
            .into_iter()
            .map(crate::ops::planned)
            .collect(),
        record: input.desired.map(|(spec, _)| Record::of(spec)),
    };
    (change, diff.changes, diff.ops)
}

#[derive(Default)]
struct Diff {
    attributes: Vec<AttributeChange>,
    /// The table row of each attribute, in the same order.
    changes: Vec<Change>,
    ops: Vec<Op>,
    /// Set while noting in-place differences of a pool that is recreated anyway: they are
    /// still shown, but happen through (and within the downtime of) that recreation.
    within: Option<String>,
}

fn to_value(value: impl Serialize) -> Value {
    serde_json::to_value(value).expect("plain data serializes")
}

/// The name a port goes by in attribute paths, from its pool name (`tcp/http` → `http`) or,
/// for an unnamed port, its listener's port number.
pub(crate) fn port_key(set: &PoolSet) -> String {
    match set.pool.name.split_once('/') {
        Some((_, name)) => name.to_string(),
        None => set
            .listener
            .as_ref()
            .map(|l| l.protocol_port.to_string())
            .unwrap_or_else(|| set.pool.name.clone()),
    }
}

impl Diff {
    fn note(
        &mut self,
        change: Change,
        path: &str,
        before: Value,
        after: Value,
        object: &str,
        detail: &str,
    ) {
        let rule = rule(change);
        let mut reason = match &self.within {
            Some(pool) => format!(
                "{object}: set anew when {pool} is recreated ({})",
                rule.what
            ),
            None => format!("{object}: {}", rule.happens),
        };
        if !detail.is_empty() {
            reason = format!("{reason} ({detail})");
        }
        self.changes.push(change);
        self.attributes.push(AttributeChange {
            path: path.to_string(),
            before,
            after,
            impact: rule.impact,
            reason,
            downtime: rule.downtime,
            group: self.within.clone().unwrap_or_else(|| object.to_string()),
            effects: Vec::new(),
        });
    }

    /// In-place differences of a recreated pool's listener and monitor: shown so the operator
    /// sees every change, with no operation of their own.
    fn carried_along(&mut self, old: &PoolSet, new: &PoolSet, key: &str) {
        self.within = Some(format!("pool {}", old.pool.name));
        if let (Some(have), Some(want)) = (&old.listener, &new.listener) {
            self.listener_in_place(have, want, key, &format!("listener {}", want.name));
        }
        if let (Some(have), Some(want)) = (&old.monitor, &new.monitor) {
            let object = format!("health monitor of pool {}", new.pool.name);
            self.monitor_in_place(have, want, &object);
        }
        self.within = None;
    }

    fn create_all(&mut self, desired: &LbObjects) {
        self.ops.push(Op::CreateLb {
            lb: desired.lb.clone(),
        });
        for set in desired.pools.values() {
            self.create_set(set);
        }
        for network in &desired.floating_ips {
            self.ops.push(Op::AssignFloatingIp {
                network: network.clone(),
            });
        }
    }

    fn removed(&mut self, live: &LbObjects, allow_delete: bool) {
        let change = if allow_delete {
            Change::LbDeleted
        } else {
            Change::LbRemoved
        };
        self.note(
            change,
            "",
            json!(live.lb.name),
            Value::Null,
            "load balancer",
            "",
        );
        if allow_delete {
            self.ops.push(Op::DeleteLb {
                name: live.lb.name.clone(),
            });
        }
    }

    fn update(
        &mut self,
        spec: &CloudscaleLoadBalancerSpec,
        desired: &LbObjects,
        live: &LbObjects,
        prior: Option<&CloudscaleLoadBalancerSpec>,
    ) {
        self.immutable(desired, live);
        if desired.lb.name != live.lb.name {
            self.note(
                Change::LbRenamed,
                "name",
                json!(live.lb.name),
                json!(desired.lb.name),
                "load balancer",
                "",
            );
            self.ops.push(Op::RenameLb {
                name: desired.lb.name.clone(),
            });
        }
        self.pools(desired, live, spec, prior);
        self.floating_ips(desired, live, prior);
        if let Some(prior) = prior {
            self.status_only(spec, prior);
        }
    }

    /// A load balancer without the `skyplan.address` tag gets it, beside the tags it has.
    /// Only a missing tag: one naming another address is the tag of a move (`state mv`,
    /// `[[moved]]`), left as it is, since the state's IDs find the load balancer.
    fn tag(&mut self, desired: &LbObjects, live: &LbObjects) {
        let Some(owner) = desired.lb.tags.get(OWNER_TAG) else {
            return;
        };
        if live.lb.tags.get(OWNER_TAG).is_some() {
            return;
        }
        self.note(
            Change::LbTagged,
            &format!("tags.{OWNER_TAG}"),
            Value::Null,
            json!(owner),
            "load balancer",
            "",
        );
        let mut tags = live.lb.tags.clone();
        tags.insert(OWNER_TAG.to_string(), owner.clone());
        self.ops.push(Op::TagLb { tags });
    }

    /// Flavor, zone and VIP addresses cannot change: shown, never turned into operations.
    fn immutable(&mut self, desired: &LbObjects, live: &LbObjects) {
        let lb = "load balancer";
        if desired.lb.flavor != live.lb.flavor {
            self.note(
                Change::LbFlavor,
                "flavor",
                json!(live.lb.flavor),
                json!(desired.lb.flavor),
                lb,
                "use --replace to destroy and create it",
            );
        }
        if desired.lb.zone != live.lb.zone {
            self.note(
                Change::LbZone,
                "zone",
                json!(live.lb.zone),
                json!(desired.lb.zone),
                lb,
                "use --replace to destroy and create it",
            );
        }
        if !vip_addresses_match(&desired.lb.vip_addresses, &live.lb.vip_addresses) {
            self.note(
                Change::LbVipAddresses,
                "vip-addresses",
                to_value(&live.lb.vip_addresses),
                to_value(&desired.lb.vip_addresses),
                lb,
                "use --replace to destroy and create it",
            );
        }
    }

    fn pools(
        &mut self,
        desired: &LbObjects,
        live: &LbObjects,
        spec: &CloudscaleLoadBalancerSpec,
        prior: Option<&CloudscaleLoadBalancerSpec>,
    ) {
        let mut created: Vec<&PoolSet> = desired
            .pools
            .iter()
            .filter(|(n, _)| !live.pools.contains_key(*n))
            .map(|(_, s)| s)
            .collect();
        let removed: Vec<&PoolSet> = live
            .pools
            .iter()
            .filter(|(n, _)| !desired.pools.contains_key(*n))
            .map(|(_, s)| s)
            .collect();
        for old in removed {
            // A pool whose replacement serves the same port number is that port renamed (or
            // switched between TCP and UDP), not a port removed and another added.
            let listening = old.listener.as_ref().map(|l| l.protocol_port);
            let partner = created.iter().position(|new| {
                listening.is_some() && new.listener.as_ref().map(|l| l.protocol_port) == listening
            });
            match partner {
                Some(index) => {
                    let new = created.remove(index);
                    self.pool_renamed(old, new);
                }
                None => {
                    let object = format!("pool {}", old.pool.name);
                    self.note(
                        Change::PortRemoved,
                        &format!("ports.{}", port_key(old)),
                        json!(old.pool.name),
                        Value::Null,
                        &object,
                        "",
                    );
                    self.delete_set(old);
                }
            }
        }
        // Kept pools first: a listener they give up (a port renumbered) frees its port before
        // a new pool's listener may take it.
        for (name, new) in &desired.pools {
            if let Some(old) = live.pools.get(name) {
                self.pool_kept(old, new, spec, prior);
            }
        }
        for new in created {
            let object = format!("pool {}", new.pool.name);
            self.note(
                Change::PortAdded,
                &format!("ports.{}", port_key(new)),
                Value::Null,
                json!(new.pool.name),
                &object,
                "",
            );
            self.create_set(new);
        }
    }

    fn pool_renamed(&mut self, old: &PoolSet, new: &PoolSet) {
        let protocol = |set: &PoolSet| {
            set.pool
                .name
                .split('/')
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let object = format!("pool {}", old.pool.name);
        let detail = format!("pool {} replaces it", new.pool.name);
        if protocol(old) != protocol(new) {
            self.note(
                Change::PortProtocol,
                &format!("ports.{}.protocol", port_key(new)),
                json!(protocol(old)),
                json!(protocol(new)),
                &object,
                &detail,
            );
        } else {
            let name = |set: &PoolSet| {
                set.pool
                    .name
                    .split_once('/')
                    .map(|(_, n)| n.to_string())
                    .unwrap_or_default()
            };
            self.note(
                Change::PortRenamed,
                &format!("ports.{}.name", port_key(new)),
                json!(name(old)),
                json!(name(new)),
                &object,
                &detail,
            );
        }
        self.carried_along(old, new, &port_key(new));
        self.delete_set(old);
        self.create_set(new);
    }

    fn pool_kept(
        &mut self,
        old: &PoolSet,
        new: &PoolSet,
        spec: &CloudscaleLoadBalancerSpec,
        prior: Option<&CloudscaleLoadBalancerSpec>,
    ) {
        let key = port_key(new);
        let object = format!("pool {}", new.pool.name);
        let mut recreate = false;
        if old.pool.algorithm != new.pool.algorithm {
            self.note(
                Change::PoolAlgorithm,
                &format!("ports.{key}.algorithm"),
                json!(old.pool.algorithm),
                json!(new.pool.algorithm),
                &object,
                "",
            );
            recreate = true;
        }
        if old.pool.protocol != new.pool.protocol {
            self.note(
                Change::PoolProtocol,
                &format!("ports.{key}.pool-protocol"),
                json!(old.pool.protocol),
                json!(new.pool.protocol),
                &object,
                "",
            );
            recreate = true;
        }
        if recreate {
            self.carried_along(old, new, &key);
            self.delete_set(old);
            self.create_set(new);
            return;
        }
        self.members(old, new, &key, spec, prior);
        self.listener(old, new, &key);
        self.monitor(old, new, &key);
    }

    fn members(
        &mut self,
        old: &PoolSet,
        new: &PoolSet,
        key: &str,
        spec: &CloudscaleLoadBalancerSpec,
        prior: Option<&CloudscaleLoadBalancerSpec>,
    ) {
        if same_members(old, new) {
            return;
        }
        let stale: Vec<&String> = old
            .members
            .iter()
            .filter(|(name, m)| new.members.get(*name).is_none_or(|n| !same_member(m, n)))
            .map(|(n, _)| n)
            .collect();
        let fresh: Vec<&String> = new
            .members
            .iter()
            .filter(|(name, m)| old.members.get(*name).is_none_or(|o| !same_member(o, m)))
            .map(|(n, _)| n)
            .collect();
        if stale.is_empty() && fresh.is_empty() {
            return;
        }
        let object = members_group(&new.pool.name);
        let ports = |set: &PoolSet, pick: fn(&super::objects::MemberObject) -> u16| {
            set.members.values().map(pick).collect::<BTreeSet<_>>()
        };
        let (old_ports, new_ports) = (
            ports(old, |m| m.protocol_port),
            ports(new, |m| m.protocol_port),
        );
        let (old_monitor, new_monitor) = (
            ports(old, |m| m.monitor_port),
            ports(new, |m| m.monitor_port),
        );
        let names = |set: &PoolSet| json!(set.members.keys().collect::<Vec<_>>());
        if !old_ports.is_empty() && !new_ports.is_empty() && old_ports != new_ports {
            self.note(
                Change::NodePort,
                &format!("ports.{key}.node-port"),
                to_value(&old_ports),
                to_value(&new_ports),
                &object,
                "",
            );
        } else if !old_monitor.is_empty() && !new_monitor.is_empty() && old_monitor != new_monitor {
            self.note(
                Change::TrafficPolicy,
                &format!("ports.{key}.monitor-port"),
                to_value(&old_monitor),
                to_value(&new_monitor),
                &object,
                &format!("traffic-policy is {}", spec.traffic_policy),
            );
        } else if prior.is_some_and(|p| p.allowed_subnets != spec.allowed_subnets) {
            self.note(
                Change::AllowedSubnets,
                &format!("ports.{key}.members"),
                names(old),
                names(new),
                &object,
                "allowed-subnets changed",
            );
        } else {
            self.note(
                Change::MembersChanged,
                &format!("ports.{key}.members"),
                names(old),
                names(new),
                &object,
                "",
            );
        }
        self.member_ops(new, &stale, &fresh);
    }

    /// Make before break: new members first, then those changed under their own name (each
    /// deleted and at once created again: two members cannot share a name), then the old ones
    /// go — so a pool never serves from no member while another could serve (swapped members,
    /// a node port changed). The CCM orders its own way in controller mode (`ccm::order`).
    fn member_ops(&mut self, new: &PoolSet, stale: &[&String], fresh: &[&String]) {
        let pool = &new.pool.name;
        let create = |name: &String| Op::CreateMember {
            pool: pool.clone(),
            member: new.members[name].clone(),
        };
        let delete = |name: &String| Op::DeleteMember {
            pool: pool.clone(),
            member: name.clone(),
        };
        let (changed, added): (Vec<&String>, Vec<&String>) =
            fresh.iter().partition(|name| stale.contains(name));
        self.ops.extend(added.into_iter().map(create));
        for name in &changed {
            self.ops.extend([delete(name), create(name)]);
        }
        let removed = stale.iter().filter(|name| !changed.contains(name));
        self.ops.extend(removed.copied().map(delete));
    }

    fn listener(&mut self, old: &PoolSet, new: &PoolSet, key: &str) {
        let pool = &new.pool.name;
        let Some(want) = &new.listener else { return };
        let Some(have) = &old.listener else {
            self.note(
                Change::ListenerCreated,
                &format!("ports.{key}.port"),
                Value::Null,
                json!(want.protocol_port),
                &format!("listener {}", want.name),
                "",
            );
            self.ops.push(Op::CreateListener {
                pool: pool.clone(),
                listener: want.clone(),
            });
            return;
        };
        let object = format!("listener {}", have.name);
        let recreate = if have.protocol != want.protocol {
            self.note(
                Change::ListenerProtocol,
                &format!("ports.{key}.listener-protocol"),
                json!(have.protocol),
                json!(want.protocol),
                &object,
                "",
            );
            true
        } else if have.protocol_port != want.protocol_port {
            self.note(
                Change::ListenerPort,
                &format!("ports.{key}.port"),
                json!(have.protocol_port),
                json!(want.protocol_port),
                &object,
                &format!("listener {} replaces it", want.name),
            );
            true
        } else {
            false
        };
        if recreate {
            self.ops.push(Op::DeleteListener {
                pool: pool.clone(),
                listener: have.name.clone(),
            });
            self.ops.push(Op::CreateListener {
                pool: pool.clone(),
                listener: want.clone(),
            });
        } else if self.listener_in_place(have, want, key, &object) {
            self.ops.push(Op::UpdateListener {
                pool: pool.clone(),
                listener: want.clone(),
            });
        }
    }

    fn listener_in_place(
        &mut self,
        have: &ListenerObject,
        want: &ListenerObject,
        key: &str,
        object: &str,
    ) -> bool {
        let before = self.attributes.len();
        // A recreated pool's listener may be renamed with it; that is no change of its own.
        if have.name != want.name && self.within.is_none() {
            self.note(
                Change::ListenerRenamed,
                &format!("ports.{key}.listener-name"),
                json!(have.name),
                json!(want.name),
                object,
                "",
            );
        }
        if have.allowed_cidrs != want.allowed_cidrs {
            self.note(
                Change::ListenerAllowedCidrs,
                "allowed-cidrs",
                json!(have.allowed_cidrs),
                json!(want.allowed_cidrs),
                object,
                "",
            );
        }
        let timeouts = [
            (
                "client-data-ms",
                have.timeout_client_data_ms,
                want.timeout_client_data_ms,
            ),
            (
                "member-connect-ms",
                have.timeout_member_connect_ms,
                want.timeout_member_connect_ms,
            ),
            (
                "member-data-ms",
                have.timeout_member_data_ms,
                want.timeout_member_data_ms,
            ),
        ];
        for (name, old, new) in timeouts {
            if old != new {
                self.note(
                    Change::ListenerTimeouts,
                    &format!("timeouts.{name}"),
                    json!(old),
                    json!(new),
                    object,
                    "",
                );
            }
        }
        self.attributes.len() > before
    }

    fn monitor(&mut self, old: &PoolSet, new: &PoolSet, key: &str) {
        let pool = &new.pool.name;
        let Some(want) = &new.monitor else { return };
        let object = format!("health monitor of pool {pool}");
        let Some(have) = &old.monitor else {
            self.note(
                Change::MonitorCreated,
                &format!("ports.{key}.health-monitor"),
                Value::Null,
                json!(want.kind),
                &object,
                "",
            );
            self.ops.push(Op::CreateMonitor {
                pool: pool.clone(),
                monitor: want.clone(),
            });
            return;
        };
        let version = |m: &MonitorObject| m.http.as_ref().map(|h| h.version.clone());
        if have.kind != want.kind || version(have) != version(want) {
            let livez = want.http.as_ref().is_some_and(|h| h.url_path == "/livez");
            let change = if livez || have.http.as_ref().is_some_and(|h| h.url_path == "/livez") {
                Change::TrafficPolicy
            } else {
                Change::MonitorRecreated
            };
            let (path, before, after) = if have.kind != want.kind {
                ("type", json!(have.kind), json!(want.kind))
            } else {
                ("http.version", json!(version(have)), json!(version(want)))
            };
            self.note(
                change,
                &format!("health-monitor.{path}"),
                before,
                after,
                &object,
                "",
            );
            self.ops.push(Op::DeleteMonitor { pool: pool.clone() });
            self.ops.push(Op::CreateMonitor {
                pool: pool.clone(),
                monitor: want.clone(),
            });
        } else if self.monitor_in_place(have, want, &object) {
            self.ops.push(Op::UpdateMonitor {
                pool: pool.clone(),
                monitor: want.clone(),
            });
        }
    }

    fn monitor_in_place(
        &mut self,
        have: &MonitorObject,
        want: &MonitorObject,
        object: &str,
    ) -> bool {
        let before = self.attributes.len();
        let numbers = [
            ("delay-s", have.delay_s, want.delay_s),
            ("timeout-s", have.timeout_s, want.timeout_s),
            ("up-threshold", have.up_threshold, want.up_threshold),
            ("down-threshold", have.down_threshold, want.down_threshold),
        ];
        for (name, old, new) in numbers {
            if old != new {
                self.note(
                    Change::MonitorUpdated,
                    &format!("health-monitor.{name}"),
                    json!(old),
                    json!(new),
                    object,
                    "",
                );
            }
        }
        if let (Some(old), Some(new)) = (&have.http, &want.http) {
            let fields = [
                ("method", json!(old.method), json!(new.method)),
                ("url-path", json!(old.url_path), json!(new.url_path)),
                (
                    "expected-codes",
                    json!(old.expected_codes),
                    json!(new.expected_codes),
                ),
                ("host", json!(old.host), json!(new.host)),
            ];
            for (name, old, new) in fields {
                if old != new {
                    self.note(
                        Change::MonitorUpdated,
                        &format!("health-monitor.http.{name}"),
                        old,
                        new,
                        object,
                        "",
                    );
                }
            }
        }
        self.attributes.len() > before
    }

    fn floating_ips(
        &mut self,
        desired: &LbObjects,
        live: &LbObjects,
        prior: Option<&CloudscaleLoadBalancerSpec>,
    ) {
        for network in desired.floating_ips.difference(&live.floating_ips) {
            let object = format!("floating IP {network}");
            self.note(
                Change::FloatingIpAdded,
                "floating-ips",
                Value::Null,
                json!(network),
                &object,
                "",
            );
            self.ops.push(Op::AssignFloatingIp {
                network: network.clone(),
            });
        }
        // Only report a removal the user made: an IP that was configured at the last apply.
        // Other IPs on the load balancer were never skyplan's to manage.
        let Some(prior) = prior else { return };
        for network in &prior.floating_ips {
            if !desired.floating_ips.contains(network) && live.floating_ips.contains(network) {
                let object = format!("floating IP {network}");
                self.note(
                    Change::FloatingIpRemoved,
                    "floating-ips",
                    json!(network),
                    Value::Null,
                    &object,
                    "",
                );
            }
        }
    }

    fn status_only(
        &mut self,
        spec: &CloudscaleLoadBalancerSpec,
        prior: &CloudscaleLoadBalancerSpec,
    ) {
        let object = "Service status";
        if spec.force_hostname != prior.force_hostname {
            self.note(
                Change::StatusOnly,
                "force-hostname",
                json!(prior.force_hostname),
                json!(spec.force_hostname),
                object,
                "",
            );
        }
        if spec.ip_mode != prior.ip_mode {
            self.note(
                Change::StatusOnly,
                "ip-mode",
                json!(prior.ip_mode),
                json!(spec.ip_mode),
                object,
                "",
            );
        }
    }

    /// Delete a pool with everything under it, children first.
    fn delete_set(&mut self, set: &PoolSet) {
        let pool = set.pool.name.clone();
        if let Some(listener) = &set.listener {
            self.ops.push(Op::DeleteListener {
                pool: pool.clone(),
                listener: listener.name.clone(),
            });
        }
        if set.monitor.is_some() {
            self.ops.push(Op::DeleteMonitor { pool: pool.clone() });
        }
        for member in set.members.keys() {
            self.ops.push(Op::DeleteMember {
                pool: pool.clone(),
                member: member.clone(),
            });
        }
        self.ops.push(Op::DeletePool { pool });
    }

    /// Create a pool with everything under it, parent first.
    fn create_set(&mut self, set: &PoolSet) {
        let pool = set.pool.name.clone();
        self.ops.push(Op::CreatePool {
            pool: set.pool.clone(),
        });
        for member in set.members.values() {
            self.ops.push(Op::CreateMember {
                pool: pool.clone(),
                member: member.clone(),
            });
        }
        if let Some(monitor) = &set.monitor {
            self.ops.push(Op::CreateMonitor {
                pool: pool.clone(),
                monitor: monitor.clone(),
            });
        }
        if let Some(listener) = &set.listener {
            self.ops.push(Op::CreateListener {
                pool,
                listener: listener.clone(),
            });
        }
    }
}

/// Members are matched on everything the CCM compares; any difference means delete + create.
/// The same members under the same names: the common case, told in one walk over the two
/// name-sorted maps instead of a lookup of each name in the other (a tenth of a 5,000
/// load-balancer comparison).
/// The object (and disruption group) a pool's member changes are said under.
pub fn members_group(pool: &str) -> String {
    format!("members of pool {pool}")
}

fn same_members(old: &PoolSet, new: &PoolSet) -> bool {
    old.members.len() == new.members.len()
        && old
            .members
            .iter()
            .zip(&new.members)
            .all(|((a, m), (b, n))| a == b && same_member(m, n))
}

fn same_member(a: &super::objects::MemberObject, b: &super::objects::MemberObject) -> bool {
    (
        a.enabled,
        a.protocol_port,
        a.monitor_port,
        &a.address,
        &a.subnet,
    ) == (
        b.enabled,
        b.protocol_port,
        b.monitor_port,
        &b.address,
        &b.subnet,
    )
}

/// The CCM's validateLbChanges: an empty desired list accepts whatever the LB has; otherwise
/// each entry must match in subnet, and in address where one is given.
fn vip_addresses_match(desired: &[VipAddress], live: &[VipAddress]) -> bool {
    desired.is_empty()
        || (desired.len() == live.len()
            && desired.iter().zip(live).all(|(d, l)| {
                d.subnet == l.subnet
                    && d.address
                        .as_ref()
                        .is_none_or(|a| Some(a) == l.address.as_ref())
            }))
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "diff_props.rs"]
pub(crate) mod props;
