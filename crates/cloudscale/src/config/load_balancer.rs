//! `[load-balancer.NAME]` → a [`Resource`] with the cloudscale CCM's defaults applied.

use std::collections::HashMap;
use std::net::IpAddr;
use std::ops::Range;

use skyplan_core::config::section::{
    self as values, Checker, Invalid, KeyLocations, Problem, Problems, Resource, ResourceSpec,
    SourceFile, Table,
};
use skyplan_core::model::{Address, ResourceKind};

use super::binding;
use super::raw::{
    RawHealthMonitor, RawHttpCheck, RawLoadBalancer, RawPort, RawTimeouts, RawVipAddress,
};
use crate::spec::{
    CloudscaleLoadBalancerSpec, HealthMonitorSpec, HttpCheck, MonitorType, PortProtocol, PortSpec,
    Timeouts, TrafficPolicy, VipAddress,
};

pub(super) fn resource(key: &str, table: &Table<'_>, problems: &mut Problems) -> Resource {
    let raw: &RawLoadBalancer = table.get();
    let mut check = Checker::new(table.file, problems);
    let spec = spec(key, raw, &mut check);
    // A bound load balancer reads its cluster's nodes: the cluster is connected first.
    let depends_on = spec.binding.iter().map(|b| b.cluster.clone()).collect();
    Resource {
        address: Address::new(ResourceKind::LoadBalancer, key),
        provider: raw.provider.get_ref().clone(),
        location: table.location(),
        keys: catalog_keys(raw, table.file),
        spec: ResourceSpec::new(spec),
        depends_on,
        origin: Default::default(),
    }
}

/// Where the keys naming catalog objects are written, for plan errors about an unknown zone,
/// flavor, VIP subnet, floating IP or a member in no subnet. Lists are indexed as the spec keeps them: a
/// config with a bad element is refused before any plan, so the indices agree.
fn catalog_keys(raw: &RawLoadBalancer, file: &SourceFile) -> KeyLocations {
    let mut keys = KeyLocations::default();
    keys.insert("zone", file.key_location(&raw.zone.span()));
    if let Some(service) = &raw.service {
        keys.insert("service", file.key_location(&service.span()));
    }
    if let Some(flavor) = &raw.flavor {
        keys.insert("flavor", file.key_location(&flavor.span()));
    }
    for (i, vip) in raw.vip_addresses.iter().enumerate() {
        let path = format!("vip-addresses[{i}].subnet");
        keys.insert(path, file.key_location(&vip.subnet.span()));
        if let Some(address) = &vip.address {
            let path = format!("vip-addresses[{i}].address");
            keys.insert(path, file.key_location(&address.span()));
        }
    }
    let lists = [
        ("floating-ips", &raw.floating_ips),
        ("members", &raw.members),
    ];
    for (name, values) in lists {
        for (i, value) in values.iter().enumerate() {
            keys.insert(format!("{name}[{i}]"), file.location(&value.span()));
        }
    }
    keys
}

fn spec(
    key: &str,
    raw: &RawLoadBalancer,
    check: &mut Checker<'_, '_>,
) -> CloudscaleLoadBalancerSpec {
    let name = raw.name.clone().unwrap_or_else(|| key.to_string());
    let defaults = CloudscaleLoadBalancerSpec::with_defaults(name, raw.zone.get_ref().clone());
    let traffic_policy = check.choice(&raw.traffic_policy, defaults.traffic_policy);
    let cidr_text = |text: &str| values::cidr(text).map(|net| net.to_string());
    binding::check_keys(raw, check);
    let binding = binding::binding(raw, check);
    CloudscaleLoadBalancerSpec {
        flavor: raw
            .flavor
            .as_ref()
            .map(|f| f.get_ref().clone())
            .unwrap_or(defaults.flavor),
        vip_addresses: raw
            .vip_addresses
            .iter()
            .filter_map(|vip| vip_address(vip, check))
            .collect(),
        floating_ips: check.texts(&raw.floating_ips, cidr_text),
        algorithm: check.choice(&raw.algorithm, defaults.algorithm),
        pool_protocol: check.choice(&raw.pool_protocol, defaults.pool_protocol),
        listener_protocol: check.choice(&raw.listener_protocol, defaults.listener_protocol),
        allowed_cidrs: check.texts(&raw.allowed_cidrs, cidr_text),
        allowed_subnets: check.texts(&raw.allowed_subnets, values::uuid),
        timeouts: timeouts(&raw.timeouts),
        health_monitor: health_monitor(&raw.health_monitor, traffic_policy, check),
        traffic_policy,
        health_check_node_port: raw
            .health_check_node_port
            .as_ref()
            .and_then(|port| check.port(port)),
        force_hostname: raw.force_hostname.clone(),
        ip_mode: check.choice(&raw.ip_mode, defaults.ip_mode),
        members: members(raw, check),
        ports: raw
            .ports
            .get_ref()
            .iter()
            .filter_map(|port| port_spec(port.get_ref(), check))
            .collect(),
        node_selector: raw.node_selector.as_ref().map(|s| s.get_ref().clone()),
        binding,
        ..defaults
    }
}

fn timeouts(raw: &RawTimeouts) -> Timeouts {
    let defaults = Timeouts::default();
    Timeouts {
        client_data_ms: raw.client_data_ms.unwrap_or(defaults.client_data_ms),
        member_connect_ms: raw.member_connect_ms.unwrap_or(defaults.member_connect_ms),
        member_data_ms: raw.member_data_ms.unwrap_or(defaults.member_data_ms),
    }
}

fn vip_address(raw: &RawVipAddress, check: &mut Checker<'_, '_>) -> Option<VipAddress> {
    let subnet = check.text(&raw.subnet, values::uuid);
    let address = match &raw.address {
        Some(address) => Some(check.text(address, ip_text)?),
        None => None,
    };
    Some(VipAddress {
        subnet: subnet?,
        address,
    })
}

fn ip_text(text: &str) -> Result<String, Invalid> {
    values::ip_address(text).map(|ip| ip.to_string())
}

/// Members in their canonical spelling, so `::0001` and `::1` count as the same member.
fn members(raw: &RawLoadBalancer, check: &mut Checker<'_, '_>) -> Vec<String> {
    let mut first_seen: HashMap<IpAddr, Range<usize>> = HashMap::new();
    let mut members = Vec::new();
    for member in &raw.members {
        let Some(address) = check.text(member, values::ip_address) else {
            continue;
        };
        match first_seen.get(&address) {
            Some(first) => {
                let message = format!("member {address} is listed twice");
                let note = Problem::at(check.file, first.clone(), "first listed here");
                let problem = Problem::at(check.file, member.span(), message);
                check.push(problem.with_help("list each member once").with_note(note));
            }
            None => {
                first_seen.insert(address, member.span());
                members.push(address.to_string());
            }
        }
    }
    members
}

/// A `Local` traffic policy makes the CCM check kube-proxy's `/livez` over HTTP instead of
/// connecting to the port, since only nodes with a ready endpoint may receive traffic.
fn health_monitor(
    raw: &RawHealthMonitor,
    traffic_policy: TrafficPolicy,
    check: &mut Checker<'_, '_>,
) -> HealthMonitorSpec {
    let local = traffic_policy == TrafficPolicy::Local;
    let defaults = HealthMonitorSpec::default();
    let kind_default = if local {
        MonitorType::Http
    } else {
        defaults.kind
    };
    let kind = check.choice(&raw.kind, kind_default);
    let is_http = matches!(kind, MonitorType::Http | MonitorType::Https);
    if let (Some(http), false) = (&raw.http, is_http) {
        let message = format!("an HTTP check does not apply to a `{kind}` health monitor");
        let help = "set type = \"http\" or \"https\", or remove `http`";
        check.report(http.span(), Invalid::new(message).help(help));
    }
    HealthMonitorSpec {
        kind,
        delay_s: raw.delay_s.unwrap_or(defaults.delay_s),
        timeout_s: raw.timeout_s.unwrap_or(defaults.timeout_s),
        up_threshold: raw.up_threshold.unwrap_or(defaults.up_threshold),
        down_threshold: raw.down_threshold.unwrap_or(defaults.down_threshold),
        http: is_http.then(|| http_check(raw.http.as_ref().map(|h| h.get_ref()), local, check)),
    }
}

fn http_check(raw: Option<&RawHttpCheck>, local: bool, check: &mut Checker<'_, '_>) -> HttpCheck {
    let base = if local {
        HttpCheck::livez()
    } else {
        HttpCheck::default()
    };
    let Some(raw) = raw else { return base };
    HttpCheck {
        method: raw.method.clone().unwrap_or(base.method),
        url_path: raw.url_path.clone().unwrap_or(base.url_path),
        expected_codes: raw.expected_codes.clone().unwrap_or(base.expected_codes),
        version: check.choice(&raw.version, base.version),
        host: raw.host.clone().filter(|host| !host.is_empty()),
    }
}

fn port_spec(raw: &RawPort, check: &mut Checker<'_, '_>) -> Option<PortSpec> {
    let port = check.port(&raw.port);
    // Without a node-port (reported unless the load balancer is bound to a Service) the port
    // is 0: the Service's node port, read at refresh.
    let node_port = match &raw.node_port {
        Some(node_port) => check.port(node_port),
        None => Some(0),
    };
    Some(PortSpec {
        name: raw
            .name
            .as_ref()
            .map(|n| n.get_ref().clone())
            .unwrap_or_default(),
        port: port?,
        protocol: check.choice(&raw.protocol, PortProtocol::Tcp),
        node_port: node_port?,
    })
}
