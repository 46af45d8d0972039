//! What the cloudscale CCM would create for a load balancer spec: the desired objects, named
//! and shaped exactly as the CCM does (reconcile.go's desiredLbState), so that comparing them
//! with the live objects predicts what the CCM-equivalent apply will do.

use std::net::IpAddr;

use ipnet::IpNet;

use super::objects::{
    HttpObject, LbObject, LbObjects, ListenerObject, MemberObject, MonitorObject, PoolObject,
    PoolSet, SubnetObject, Tags, OWNER_TAG,
};
use crate::spec::{
    CloudscaleLoadBalancerSpec, HttpCheck, MonitorType, PortProtocol, PortSpec, TrafficPolicy,
};
use skyplan_core::model::Address;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DesiredError {
    #[error("member {address} is in none of the account's subnets ({known}); pool members need a private subnet")]
    MemberWithoutSubnet { address: String, known: String },
}

/// Pool name as the CCM builds it: the lower-case protocol, plus `/name` for a named port.
pub fn pool_name(protocol: PortProtocol, port_name: &str) -> String {
    if port_name.is_empty() {
        protocol.as_str().to_string()
    } else {
        format!("{}/{}", protocol.as_str(), port_name)
    }
}

/// Member name as the CCM builds it: `address:port`, IPv6 in brackets.
pub fn member_name(address: &str, port: u16) -> String {
    if address.contains(':') {
        format!("[{address}]:{port}")
    } else {
        format!("{address}:{port}")
    }
}

/// Listener name as the CCM builds it: `protocol/port`.
pub fn listener_name(protocol: &str, port: u16) -> String {
    format!("{}/{}", protocol.to_lowercase(), port)
}

pub fn owner_tags(address: &Address) -> Tags {
    Tags::from([(OWNER_TAG.to_string(), address.to_string())])
}

/// The objects the spec asks for. `subnets` are the account's subnets, needed because a
/// pool member names the subnet its address is in.
pub fn desired_objects(
    address: &Address,
    spec: &CloudscaleLoadBalancerSpec,
    subnets: &[SubnetObject],
) -> Result<LbObjects, DesiredError> {
    let tags = owner_tags(address);
    let lb = LbObject {
        uuid: None,
        name: spec.name.clone(),
        flavor: spec.flavor.clone(),
        zone: spec.zone.clone(),
        vip_addresses: spec.vip_addresses.clone(),
        tags: tags.clone(),
        status: None,
    };
    let backends = member_subnets(spec, subnets)?;
    let pools = spec
        .ports
        .iter()
        .map(|port| {
            let set = pool_set(spec, port, &backends, &tags);
            (set.pool.name.clone(), set)
        })
        .collect();
    Ok(LbObjects {
        lb,
        pools,
        floating_ips: spec.floating_ips.iter().cloned().collect(),
    })
}

/// Each member address with the subnet it is in, filtered by the allowed subnets.
fn member_subnets(
    spec: &CloudscaleLoadBalancerSpec,
    subnets: &[SubnetObject],
) -> Result<Vec<(String, String)>, DesiredError> {
    let mut backends = Vec::new();
    for address in &spec.members {
        let subnet =
            subnet_of(address, subnets).ok_or_else(|| DesiredError::MemberWithoutSubnet {
                address: address.clone(),
                known: subnets
                    .iter()
                    .map(|s| s.cidr.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        if spec.allowed_subnets.is_empty() || spec.allowed_subnets.contains(&subnet.uuid) {
            backends.push((address.clone(), subnet.uuid.clone()));
        }
    }
    Ok(backends)
}

fn subnet_of<'a>(address: &str, subnets: &'a [SubnetObject]) -> Option<&'a SubnetObject> {
    let ip: IpAddr = address.parse().ok()?;
    subnets.iter().find(|s| {
        s.cidr
            .parse::<IpNet>()
            .map(|net| net.contains(&ip))
            .unwrap_or(false)
    })
}

fn pool_set(
    spec: &CloudscaleLoadBalancerSpec,
    port: &PortSpec,
    backends: &[(String, String)],
    tags: &Tags,
) -> PoolSet {
    let udp = port.protocol == PortProtocol::Udp;
    let pool = PoolObject {
        uuid: None,
        name: pool_name(port.protocol, &port.name),
        algorithm: spec.algorithm.as_str().to_string(),
        protocol: if udp {
            "udp"
        } else {
            spec.pool_protocol.as_str()
        }
        .to_string(),
        tags: tags.clone(),
    };
    let monitor_port = match (spec.traffic_policy, spec.health_check_node_port) {
        (TrafficPolicy::Local, Some(health_port)) => health_port,
        _ => port.node_port,
    };
    let members = backends
        .iter()
        .map(|(address, subnet)| {
            let member = MemberObject {
                uuid: None,
                name: member_name(address, port.node_port),
                enabled: true,
                protocol_port: port.node_port,
                monitor_port,
                address: address.clone(),
                subnet: subnet.clone(),
                tags: tags.clone(),
            };
            (member.name.clone(), member)
        })
        .collect();
    let listener_protocol = if udp {
        "udp"
    } else {
        spec.listener_protocol.as_str()
    };
    let listener = ListenerObject {
        uuid: None,
        name: listener_name(listener_protocol, port.port),
        protocol: listener_protocol.to_string(),
        protocol_port: port.port,
        allowed_cidrs: spec.allowed_cidrs.clone(),
        timeout_client_data_ms: spec.timeouts.client_data_ms,
        timeout_member_connect_ms: spec.timeouts.member_connect_ms,
        timeout_member_data_ms: spec.timeouts.member_data_ms,
        tags: tags.clone(),
    };
    PoolSet {
        pool,
        members,
        monitor: Some(monitor(spec, tags)),
        listener: Some(listener),
    }
}

/// The CCM's healthMonitorForPort: with traffic policy Local the monitor becomes an http
/// check of kube-proxy's `/livez`, unless the user configured the http options themselves.
fn monitor(spec: &CloudscaleLoadBalancerSpec, tags: &Tags) -> MonitorObject {
    let hm = &spec.health_monitor;
    let local = spec.traffic_policy == TrafficPolicy::Local;
    let kind = if local { MonitorType::Http } else { hm.kind };
    let http = match (&hm.http, local) {
        (Some(http), _) => Some(http.clone()),
        (None, true) => Some(HttpCheck::livez()),
        (None, false) => None,
    };
    // The API reports http options only for http/https monitors and fills in defaults.
    let http = matches!(kind, MonitorType::Http | MonitorType::Https)
        .then(|| http_object(&http.unwrap_or_default()));
    MonitorObject {
        uuid: None,
        kind: kind.as_str().to_string(),
        delay_s: hm.delay_s,
        timeout_s: hm.timeout_s,
        up_threshold: hm.up_threshold,
        down_threshold: hm.down_threshold,
        http,
        tags: tags.clone(),
    }
}

fn http_object(http: &HttpCheck) -> HttpObject {
    HttpObject {
        expected_codes: http.expected_codes.clone(),
        method: http.method.clone(),
        url_path: http.url_path.clone(),
        version: http.version.as_str().to_string(),
        host: http.host.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TrafficPolicy;
    use skyplan_core::model::ResourceKind;

    fn subnets() -> Vec<SubnetObject> {
        vec![SubnetObject {
            uuid: "6d0d7d4c-0000-4000-8000-000000000001".into(),
            cidr: "10.0.0.0/24".into(),
        }]
    }

    fn spec() -> CloudscaleLoadBalancerSpec {
        let mut spec = CloudscaleLoadBalancerSpec::with_defaults("hello-lb", "lpg1");
        spec.members = vec!["10.0.0.11".into(), "10.0.0.12".into()];
        spec.ports = vec![PortSpec {
            name: "http".into(),
            port: 80,
            protocol: PortProtocol::Tcp,
            node_port: 30080,
        }];
        spec
    }

    fn address() -> Address {
        Address::new(ResourceKind::LoadBalancer, "hello")
    }

    #[test]
    fn names_objects_like_the_ccm() {
        assert_eq!(pool_name(PortProtocol::Tcp, ""), "tcp");
        assert_eq!(pool_name(PortProtocol::Udp, "dns"), "udp/dns");
        assert_eq!(member_name("10.0.0.1", 30080), "10.0.0.1:30080");
        assert_eq!(member_name("::1", 443), "[::1]:443");
        assert_eq!(listener_name("TCP", 80), "tcp/80");
    }

    #[test]
    fn one_pool_per_port_with_members_monitor_and_listener() {
        let objects = desired_objects(&address(), &spec(), &subnets()).unwrap();
        let set = &objects.pools["tcp/http"];
        assert_eq!(set.pool.algorithm, "round_robin");
        assert_eq!(
            set.members.keys().collect::<Vec<_>>(),
            ["10.0.0.11:30080", "10.0.0.12:30080"]
        );
        assert_eq!(set.listener.as_ref().unwrap().name, "tcp/80");
        assert_eq!(set.monitor.as_ref().unwrap().kind, "tcp");
        assert_eq!(objects.lb.tags[OWNER_TAG], "load-balancer.hello");
    }

    #[test]
    fn local_traffic_policy_monitors_livez_on_the_health_check_port() {
        let mut spec = spec();
        spec.traffic_policy = TrafficPolicy::Local;
        spec.health_check_node_port = Some(32000);
        let objects = desired_objects(&address(), &spec, &subnets()).unwrap();
        let set = &objects.pools["tcp/http"];
        let monitor = set.monitor.as_ref().unwrap();
        assert_eq!(monitor.kind, "http");
        assert_eq!(monitor.http.as_ref().unwrap().url_path, "/livez");
        assert!(set.members.values().all(|m| m.monitor_port == 32000));
    }

    #[test]
    fn allowed_subnets_filter_members_and_unknown_subnets_are_errors() {
        let mut spec = spec();
        spec.allowed_subnets = vec!["other".into()];
        let objects = desired_objects(&address(), &spec, &subnets()).unwrap();
        assert!(objects.pools["tcp/http"].members.is_empty());

        spec.members = vec!["192.168.1.1".into()];
        assert!(matches!(
            desired_objects(&address(), &spec, &subnets()),
            Err(DesiredError::MemberWithoutSubnet { .. })
        ));
    }
}
