//! A live load balancer read back into the spec that `desired_objects` would build it from
//! (direct mode, members as addresses). The config sets one algorithm, pool protocol,
//! listener protocol, allowed CIDRs, timeouts, health monitor and member list for every port,
//! and names pools, listeners and members as the CCM does: a load balancer whose pools differ
//! in any of these, or whose objects are named otherwise, is refused at the attribute the plan
//! would name — adopting it would plan a change.

use std::collections::BTreeSet;
use std::net::IpAddr;

use super::super::desired::{listener_name, member_name};
use super::super::diff::port_key;
use super::super::objects::{LbObjects, MonitorObject, PoolSet, Snapshot, SubnetObject};
use super::{canonical_cidr, canonical_ip, canonical_uuid, Refusal};
use crate::spec::{
    Algorithm, CloudscaleLoadBalancerSpec, HealthMonitorSpec, HttpCheck, HttpVersion,
    ListenerProtocol, MonitorType, PoolProtocol, PortProtocol, PortSpec, Timeouts, TrafficPolicy,
    VipAddress,
};
use skyplan_core::config::section as values;

pub(super) fn spec(
    live: &LbObjects,
    snapshot: &Snapshot,
) -> Result<CloudscaleLoadBalancerSpec, Refusal> {
    let lb = &live.lb;
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults(&lb.name, &lb.zone);
    spec.flavor = lb.flavor.clone();
    spec.vip_addresses = vip_addresses(&lb.vip_addresses, &snapshot.subnets);
    for (i, vip) in spec.vip_addresses.iter().enumerate() {
        canonical_uuid(&vip.subnet, &format!("vip-addresses[{i}].subnet"))?;
        if let Some(address) = &vip.address {
            canonical_ip(address, &format!("vip-addresses[{i}].address"))?;
        }
    }
    spec.floating_ips = floating_ips(live)?;
    if live.pools.is_empty() {
        return Err(Refusal::new(
            "ports",
            "the load balancer has no pools: a load balancer of the config has at least one port, which a plan would create",
        ));
    }
    let mut shared = Shared::default();
    let mut ports = Vec::new();
    let mut monitor_ports: Vec<(String, BTreeSet<u16>, BTreeSet<u16>)> = Vec::new();
    for (key, set) in live.pools.iter() {
        let port = read_port(key, set, snapshot, &mut shared)?;
        monitor_ports.push(port.monitor_ports);
        ports.push(port.spec);
    }
    names_are_distinct(&ports)?;
    ports.sort_by(|a, b| (a.port, &a.name).cmp(&(b.port, &b.name)));
    spec.ports = ports;
    spec.algorithm = shared.algorithm.take().unwrap_or(spec.algorithm);
    spec.pool_protocol = shared.pool_protocol.take().unwrap_or(spec.pool_protocol);
    spec.listener_protocol = (shared.listener_protocol.take()).unwrap_or(spec.listener_protocol);
    spec.allowed_cidrs = shared.allowed_cidrs.take().unwrap_or_default();
    spec.timeouts = shared.timeouts.take().unwrap_or_default();
    let mut members: Vec<IpAddr> = shared
        .members
        .take()
        .unwrap_or_default()
        .into_iter()
        .collect();
    members.sort();
    spec.members = members.iter().map(IpAddr::to_string).collect();
    let monitor = shared.monitor.take().expect("every pool has a monitor");
    let (policy, health_port) = traffic_policy(&monitor_ports, &monitor)?;
    spec.traffic_policy = policy;
    spec.health_check_node_port = health_port;
    spec.health_monitor = monitor;
    Ok(spec)
}

/// The VIP addresses in the account's subnets, as a config asks for them; none when a VIP is
/// elsewhere (a public one): an empty list accepts whatever the load balancer has.
fn vip_addresses(live: &[VipAddress], subnets: &[SubnetObject]) -> Vec<VipAddress> {
    let known = |vip: &VipAddress| subnets.iter().any(|s| s.uuid == vip.subnet);
    match live.iter().all(known) {
        true => live.to_vec(),
        false => vec![],
    }
}

fn floating_ips(live: &LbObjects) -> Result<Vec<String>, Refusal> {
    let mut ips = Vec::new();
    for network in &live.floating_ips {
        canonical_cidr(network, "floating-ips")?;
        ips.push(network.clone());
    }
    Ok(ips)
}

/// What every port shares in the config, as the first pool had it.
#[derive(Default)]
struct Shared {
    algorithm: Agreed<Algorithm>,
    pool_protocol: Agreed<PoolProtocol>,
    listener_protocol: Agreed<ListenerProtocol>,
    allowed_cidrs: Agreed<Vec<String>>,
    timeouts: Agreed<Timeouts>,
    monitor: Agreed<HealthMonitorSpec>,
    members: Agreed<BTreeSet<IpAddr>>,
}

/// One value for every pool: the first pool's, which every other must equal.
struct Agreed<T> {
    first: Option<(T, String)>,
}

impl<T> Default for Agreed<T> {
    fn default() -> Self {
        Agreed { first: None }
    }
}

impl<T: PartialEq + std::fmt::Debug> Agreed<T> {
    /// `value` of pool `pool`; `what` names the setting in the reason.
    fn agree(&mut self, value: T, pool: &str, path: &str, what: &str) -> Result<(), Refusal> {
        match &self.first {
            None => {
                self.first = Some((value, pool.to_string()));
                Ok(())
            }
            Some((first, _)) if *first == value => Ok(()),
            Some((first, first_pool)) => Err(Refusal::new(
                path,
                format!(
                    "pool {first_pool} has {what} {first:?} and pool {pool} {value:?}: the config sets one {what} for every port"
                ),
            )),
        }
    }

    fn take(&mut self) -> Option<T> {
        self.first.take().map(|(value, _)| value)
    }
}

struct Port {
    spec: PortSpec,
    /// The port's key, its members' protocol ports and monitor ports.
    monitor_ports: (String, BTreeSet<u16>, BTreeSet<u16>),
}

fn read_port(
    key: &str,
    set: &PoolSet,
    snapshot: &Snapshot,
    shared: &mut Shared,
) -> Result<Port, Refusal> {
    let pool = &set.pool;
    let port_path = format!("ports.{}", port_key(set));
    if key != pool.name {
        return Err(Refusal::new(
            "ports",
            format!(
                "two pools are named {}: skyplan keys pools by name, as the CCM does, and would delete one",
                pool.name
            ),
        ));
    }
    let (protocol, name) = pool_name(&pool.name).ok_or_else(|| {
        Refusal::new(
            &port_path,
            format!(
                "pool {} is not named as skyplan and the CCM name pools (tcp, udp, tcp/NAME, udp/NAME): a plan would recreate it under such a name",
                pool.name
            ),
        )
    })?;
    let Some(listener) = &set.listener else {
        return Err(Refusal::new(
            format!("{port_path}.port"),
            format!(
                "pool {} has no listener: a port of the config has one, which a plan would create",
                pool.name
            ),
        ));
    };
    let at = |field: &str| format!("{port_path}.{field}");
    let udp = protocol == PortProtocol::Udp;
    // A UDP port's pool and listener are UDP whatever the load balancer's protocols are.
    match udp {
        true => must_be("udp", &pool.protocol, &at("pool-protocol"), "pool protocol")?,
        false => {
            let parsed = PoolProtocol::parse(&pool.protocol).ok_or_else(|| {
                not_expressible(&at("pool-protocol"), "pool protocol", &pool.protocol)
            })?;
            let path = at("pool-protocol");
            shared
                .pool_protocol
                .agree(parsed, &pool.name, &path, "pool protocol")?;
        }
    }
    let algorithm = Algorithm::parse(&pool.algorithm)
        .ok_or_else(|| not_expressible(&at("algorithm"), "algorithm", &pool.algorithm))?;
    shared
        .algorithm
        .agree(algorithm, &pool.name, &at("algorithm"), "algorithm")?;
    let listener_path = at("listener-protocol");
    match udp {
        true => must_be(
            "udp",
            &listener.protocol,
            &listener_path,
            "listener protocol",
        )?,
        false => {
            let parsed = ListenerProtocol::parse(&listener.protocol).ok_or_else(|| {
                not_expressible(&listener_path, "listener protocol", &listener.protocol)
            })?;
            (shared.listener_protocol).agree(
                parsed,
                &pool.name,
                &listener_path,
                "listener protocol",
            )?;
        }
    }
    let expected = listener_name(&listener.protocol, listener.protocol_port);
    if listener.name != expected {
        return Err(Refusal::new(
            at("listener-name"),
            format!(
                "listener {} is not named as skyplan and the CCM name listeners ({expected}): a plan would rename it",
                listener.name
            ),
        ));
    }
    for cidr in &listener.allowed_cidrs {
        canonical_cidr(cidr, "allowed-cidrs")?;
    }
    let cidrs = listener.allowed_cidrs.clone();
    shared
        .allowed_cidrs
        .agree(cidrs, &pool.name, "allowed-cidrs", "allowed-cidrs")?;
    let timeouts = Timeouts {
        client_data_ms: listener.timeout_client_data_ms,
        member_connect_ms: listener.timeout_member_connect_ms,
        member_data_ms: listener.timeout_member_data_ms,
    };
    shared
        .timeouts
        .agree(timeouts, &pool.name, "timeouts", "timeouts")?;
    let Some(monitor) = &set.monitor else {
        return Err(Refusal::new(
            at("health-monitor"),
            format!(
                "pool {} has no health monitor: a port of the config has one, which a plan would create",
                pool.name
            ),
        ));
    };
    let monitor = health_monitor(monitor)?;
    shared
        .monitor
        .agree(monitor, &pool.name, "health-monitor", "health monitor")?;
    let members = members(set, snapshot, &at("members"))?;
    let addresses: BTreeSet<IpAddr> = members.iter().map(|m| m.0).collect();
    shared
        .members
        .agree(addresses, &pool.name, &at("members"), "members")?;
    let node_ports: BTreeSet<u16> = members.iter().map(|m| m.1).collect();
    let monitor_ports: BTreeSet<u16> = members.iter().map(|m| m.2).collect();
    let node_port = match node_ports.iter().collect::<Vec<_>>().as_slice() {
        // Without members the node port shows nowhere: any is planned alike.
        [] => listener.protocol_port,
        [one] => **one,
        _ => {
            return Err(Refusal::new(
                at("node-port"),
                format!(
                    "the members of pool {} listen on different ports ({node_ports:?}): a port of the config has one node port",
                    pool.name
                ),
            ))
        }
    };
    let key = port_key(set);
    Ok(Port {
        spec: PortSpec {
            name: name.to_string(),
            port: listener.protocol_port,
            protocol,
            node_port,
        },
        monitor_ports: (key, node_ports, monitor_ports),
    })
}

/// `tcp`, `udp`, `tcp/NAME`, `udp/NAME` → the protocol and the port name.
fn pool_name(name: &str) -> Option<(PortProtocol, &str)> {
    let (protocol, port) = match name.split_once('/') {
        Some((_, "")) => return None,
        Some((protocol, port)) => (protocol, port),
        None => (name, ""),
    };
    Some((PortProtocol::parse(protocol)?, port))
}

fn must_be(wanted: &str, have: &str, path: &str, what: &str) -> Result<(), Refusal> {
    match have == wanted {
        true => Ok(()),
        false => Err(Refusal::new(
            path,
            format!("a UDP port's {what} is {wanted} in skyplan's config, this one is {have}"),
        )),
    }
}

fn not_expressible(path: &str, what: &str, value: &str) -> Refusal {
    Refusal::new(
        path,
        format!("{what} `{value}` is not one skyplan's config can say"),
    )
}

fn health_monitor(live: &MonitorObject) -> Result<HealthMonitorSpec, Refusal> {
    let kind = MonitorType::parse(&live.kind)
        .ok_or_else(|| not_expressible("health-monitor.type", "health-monitor type", &live.kind))?;
    let http_kind = matches!(kind, MonitorType::Http | MonitorType::Https);
    let http = match (&live.http, http_kind) {
        (None, false) => None,
        (Some(http), true) => {
            let version = HttpVersion::parse(&http.version).ok_or_else(|| {
                not_expressible("health-monitor.http.version", "HTTP version", &http.version)
            })?;
            if http.host.as_deref() == Some("") {
                return Err(Refusal::new(
                    "health-monitor.http.host",
                    "the HTTP check sends an empty Host header, which the config cannot tell from none (host = \"\" sends none)",
                ));
            }
            Some(HttpCheck {
                method: http.method.clone(),
                url_path: http.url_path.clone(),
                expected_codes: http.expected_codes.clone(),
                version,
                host: http.host.clone(),
            })
        }
        (None, true) => {
            return Err(Refusal::new(
                "health-monitor.http",
                format!("the {kind} health monitor has no HTTP options, which the config always gives it"),
            ))
        }
        (Some(_), false) => {
            return Err(Refusal::new(
                "health-monitor.http",
                format!("the {kind} health monitor has HTTP options, which the config gives only http and https monitors"),
            ))
        }
    };
    Ok(HealthMonitorSpec {
        kind,
        delay_s: live.delay_s,
        timeout_s: live.timeout_s,
        up_threshold: live.up_threshold,
        down_threshold: live.down_threshold,
        http,
    })
}

/// Each member's address, protocol port and monitor port, held to what `desired_objects`
/// makes of an address: named `address:port`, enabled, in the first subnet holding it.
fn members(
    set: &PoolSet,
    snapshot: &Snapshot,
    path: &str,
) -> Result<Vec<(IpAddr, u16, u16)>, Refusal> {
    let pool = &set.pool.name;
    let mut read = Vec::new();
    for (key, member) in &set.members {
        let refuse = |why: String| {
            Err(Refusal::new(
                path,
                format!("member {key} of pool {pool} {why}"),
            ))
        };
        if key != &member.name {
            return refuse("shares its name with another member: skyplan keys members by name and would delete one".into());
        }
        let address = match values::ip_address(&member.address) {
            Ok(ip) if ip.to_string() == member.address => ip,
            _ => {
                return refuse(format!(
                    "has the address `{}`, which the config cannot write as it is",
                    member.address
                ))
            }
        };
        let expected = member_name(&member.address, member.protocol_port);
        if member.name != expected {
            return refuse(format!("is not named as skyplan and the CCM name members ({expected}): a plan would recreate it"));
        }
        if !member.enabled {
            return refuse(
                "is disabled: skyplan's members are enabled, a plan would recreate it".into(),
            );
        }
        let subnet = subnet_of(address, &snapshot.subnets);
        if subnet != Some(member.subnet.as_str()) {
            let placed = subnet.map_or("no subnet of the account".to_string(), |s| {
                format!("subnet {s}")
            });
            return refuse(format!(
                "is in subnet {}, where skyplan would place its address in {placed}: a plan would recreate it",
                member.subnet
            ));
        }
        read.push((address, member.protocol_port, member.monitor_port));
    }
    Ok(read)
}

/// The first subnet holding `address`, as `desired_objects` chooses it.
fn subnet_of(address: IpAddr, subnets: &[SubnetObject]) -> Option<&str> {
    subnets
        .iter()
        .find(|s| {
            s.cidr
                .parse::<ipnet::IpNet>()
                .is_ok_and(|net| net.contains(&address))
        })
        .map(|s| s.uuid.as_str())
}

/// Members checked on their node ports are `Cluster`; all checked on one other port by an
/// http monitor are `Local` with that health-check node port (kube-proxy's, as the CCM sets
/// it up); anything else the config cannot say.
fn traffic_policy(
    ports: &[(String, BTreeSet<u16>, BTreeSet<u16>)],
    monitor: &HealthMonitorSpec,
) -> Result<(TrafficPolicy, Option<u16>), Refusal> {
    if ports
        .iter()
        .all(|(_, node, checked)| checked.is_subset(node))
    {
        return Ok((TrafficPolicy::Cluster, None));
    }
    let checked: BTreeSet<u16> = ports
        .iter()
        .flat_map(|(_, _, c)| c.iter().copied())
        .collect();
    let shared = ports
        .iter()
        .all(|(_, node, checked)| !node.is_empty() && !checked.is_empty());
    match (
        checked.iter().collect::<Vec<_>>().as_slice(),
        shared,
        monitor.kind,
    ) {
        ([one], true, MonitorType::Http) => Ok((TrafficPolicy::Local, Some(**one))),
        _ => {
            let (key, _, _) = ports
                .iter()
                .find(|(_, node, checked)| !checked.is_subset(node))
                .expect("a port checked elsewhere");
            Err(Refusal::new(
                format!("ports.{key}.monitor-port"),
                "the members are health-checked on other ports than they serve, other than one http check on one port for every member (traffic-policy = \"Local\"): the config cannot say it",
            ))
        }
    }
}

/// The config names every port of several and no name twice; each listener port once per
/// listener protocol.
fn names_are_distinct(ports: &[PortSpec]) -> Result<(), Refusal> {
    let mut names = BTreeSet::new();
    for port in ports {
        if ports.len() > 1 && port.name.is_empty() {
            return Err(Refusal::new(
                format!("ports.{}.name", port.key()),
                format!("port {} has no name beside other ports: the config, like Kubernetes, names every port of several, and a plan would recreate its pool under a name", port.port),
            ));
        }
        if !names.insert(port.name.as_str()) {
            return Err(Refusal::new(
                format!("ports.{}.name", port.key()),
                format!(
                    "two ports are named {}: the config names each port once",
                    port.name
                ),
            ));
        }
    }
    Ok(())
}
