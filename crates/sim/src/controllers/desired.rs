//! `desiredLbState` (reconcile.go): what a Service and the servers behind its nodes ask of the
//! cloud. Pure, so the naming and defaulting rules are tested without any server.

use super::config::LbConfig;
use super::lbstate::{
    Desired, DesiredPool, HttpSpec, LbSpec, ListenerSpec, MemberSpec, MonitorSpec, PoolSpec, Vip,
};
use super::objects::{Server, Service, ServicePort};

/// `servers` are the nodes' servers, one per node, in node order.
pub fn desired_state(
    service: &Service,
    config: &LbConfig,
    servers: &[Server],
) -> Result<Desired, String> {
    let lb = LbSpec {
        name: config.name.clone(),
        flavor: config.flavor.clone(),
        zone: lb_zone(config, servers)?,
        vip_addresses: config
            .vip_addresses
            .iter()
            .map(|vip| Vip {
                address: vip.address.clone(),
                subnet: vip.subnet.clone(),
            })
            .collect(),
    };
    let pools = service
        .spec
        .ports
        .iter()
        .map(|port| desired_pool(service, config, servers, port))
        .collect::<Result<_, _>>()?;
    Ok(Desired {
        lb,
        pools,
        floating_ips: config.floating_ips.clone(),
    })
}

/// The annotation, else the servers' one zone.
fn lb_zone(config: &LbConfig, servers: &[Server]) -> Result<String, String> {
    if !config.zone.is_empty() {
        return Ok(config.zone.clone());
    }
    let mut zone = String::new();
    for server in servers {
        if !zone.is_empty() && zone != server.zone.slug {
            return Err("no loadbalancer zone set and nodes in multiple zones".into());
        }
        zone = server.zone.slug.clone();
    }
    Ok(zone)
}

fn port_protocol(service: &Service, port: &ServicePort) -> Result<&'static str, String> {
    match port.protocol.as_deref().unwrap_or("TCP") {
        "TCP" => Ok("tcp"),
        "UDP" => Ok("udp"),
        other => Err(format!(
            "service {}: cannot use {other} for {}, only TCP and UDP are supported",
            service.metadata.name, port.port
        )),
    }
}

fn desired_pool(
    service: &Service,
    config: &LbConfig,
    servers: &[Server],
    port: &ServicePort,
) -> Result<DesiredPool, String> {
    let protocol = port_protocol(service, port)?;
    let node_port = port.node_port.unwrap_or(0);
    if node_port == 0 {
        return Err(format!(
            "service {}: unknown port: {node_port}",
            service.metadata.name
        ));
    }
    let monitor_port = match service.spec.health_check_node_port {
        Some(hc) if service.is_local_traffic() && hc > 0 => hc,
        _ => node_port,
    };
    let pool_protocol = if protocol == "tcp" {
        config.pool_protocol.clone()
    } else {
        "udp".to_owned()
    };
    Ok(DesiredPool {
        pool: PoolSpec {
            name: pool_name(protocol, port.name.as_deref().unwrap_or("")),
            algorithm: config.pool_algorithm.clone(),
            protocol: pool_protocol,
        },
        members: members(config, servers, node_port, monitor_port),
        monitor: monitor(service, config),
        listener: listener(config, protocol, port.port),
    })
}

/// Every address with a subnet on every non-public interface, in server and interface order.
fn members(
    config: &LbConfig,
    servers: &[Server],
    node_port: u16,
    monitor_port: u16,
) -> Vec<MemberSpec> {
    let mut members = Vec::new();
    for server in servers {
        for interface in server.interfaces.iter().filter(|i| i.kind != "public") {
            for address in &interface.addresses {
                let Some(subnet) = address.subnet.as_ref().filter(|s| !s.uuid.is_empty()) else {
                    continue;
                };
                if !config.allowed_subnets.is_empty()
                    && !config.allowed_subnets.contains(&subnet.uuid)
                {
                    continue;
                }
                members.push(MemberSpec {
                    name: member_name(&address.address, node_port),
                    enabled: true,
                    protocol_port: node_port,
                    monitor_port,
                    address: address.address.clone(),
                    subnet: subnet.clone(),
                });
            }
        }
    }
    members
}

/// `healthMonitorForPort`: ETP=Local forces an http monitor on `/livez` unless the user gave
/// http options, which then win (the CCM only logs a warning).
fn monitor(service: &Service, config: &LbConfig) -> MonitorSpec {
    let mut http = config.monitor_http.as_ref().map(|h| HttpSpec {
        expected_codes: h.expected_codes.clone(),
        method: h.method.clone(),
        url_path: h.url_path.clone(),
        version: h.version.clone(),
        host: h.host.clone(),
    });
    let mut kind = config.monitor_type.clone();
    if service.is_local_traffic() {
        kind = "http".into();
        if http.is_none() {
            http = Some(HttpSpec {
                expected_codes: vec!["200".into()],
                method: "GET".into(),
                url_path: "/livez".into(),
                version: "1.0".into(),
                host: None,
            });
        }
    }
    MonitorSpec {
        kind,
        delay_s: config.monitor_delay_s,
        timeout_s: config.monitor_timeout_s,
        up_threshold: config.monitor_up_threshold,
        down_threshold: config.monitor_down_threshold,
        http,
    }
}

fn listener(config: &LbConfig, port_protocol: &str, port: u16) -> ListenerSpec {
    let protocol = if port_protocol == "tcp" {
        config.listener_protocol.clone()
    } else {
        "udp".to_owned()
    };
    ListenerSpec {
        name: format!("{protocol}/{port}").to_lowercase(),
        protocol,
        protocol_port: port,
        allowed_cidrs: config.allowed_cidrs.clone(),
        timeout_client_data_ms: config.timeout_client_data_ms,
        timeout_member_connect_ms: config.timeout_member_connect_ms,
        timeout_member_data_ms: config.timeout_member_data_ms,
    }
}

/// `tcp`, or `tcp/<port name>`.
pub fn pool_name(protocol: &str, port_name: &str) -> String {
    if port_name.is_empty() {
        protocol.to_owned()
    } else {
        format!("{protocol}/{port_name}")
    }
}

/// `addr:port`, IPv6 in brackets.
pub fn member_name(address: &str, port: u16) -> String {
    if address.contains(':') {
        format!("[{address}]:{port}")
    } else {
        format!("{address}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::PREFIX;
    use super::super::objects::{Interface, InterfaceAddress, Slug, SubnetRef};
    use super::*;

    pub fn server(name: &str, zone: &str, private: &[&str]) -> Server {
        let subnet = SubnetRef {
            href: "http://sim/v1/subnets/s-1".into(),
            uuid: "s-1".into(),
            cidr: "10.0.0.0/24".into(),
        };
        Server {
            uuid: format!("uuid-{name}"),
            name: name.into(),
            status: "running".into(),
            flavor: Slug {
                slug: "flex-4-2".into(),
            },
            zone: Slug { slug: zone.into() },
            interfaces: vec![
                Interface {
                    kind: "public".into(),
                    addresses: vec![InterfaceAddress {
                        version: 4,
                        address: "5.102.144.7".into(),
                        subnet: Some(SubnetRef {
                            href: "p".into(),
                            uuid: "public".into(),
                            cidr: "5.102.144.0/22".into(),
                        }),
                    }],
                },
                Interface {
                    kind: "private".into(),
                    addresses: private
                        .iter()
                        .map(|a| InterfaceAddress {
                            version: if a.contains(':') { 6 } else { 4 },
                            address: a.to_string(),
                            subnet: Some(subnet.clone()),
                        })
                        .collect(),
                },
            ],
        }
    }

    fn service(ports: &[(&str, u16, u16)], annotations: &[(&str, &str)]) -> Service {
        let mut service = Service::default();
        service.metadata.name = "web".into();
        service.metadata.uid = Some("uid-1".into());
        service.spec.kind = Some("LoadBalancer".into());
        for (k, v) in annotations {
            service
                .metadata
                .annotations
                .insert(format!("{PREFIX}{k}"), v.to_string());
        }
        service.spec.ports = ports
            .iter()
            .map(|(name, port, node_port)| ServicePort {
                name: (!name.is_empty()).then(|| name.to_string()),
                protocol: Some("TCP".into()),
                port: *port,
                node_port: Some(*node_port),
            })
            .collect();
        service
    }

    fn desired(service: &Service, servers: &[Server]) -> Result<Desired, String> {
        desired_state(service, &LbConfig::from_service(service)?, servers)
    }

    #[test]
    fn one_pool_listener_and_monitor_per_port_named_as_the_ccm_names_them() {
        let svc = service(&[("", 80, 30080), ("https", 443, 30443)], &[]);
        let servers = [server("n1", "lpg1", &["10.0.0.5"])];
        let state = desired(&svc, &servers).unwrap();
        assert_eq!(state.lb.name, "k8s-service-uid-1");
        assert_eq!(state.lb.zone, "lpg1");
        let names: Vec<_> = state.pools.iter().map(|p| p.pool.name.as_str()).collect();
        assert_eq!(names, ["tcp", "tcp/https"]);
        let listeners: Vec<_> = state
            .pools
            .iter()
            .map(|p| p.listener.name.as_str())
            .collect();
        assert_eq!(listeners, ["tcp/80", "tcp/443"]);
        let first = &state.pools[0];
        assert_eq!(first.pool.algorithm, "round_robin");
        assert_eq!(first.monitor.kind, "tcp");
        assert_eq!(first.monitor.http, None);
        assert_eq!(first.members.len(), 1, "public interfaces give no member");
        assert_eq!(first.members[0].name, "10.0.0.5:30080");
        assert_eq!(first.members[0].monitor_port, 30080);
    }

    #[test]
    fn local_traffic_policy_monitors_the_health_check_port_over_http_livez() {
        let mut svc = service(&[("", 80, 30080)], &[]);
        svc.spec.external_traffic_policy = Some("Local".into());
        svc.spec.health_check_node_port = Some(32000);
        let state = desired(&svc, &[server("n1", "lpg1", &["10.0.0.5"])]).unwrap();
        let pool = &state.pools[0];
        assert_eq!(pool.members[0].monitor_port, 32000);
        assert_eq!(pool.members[0].protocol_port, 30080);
        assert_eq!(pool.monitor.kind, "http");
        let http = pool.monitor.http.as_ref().unwrap();
        assert_eq!(
            (http.url_path.as_str(), http.version.as_str()),
            ("/livez", "1.0")
        );
    }

    #[test]
    fn user_http_options_win_over_livez() {
        let mut svc = service(
            &[("", 80, 30080)],
            &[("health-monitor-http", r#"{"url_path":"/ok"}"#)],
        );
        svc.spec.external_traffic_policy = Some("Local".into());
        let state = desired(&svc, &[server("n1", "lpg1", &["10.0.0.5"])]).unwrap();
        let http = state.pools[0].monitor.http.clone().unwrap();
        assert_eq!(
            (http.url_path.as_str(), http.version.as_str()),
            ("/ok", "1.1")
        );
    }

    #[test]
    fn annotations_shape_pools_listeners_and_members() {
        let svc = service(
            &[("", 80, 30080)],
            &[
                ("pool-algorithm", "least_connections"),
                ("pool-protocol", "proxy"),
                ("listener-allowed-cidrs", r#"["10.1.0.0/16"]"#),
                ("listener-allowed-subnets", r#"["other"]"#),
                ("timeout-client-data-ms", "7"),
            ],
        );
        let state = desired(&svc, &[server("n1", "lpg1", &["10.0.0.5"])]).unwrap();
        let pool = &state.pools[0];
        assert_eq!(pool.pool.algorithm, "least_connections");
        assert_eq!(pool.pool.protocol, "proxy");
        assert_eq!(pool.listener.allowed_cidrs, vec!["10.1.0.0/16"]);
        assert_eq!(pool.listener.timeout_client_data_ms, 7);
        assert!(pool.members.is_empty(), "subnet s-1 is not allowed");
    }

    #[test]
    fn udp_ports_force_udp_and_ipv6_members_are_bracketed() {
        let mut svc = service(&[("dns", 53, 30053)], &[("pool-protocol", "proxy")]);
        svc.spec.ports[0].protocol = Some("UDP".into());
        let state = desired(&svc, &[server("n1", "lpg1", &["fd00::5"])]).unwrap();
        let pool = &state.pools[0];
        assert_eq!(pool.pool.name, "udp/dns");
        assert_eq!(pool.pool.protocol, "udp");
        assert_eq!(pool.listener.name, "udp/53");
        assert_eq!(pool.members[0].name, "[fd00::5]:30053");
    }

    #[test]
    fn refusals_sctp_missing_node_port_and_mixed_zones() {
        let mut sctp = service(&[("", 80, 30080)], &[]);
        sctp.spec.ports[0].protocol = Some("SCTP".into());
        assert!(desired(&sctp, &[]).is_err());
        let no_node_port = service(&[("", 80, 0)], &[]);
        assert!(desired(&no_node_port, &[])
            .unwrap_err()
            .contains("unknown port"));
        let svc = service(&[("", 80, 30080)], &[]);
        let mixed = [server("a", "lpg1", &[]), server("b", "rma1", &[])];
        assert!(desired(&svc, &mixed)
            .unwrap_err()
            .contains("multiple zones"));
        let pinned = service(&[("", 80, 30080)], &[("zone", "rma1")]);
        assert_eq!(desired(&pinned, &mixed).unwrap().lb.zone, "rma1");
    }
}
