//! Property tests of the planner's core invariants, over random pairs of valid specs:
//! a plan applied the way the cloudscale API applies its operations leaves nothing to plan
//! again, and a plan never shows a lower class than what its operations do to live traffic.

use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, subsequence};

use super::{diff, DiffInput};
use crate::desired::desired_objects;
use crate::objects::{
    HttpObject, LbObject, LbObjects, ListenerObject, MemberObject, MonitorObject, PoolObject,
    PoolSet, SubnetObject,
};
use crate::ops::Op;
use crate::spec::{
    Algorithm, CloudscaleLoadBalancerSpec, HealthMonitorSpec, HttpCheck, HttpVersion, IpMode,
    ListenerProtocol, MonitorType, PoolProtocol, PortProtocol, PortSpec, Timeouts, TrafficPolicy,
    VipAddress,
};
use skyplan_core::model::{Address, Impact, ResourceKind};
use skyplan_core::plan::ResourceChange;

pub(crate) const SUBNET: &str = "6d0d7d4c-0000-4000-8000-000000000001";
/// A subnet the account does not have: allowing only it filters every member out.
const OTHER_SUBNET: &str = "6d0d7d4c-0000-4000-8000-000000000002";
const MEMBERS: &[&str] = &["10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14"];
const FLOATING_IPS: &[&str] = &["5.102.150.1/32", "5.102.150.2/32", "5.102.150.3/32"];
const CIDRS: &[&str] = &["0.0.0.0/0", "192.0.2.0/24", "198.51.100.7/32"];

pub(crate) fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "web")
}

pub(crate) fn subnets() -> Vec<SubnetObject> {
    vec![SubnetObject {
        uuid: SUBNET.into(),
        cidr: "10.0.0.0/24".into(),
    }]
}

fn texts(values: Vec<&str>) -> Vec<String> {
    values.into_iter().map(String::from).collect()
}

// ---- Strategies: specs the config loader can produce -------------------------------------

fn http_check() -> impl Strategy<Value = HttpCheck> {
    (
        select(&["GET", "HEAD"][..]),
        select(&["/", "/livez", "/healthz"][..]),
        subsequence(&["200", "204", "301"][..], 1..=2),
        select(HttpVersion::ALL),
        option::of(select(&["example.com", "ready.example.com"][..])),
    )
        .prop_map(|(method, url_path, codes, version, host)| HttpCheck {
            method: method.into(),
            url_path: url_path.into(),
            expected_codes: texts(codes),
            version,
            host: host.map(String::from),
        })
}

/// As the config resolves it: HTTP options exactly for http and https monitors.
fn health_monitor() -> impl Strategy<Value = HealthMonitorSpec> {
    let small = |values: &'static [u32]| select(values);
    (
        select(MonitorType::ALL),
        (
            small(&[1, 2]),
            small(&[1, 2]),
            small(&[2, 3]),
            small(&[3, 4]),
        ),
        http_check(),
    )
        .prop_map(|(kind, (delay_s, timeout_s, up, down), http)| {
            let http_kind = matches!(kind, MonitorType::Http | MonitorType::Https);
            HealthMonitorSpec {
                kind,
                delay_s,
                timeout_s,
                up_threshold: up,
                down_threshold: down,
                http: http_kind.then_some(http),
            }
        })
}

fn timeouts() -> impl Strategy<Value = Timeouts> {
    (
        select(&[50_000u32, 30_000][..]),
        select(&[5_000u32, 1_000][..]),
        select(&[50_000u32, 20_000][..]),
    )
        .prop_map(
            |(client_data_ms, member_connect_ms, member_data_ms)| Timeouts {
                client_data_ms,
                member_connect_ms,
                member_data_ms,
            },
        )
}

/// The health-check node port only comes with `Local` (the config refuses it otherwise).
fn traffic_policy() -> impl Strategy<Value = (TrafficPolicy, Option<u16>)> {
    prop_oneof![
        Just((TrafficPolicy::Cluster, None)),
        option::of(select(&[32000u16, 32001][..])).prop_map(|port| (TrafficPolicy::Local, port)),
    ]
}

/// 1-3 ports with distinct names, numbers and node ports; a lone port may be unnamed.
fn ports() -> impl Strategy<Value = Vec<PortSpec>> {
    (1..=3usize)
        .prop_flat_map(|count| {
            let names = if count == 1 {
                select(&["", "http", "web"][..])
                    .prop_map(|n| vec![n])
                    .boxed()
            } else {
                subsequence(&["http", "web", "dns"][..], count)
                    .prop_shuffle()
                    .boxed()
            };
            (
                names,
                subsequence(&[53u16, 80, 443, 8080][..], count).prop_shuffle(),
                subsequence(&[30053u16, 30080, 30443, 30808][..], count).prop_shuffle(),
                proptest::collection::vec(select(PortProtocol::ALL), count),
            )
        })
        .prop_map(|(names, numbers, node_ports, protocols)| {
            (0..names.len())
                .map(|i| PortSpec {
                    name: names[i].into(),
                    port: numbers[i],
                    protocol: protocols[i],
                    node_port: node_ports[i],
                })
                .collect()
        })
}

/// Everything but flavor, zone and VIP addresses, which `placed` sets.
pub(crate) fn spec() -> impl Strategy<Value = CloudscaleLoadBalancerSpec> {
    let lb = (
        select(&["web-lb", "web-lb-2"][..]),
        subsequence(FLOATING_IPS, 0..=2),
        option::of(select(&["web.example.com"][..])),
        select(IpMode::ALL),
    );
    let pools = (
        select(Algorithm::ALL),
        select(PoolProtocol::ALL),
        select(ListenerProtocol::ALL),
        subsequence(CIDRS, 0..=2),
        subsequence(&[SUBNET, OTHER_SUBNET][..], 0..=2),
        timeouts(),
    );
    let backends = (
        health_monitor(),
        traffic_policy(),
        subsequence(MEMBERS, 0..=3),
        ports(),
    );
    (lb, pools, backends).prop_map(|(lb, pools, backends)| {
        let (name, floating_ips, force_hostname, ip_mode) = lb;
        let (algorithm, pool_protocol, listener_protocol, allowed_cidrs, allowed_subnets, timeouts) =
            pools;
        let (health_monitor, (traffic_policy, health_check_node_port), members, ports) = backends;
        CloudscaleLoadBalancerSpec {
            floating_ips: texts(floating_ips),
            force_hostname: force_hostname.map(String::from),
            ip_mode,
            algorithm,
            pool_protocol,
            listener_protocol,
            allowed_cidrs: texts(allowed_cidrs),
            allowed_subnets: texts(allowed_subnets),
            timeouts,
            health_monitor,
            traffic_policy,
            health_check_node_port,
            members: texts(members),
            ports,
            ..CloudscaleLoadBalancerSpec::with_defaults(name, "lpg1")
        }
    })
}

/// Flavor, zone and VIP addresses: the fields that can only change by replacement.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    pub(crate) flavor: &'static str,
    pub(crate) zone: &'static str,
    pub(crate) vip_addresses: Vec<VipAddress>,
}

pub(crate) fn placement() -> impl Strategy<Value = Placement> {
    let vip = |address: Option<&str>| VipAddress {
        subnet: SUBNET.into(),
        address: address.map(String::from),
    };
    (
        select(&["lb-standard", "lb-flex-4-2"][..]),
        select(&["lpg1", "rma1"][..]),
        select(vec![vec![], vec![vip(None)], vec![vip(Some("10.0.0.200"))]]),
    )
        .prop_map(|(flavor, zone, vip_addresses)| Placement {
            flavor,
            zone,
            vip_addresses,
        })
}

pub(crate) fn placed(
    mut spec: CloudscaleLoadBalancerSpec,
    placement: &Placement,
) -> CloudscaleLoadBalancerSpec {
    spec.flavor = placement.flavor.into();
    spec.zone = placement.zone.into();
    spec.vip_addresses = placement.vip_addresses.clone();
    spec
}

/// How many edits `edit` knows.
const EDITS: usize = 25;

/// Edits one field (or one field of the first port or of the monitor) of `spec`: taken from
/// `other` where that keeps the spec valid, otherwise set to a value no strategy produces.
/// A few such edits exercise single changes and their interplay with an unchanged rest.
fn edit(spec: &mut CloudscaleLoadBalancerSpec, other: &CloudscaleLoadBalancerSpec, edit: usize) {
    let first = &mut spec.ports[0];
    match edit {
        0 => spec.name = other.name.clone(),
        1 => spec.floating_ips = other.floating_ips.clone(),
        2 => spec.algorithm = other.algorithm,
        3 => spec.pool_protocol = other.pool_protocol,
        4 => spec.listener_protocol = other.listener_protocol,
        5 => spec.allowed_cidrs = other.allowed_cidrs.clone(),
        6 => spec.allowed_subnets = other.allowed_subnets.clone(),
        7 => spec.timeouts = other.timeouts,
        8 => spec.health_monitor = other.health_monitor.clone(),
        9 => {
            spec.traffic_policy = other.traffic_policy;
            spec.health_check_node_port = other.health_check_node_port;
        }
        10 => {
            spec.force_hostname = other.force_hostname.clone();
            spec.ip_mode = other.ip_mode;
        }
        11 => spec.members = other.members.clone(),
        12 => spec.ports = other.ports.clone(),
        13 => first.node_port = 30999,
        14 => first.port = 9999,
        15 => first.name = "renamed".into(),
        16 => first.protocol = flipped(first.protocol),
        17 => spec.health_monitor.delay_s += 1,
        18 => add_port(&mut spec.ports),
        19 => remove_port(&mut spec.ports),
        _ => edit_http(spec.health_monitor.http.as_mut(), edit),
    }
}

/// A port beside the others, once; only when all are named, as several ports must be.
fn add_port(ports: &mut Vec<PortSpec>) {
    if ports
        .iter()
        .all(|p| !p.name.is_empty() && p.name != "added")
    {
        ports.push(PortSpec {
            name: "added".into(),
            port: 9998,
            protocol: PortProtocol::Tcp,
            node_port: 30998,
        });
    }
}

/// Drops the last port, unless it is the only one (a load balancer needs one).
fn remove_port(ports: &mut Vec<PortSpec>) {
    if ports.len() > 1 {
        ports.pop();
    }
}

fn flipped(protocol: PortProtocol) -> PortProtocol {
    match protocol {
        PortProtocol::Tcp => PortProtocol::Udp,
        PortProtocol::Udp => PortProtocol::Tcp,
    }
}

/// Edits one HTTP option of an http/https monitor (others have none to edit).
fn edit_http(http: Option<&mut HttpCheck>, edit: usize) {
    let Some(http) = http else { return };
    match edit {
        20 => http.method = "POST".into(),
        21 => http.url_path = "/edited".into(),
        22 => http.expected_codes = vec!["418".into()],
        23 => {
            http.version = match http.version {
                HttpVersion::V1_0 => HttpVersion::V1_1,
                HttpVersion::V1_1 => HttpVersion::V1_0,
            }
        }
        _ => http.host = http.host.take().xor(Some("edited.example.com".into())),
    }
}

/// A spec and its successor, both on the same placement: either unrelated, or the successor
/// is the spec with one to three edits.
fn spec_pair(
    placement: impl Strategy<Value = Placement>,
) -> impl Strategy<Value = (CloudscaleLoadBalancerSpec, CloudscaleLoadBalancerSpec)> {
    let edits = proptest::collection::vec(0..EDITS, 1..=3);
    (
        placement,
        spec(),
        spec(),
        proptest::option::weighted(0.7, edits),
    )
        .prop_map(|(placement, before, other, edits)| {
            let before = placed(before, &placement);
            let after = match edits {
                Some(edits) => {
                    let mut after = before.clone();
                    edits.into_iter().for_each(|e| edit(&mut after, &other, e));
                    after
                }
                None => placed(other, &placement),
            };
            (before, after)
        })
}

// ---- The interpreter: what the cloudscale API does with each operation ---------------------

/// Applies `ops` in order, as strictly as the API: a missing object or parent, or an object
/// created twice, is an error; so is deleting a pool whose listener still exists (the API
/// would detach the listener and leave it holding its port, where no plan sees it).
pub(crate) fn apply_ops(
    mut live: Option<LbObjects>,
    ops: &[Op],
) -> Result<Option<LbObjects>, String> {
    for op in ops {
        apply_op(&mut live, op).map_err(|error| format!("`{op}`: {error}"))?;
    }
    Ok(live)
}

fn apply_op(live: &mut Option<LbObjects>, op: &Op) -> Result<(), String> {
    match (op, live.as_mut()) {
        (Op::CreateLb { lb }, None) => *live = Some(created_lb(lb)),
        (Op::CreateLb { .. }, Some(_)) => return Err("the load balancer exists".into()),
        (_, None) => return Err("there is no load balancer".into()),
        (Op::DeleteLb { name }, Some(objects)) => {
            same_name(&objects.lb.name, name)?;
            *live = None;
        }
        (Op::RenameLb { name }, Some(objects)) => objects.lb.name = name.clone(),
        (Op::TagLb { tags }, Some(objects)) => objects.lb.tags = tags.clone(),
        (Op::AssignFloatingIp { network }, Some(objects)) => {
            objects.floating_ips.insert(network.clone());
        }
        (Op::CreatePool { pool }, Some(objects)) => create_pool(objects, pool)?,
        (Op::DeletePool { pool }, Some(objects)) => delete_pool(objects, pool)?,
        (_, Some(objects)) => apply_to_pool(objects, op)?,
    }
    Ok(())
}

/// A new load balancer as the API reports it: running, with an address where none was asked.
fn created_lb(lb: &LbObject) -> LbObjects {
    let mut lb = lb.clone();
    lb.uuid = Some("lb-uuid".into());
    lb.status = Some("running".into());
    if lb.vip_addresses.is_empty() {
        lb.vip_addresses.push(VipAddress {
            subnet: "public-subnet-uuid".into(),
            address: None,
        });
    }
    for (n, vip) in lb.vip_addresses.iter_mut().enumerate() {
        vip.address
            .get_or_insert_with(|| format!("10.0.0.{}", 100 + n));
    }
    LbObjects {
        lb,
        pools: Default::default(),
        floating_ips: Default::default(),
    }
}

fn same_name(have: &str, named: &str) -> Result<(), String> {
    if have == named {
        Ok(())
    } else {
        Err(format!("it is named {have}"))
    }
}

fn create_pool(objects: &mut LbObjects, pool: &PoolObject) -> Result<(), String> {
    if objects.pools.contains_key(&pool.name) {
        return Err("a pool of that name exists".into());
    }
    let set = PoolSet {
        pool: with_uuid(pool.clone(), |p| &mut p.uuid),
        members: Default::default(),
        monitor: None,
        listener: None,
    };
    objects.pools.insert(pool.name.clone(), set);
    Ok(())
}

/// The API deletes the pool's members and monitor with it.
fn delete_pool(objects: &mut LbObjects, pool: &str) -> Result<(), String> {
    let set = objects.pools.remove(pool).ok_or("no such pool")?;
    match set.listener {
        Some(listener) => Err(format!("listener {} is left without a pool", listener.name)),
        None => Ok(()),
    }
}

fn apply_to_pool(objects: &mut LbObjects, op: &Op) -> Result<(), String> {
    let busy_ports: Vec<(String, u16)> = objects
        .pools
        .values()
        .filter_map(|set| set.listener.as_ref())
        .map(|l| (l.protocol.clone(), l.protocol_port))
        .collect();
    let pool_of = |pool: &str| format!("no pool {pool}");
    match op {
        Op::CreateMember { pool, member } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            create_member(set, member)
        }
        Op::DeleteMember { pool, member } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            set.members
                .remove(member)
                .map(drop)
                .ok_or("no such member".into())
        }
        Op::CreateMonitor { pool, monitor } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            create_monitor(set, monitor)
        }
        Op::UpdateMonitor { pool, monitor } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            let have = set.monitor.as_mut().ok_or("no monitor")?;
            update_monitor(have, monitor);
            Ok(())
        }
        Op::DeleteMonitor { pool } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            set.monitor.take().map(drop).ok_or("no monitor".into())
        }
        Op::CreateListener { pool, listener } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            let port = (listener.protocol.clone(), listener.protocol_port);
            if busy_ports.contains(&port) {
                return Err("another listener listens on that port".into());
            }
            create_listener(set, listener)
        }
        Op::UpdateListener { pool, listener } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            let have = set.listener.as_mut().ok_or("no listener")?;
            update_listener(have, listener);
            Ok(())
        }
        Op::DeleteListener { pool, listener } => {
            let set = objects.pools.get_mut(pool).ok_or_else(|| pool_of(pool))?;
            let have = set.listener.take().ok_or("no listener")?;
            same_name(&have.name, listener)
        }
        _ => unreachable!("apply_op handles the load balancer's own operations: {op}"),
    }
}

fn with_uuid<T>(mut object: T, uuid: impl Fn(&mut T) -> &mut Option<String>) -> T {
    *uuid(&mut object) = Some("uuid".into());
    object
}

fn create_member(set: &mut PoolSet, member: &MemberObject) -> Result<(), String> {
    if set.members.contains_key(&member.name) {
        return Err("a member of that name exists".into());
    }
    let member = with_uuid(member.clone(), |m| &mut m.uuid);
    set.members.insert(member.name.clone(), member);
    Ok(())
}

/// The API refuses HTTP settings on other monitors and fills in defaults on http/https ones.
fn create_monitor(set: &mut PoolSet, monitor: &MonitorObject) -> Result<(), String> {
    if set.monitor.is_some() {
        return Err("the pool has a health monitor".into());
    }
    let mut monitor = with_uuid(monitor.clone(), |m| &mut m.uuid);
    match (monitor.kind.as_str(), &monitor.http) {
        ("http" | "https", None) => monitor.http = Some(default_http()),
        ("http" | "https", Some(_)) | (_, None) => {}
        (_, Some(_)) => return Err("only http and https monitors have HTTP settings".into()),
    }
    set.monitor = Some(monitor);
    Ok(())
}

fn default_http() -> HttpObject {
    HttpObject {
        expected_codes: vec!["200".into()],
        method: "GET".into(),
        url_path: "/".into(),
        version: "1.1".into(),
        host: None,
    }
}

/// PATCH: only the in-place fields (the numbers, and the HTTP options but the version).
fn update_monitor(have: &mut MonitorObject, want: &MonitorObject) {
    have.delay_s = want.delay_s;
    have.timeout_s = want.timeout_s;
    have.up_threshold = want.up_threshold;
    have.down_threshold = want.down_threshold;
    if let (Some(have), Some(want)) = (have.http.as_mut(), want.http.as_ref()) {
        have.expected_codes = want.expected_codes.clone();
        have.method = want.method.clone();
        have.url_path = want.url_path.clone();
        have.host = want.host.clone();
    }
}

fn create_listener(set: &mut PoolSet, listener: &ListenerObject) -> Result<(), String> {
    if set.listener.is_some() {
        return Err("the pool has a listener".into());
    }
    set.listener = Some(with_uuid(listener.clone(), |l| &mut l.uuid));
    Ok(())
}

/// PATCH: only the in-place fields (name, allowed CIDRs, timeouts).
fn update_listener(have: &mut ListenerObject, want: &ListenerObject) {
    have.name = want.name.clone();
    have.allowed_cidrs = want.allowed_cidrs.clone();
    have.timeout_client_data_ms = want.timeout_client_data_ms;
    have.timeout_member_connect_ms = want.timeout_member_connect_ms;
    have.timeout_member_data_ms = want.timeout_member_data_ms;
}

// ---- Planning ------------------------------------------------------------------------------

fn desired(spec: &CloudscaleLoadBalancerSpec) -> LbObjects {
    desired_objects(&address(), spec, &subnets()).expect("members are in the account's subnet")
}

/// Plans `after` against `live`, with `prior` recorded in the state as the last applied spec.
pub(crate) fn plan(
    after: &CloudscaleLoadBalancerSpec,
    live: Option<&LbObjects>,
    prior: Option<&CloudscaleLoadBalancerSpec>,
    replace: bool,
) -> ResourceChange {
    let desired = desired(after);
    diff(&DiffInput {
        address: &address(),
        desired: Some((after, &desired)),
        prior,
        live,
        replace,
        allow_delete: false,
        tag: true,
    })
}

pub(crate) fn ops(change: &ResourceChange) -> Vec<Op> {
    change.operations.iter().filter_map(Op::of).collect()
}

/// Applies the plan for `after` to `live` and plans again: nothing may be left.
fn assert_converges(
    live: Option<LbObjects>,
    prior: Option<&CloudscaleLoadBalancerSpec>,
    after: &CloudscaleLoadBalancerSpec,
    replace: bool,
) -> Result<(), TestCaseError> {
    let first = plan(after, live.as_ref(), prior, replace);
    let applied = apply_ops(live, &ops(&first)).map_err(|error| {
        let listing: Vec<String> = first.operations.iter().map(|o| o.to_string()).collect();
        TestCaseError::fail(format!("{error}\noperations: {listing:#?}"))
    })?;
    let Some(applied) = applied else {
        return Err(TestCaseError::fail(format!(
            "the load balancer is gone: {first:#?}"
        )));
    };
    // A diff blind to some field would plan nothing twice; the objects themselves tell.
    let (have, want) = (comparable(&applied), comparable(&desired(after)));
    prop_assert_eq!(&have.lb, &want.lb, "first plan: {:#?}", first);
    prop_assert_eq!(&have.pools, &want.pools, "first plan: {:#?}", first);
    prop_assert!(
        have.floating_ips.is_superset(&want.floating_ips),
        "{first:#?}"
    );
    let second = plan(after, Some(&applied), Some(after), false);
    prop_assert!(
        second.attributes.is_empty() && second.operations.is_empty(),
        "first plan:\n{first:#?}\nleft to do after applying it:\n{second:#?}"
    );
    Ok(())
}

/// The objects without what the API assigns (UUIDs, status, VIP addresses; the re-plan checks
/// those the CCM's way), so that applied objects compare with desired ones.
fn comparable(objects: &LbObjects) -> LbObjects {
    let mut objects = objects.clone();
    let lb = &mut objects.lb;
    lb.uuid = None;
    lb.status = None;
    lb.vip_addresses.clear();
    for set in objects.pools.values_mut() {
        set.pool.uuid = None;
        set.members.values_mut().for_each(|m| m.uuid = None);
        set.monitor.iter_mut().for_each(|m| m.uuid = None);
        set.listener.iter_mut().for_each(|l| l.uuid = None);
    }
    objects
}

/// Live objects that drifted from what was applied: someone deleted a pool's monitor or
/// listener, disabled a member, or added a member of their own. (Not a listener renamed by
/// hand: apply orders listener operations by listener name, so creating a listener on the
/// renamed one's port may run before that one is deleted.)
fn drifted(mut live: LbObjects, drift: usize, pool: prop::sample::Index) -> LbObjects {
    let names: Vec<String> = live.pools.keys().cloned().collect();
    let set = live
        .pools
        .get_mut(pool.get(&names))
        .expect("every spec has a port");
    match drift {
        0 => set.monitor = None,
        1 => set.listener = None,
        2 => set.members.values_mut().for_each(|m| m.enabled = false),
        _ => {
            let stray = MemberObject {
                uuid: None,
                name: "10.0.0.99:31000".into(),
                enabled: true,
                protocol_port: 31000,
                monitor_port: 31000,
                address: "10.0.0.99".into(),
                subnet: SUBNET.into(),
                tags: Default::default(),
            };
            set.members.insert(stray.name.clone(), stray);
        }
    }
    live
}

// ---- Under-prediction ----------------------------------------------------------------------

/// Paths of the changes that make no cloud call: what the Service status reports, and a
/// floating IP that stays assigned because the API cannot unassign it.
const WITHOUT_CALLS: &[&str] = &["force-hostname", "ip-mode", "floating-ips"];

/// The pool an operation touches a member, monitor or listener of.
fn child_pool(op: &Op) -> Option<&str> {
    match op {
        Op::CreateMember { pool, .. }
        | Op::DeleteMember { pool, .. }
        | Op::CreateMonitor { pool, .. }
        | Op::DeleteMonitor { pool }
        | Op::CreateListener { pool, .. }
        | Op::DeleteListener { pool, .. } => Some(pool),
        _ => None,
    }
}

/// The class the operations call for at least: a deleted pool stops its port; a member,
/// monitor or listener created or deleted in a pool that serves today and is kept disturbs
/// new connections. (Creating the children of a new pool disturbs nothing: port added.)
fn class_of_operations(ops: &[Op], live: &LbObjects) -> Impact {
    let deletes_pool = |name: &str| {
        ops.iter()
            .any(|op| matches!(op, Op::DeletePool { pool } if pool == name))
    };
    if ops.iter().any(|op| matches!(op, Op::DeletePool { .. })) {
        Impact::PoolRecreate
    } else if ops
        .iter()
        .filter_map(child_pool)
        .any(|pool| live.pools.contains_key(pool) && !deletes_pool(pool))
    {
        Impact::Minimal
    } else {
        Impact::None
    }
}

fn assert_not_under_predicted(
    change: &ResourceChange,
    live: &LbObjects,
) -> Result<(), TestCaseError> {
    let ops = ops(change);
    let floor = class_of_operations(&ops, live);
    prop_assert!(
        change.impact() >= floor,
        "the plan says {} but its operations are {floor}: {change:#?}",
        change.impact()
    );
    prop_assert!(
        ops.is_empty() || !change.attributes.is_empty(),
        "operations without a change that explains them: {change:#?}"
    );
    if ops.is_empty() {
        for attribute in &change.attributes {
            prop_assert!(
                attribute.impact == Impact::Forbidden
                    || (attribute.impact == Impact::None
                        && WITHOUT_CALLS.contains(&attribute.path.as_str())),
                "a change without operations: {attribute:#?}"
            );
        }
    }
    Ok(())
}

proptest! {
    /// Property A: plan, apply, plan again — the second plan is empty. Also with the state
    /// lost (no prior spec), when the plan adopts the tagged load balancer.
    #[test]
    fn an_applied_plan_leaves_nothing_to_do(
        (before, after) in spec_pair(placement()), state_lost in any::<bool>()
    ) {
        let prior = (!state_lost).then_some(&before);
        assert_converges(Some(desired(&before)), prior, &after, false)?;
    }

    #[test]
    fn an_applied_creation_leaves_nothing_to_do(after in spec(), placement in placement()) {
        assert_converges(None, None, &placed(after, &placement), false)?;
    }

    /// With --replace even flavor, zone and VIP addresses may change.
    #[test]
    fn an_applied_replacement_leaves_nothing_to_do(
        before in spec(), after in spec(), placements in (placement(), placement())
    ) {
        let before = placed(before, &placements.0);
        let after = placed(after, &placements.1);
        assert_converges(Some(desired(&before)), Some(&before), &after, true)?;
    }

    /// Property A over live objects that drifted from the last apply.
    #[test]
    fn an_applied_plan_repairs_drift(
        (before, after) in spec_pair(placement()), drift in 0..4usize, pool in any::<prop::sample::Index>()
    ) {
        let live = drifted(desired(&before), drift, pool);
        assert_converges(Some(live), Some(&before), &after, false)?;
    }

    /// Property B: the class is never lower than what the operations do.
    #[test]
    fn a_plan_never_under_predicts((before, after) in spec_pair(placement()), moved in placement()) {
        let live = desired(&before);
        assert_not_under_predicted(&plan(&after, Some(&live), Some(&before), false), &live)?;
        // Forbidden changes aside, the same holds: they add no operations.
        let after = placed(after, &moved);
        assert_not_under_predicted(&plan(&after, Some(&live), Some(&before), false), &live)?;
    }
}

#[test]
fn the_interpreter_refuses_what_the_api_refuses() {
    let live = desired(&placed(
        CloudscaleLoadBalancerSpec {
            ports: vec![PortSpec {
                name: String::new(),
                port: 80,
                protocol: PortProtocol::Tcp,
                node_port: 30080,
            }],
            ..CloudscaleLoadBalancerSpec::with_defaults("web-lb", "lpg1")
        },
        &Placement {
            flavor: "lb-standard",
            zone: "lpg1",
            vip_addresses: vec![],
        },
    ));
    let orphaning = [Op::DeletePool { pool: "tcp".into() }];
    let error = apply_ops(Some(live.clone()), &orphaning).unwrap_err();
    assert!(error.contains("left without a pool"), "{error}");
    let twice = [Op::CreatePool {
        pool: live.pools["tcp"].pool.clone(),
    }];
    assert!(apply_ops(Some(live.clone()), &twice).is_err());
    let orphan_member = [Op::DeleteMember {
        pool: "udp".into(),
        member: "10.0.0.11:30080".into(),
    }];
    assert!(apply_ops(Some(live), &orphan_member).is_err());
}
