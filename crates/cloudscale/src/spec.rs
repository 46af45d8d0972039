//! What the config asks of cloudscale, resolved: the provider's settings and a load
//! balancer's desired state with the cloudscale CCM's defaults already applied (serialized into
//! the state as the last-applied attributes).

use serde::{Deserialize, Serialize};
use skyplan_core::config::Endpoint;

/// `[provider.cloudscale] max-concurrent-requests` when the config does not set it.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 16;

/// `[provider.cloudscale]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudscaleSettings {
    pub endpoint: Endpoint,
    /// The most API requests in flight at once (1-256).
    pub max_concurrent_requests: usize,
}

skyplan_core::wire_enum!(
    /// Pool balancing algorithm.
    Algorithm { RoundRobin => "round_robin", LeastConnections => "least_connections", SourceIp => "source_ip" }
);
skyplan_core::wire_enum!(
    /// Protocol between load balancer and members for TCP ports (UDP ports always use `udp`).
    PoolProtocol { Tcp => "tcp", Proxy => "proxy", ProxyV2 => "proxyv2" }
);
skyplan_core::wire_enum!(
    /// A Service port's protocol.
    PortProtocol { Tcp => "tcp", Udp => "udp" }
);
skyplan_core::wire_enum!(
    /// Listener protocol for TCP ports (UDP ports always get a `udp` listener).
    ListenerProtocol { Tcp => "tcp", Udp => "udp" }
);
skyplan_core::wire_enum!(
    /// Health-monitor type.
    MonitorType { Ping => "ping", Tcp => "tcp", Http => "http", Https => "https", TlsHello => "tls-hello", UdpConnect => "udp-connect" }
);
skyplan_core::wire_enum!(
    /// HTTP version of an http/https health monitor.
    HttpVersion { V1_0 => "1.0", V1_1 => "1.1" }
);
skyplan_core::wire_enum!(
    /// The Service's externalTrafficPolicy.
    TrafficPolicy { Cluster => "Cluster", Local => "Local" }
);
skyplan_core::wire_enum!(
    /// How the Service status reports the address (`ip-mode` annotation).
    IpMode { Proxy => "Proxy", Vip => "VIP" }
);

skyplan_core::choices!(
    Algorithm => "algorithm",
    PoolProtocol => "pool protocol",
    PortProtocol => "port protocol",
    ListenerProtocol => "listener protocol",
    MonitorType => "health-monitor type",
    HttpVersion => "HTTP version",
    TrafficPolicy => "traffic policy",
    IpMode => "IP mode",
);

/// A requested VIP address: a subnet UUID and optionally a fixed address in it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct VipAddress {
    pub subnet: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeouts {
    pub client_data_ms: u32,
    pub member_connect_ms: u32,
    pub member_data_ms: u32,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            client_data_ms: 50_000,
            member_connect_ms: 5_000,
            member_data_ms: 50_000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpCheck {
    pub method: String,
    pub url_path: String,
    pub expected_codes: Vec<String>,
    pub version: HttpVersion,
    /// `None` sends no Host header.
    pub host: Option<String>,
}

impl Default for HttpCheck {
    fn default() -> Self {
        HttpCheck {
            method: "GET".into(),
            url_path: "/".into(),
            expected_codes: vec!["200".into()],
            version: HttpVersion::V1_1,
            host: None,
        }
    }
}

impl HttpCheck {
    /// What the CCM configures for `externalTrafficPolicy: Local`: kube-proxy's `/livez`.
    pub fn livez() -> Self {
        HttpCheck {
            url_path: "/livez".into(),
            version: HttpVersion::V1_0,
            ..HttpCheck::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthMonitorSpec {
    #[serde(rename = "type")]
    pub kind: MonitorType,
    pub delay_s: u32,
    pub timeout_s: u32,
    pub up_threshold: u32,
    pub down_threshold: u32,
    /// Only meaningful for http/https monitors.
    pub http: Option<HttpCheck>,
}

impl Default for HealthMonitorSpec {
    fn default() -> Self {
        HealthMonitorSpec {
            kind: MonitorType::Tcp,
            delay_s: 2,
            timeout_s: 1,
            up_threshold: 2,
            down_threshold: 3,
            http: None,
        }
    }
}

/// One Service port: a pool, its members, monitor and listener on the load balancer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortSpec {
    /// May be empty (the Service port has no name); part of the pool name.
    pub name: String,
    pub port: u16,
    pub protocol: PortProtocol,
    /// 0 on a load balancer bound to a Service whose config gives none: the Service's node
    /// port for this port, read from the cluster.
    pub node_port: u16,
}

impl PortSpec {
    /// How the port is named in attribute paths: its name, or its number when unnamed.
    pub fn key(&self) -> String {
        if self.name.is_empty() {
            self.port.to_string()
        } else {
            self.name.clone()
        }
    }
}

/// Everything the config says about one load balancer, defaults resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloudscaleLoadBalancerSpec {
    pub name: String,
    pub flavor: String,
    pub zone: String,
    pub vip_addresses: Vec<VipAddress>,
    /// Floating IPs as CIDRs (`5.102.150.123/32`).
    pub floating_ips: Vec<String>,
    pub algorithm: Algorithm,
    pub pool_protocol: PoolProtocol,
    pub listener_protocol: ListenerProtocol,
    pub allowed_cidrs: Vec<String>,
    /// Subnet UUIDs members must be in; empty means every subnet.
    pub allowed_subnets: Vec<String>,
    pub timeouts: Timeouts,
    pub health_monitor: HealthMonitorSpec,
    pub traffic_policy: TrafficPolicy,
    /// The Service's healthCheckNodePort, used as monitor port with `Local`.
    pub health_check_node_port: Option<u16>,
    /// Reported in the Service status only; no cloud call.
    pub force_hostname: Option<String>,
    /// Reported in the Service status only; no cloud call.
    pub ip_mode: IpMode,
    /// Backend addresses (the nodes' private addresses).
    pub members: Vec<String>,
    /// The CCM's `loadbalancer-node-selector`: only matching nodes become members of a
    /// Service-bound load balancer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<String>,
    pub ports: Vec<PortSpec>,
    /// The Service this load balancer serves: in direct mode the members and node ports come
    /// from the cluster; in `ccm` mode skyplan writes the Service and the cloud controller
    /// changes the cloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<skyplan_kubernetes::spec::ServiceBinding>,
}

impl CloudscaleLoadBalancerSpec {
    /// A load balancer with the CCM's defaults and no ports or members.
    pub fn with_defaults(name: impl Into<String>, zone: impl Into<String>) -> Self {
        CloudscaleLoadBalancerSpec {
            name: name.into(),
            flavor: "lb-standard".into(),
            zone: zone.into(),
            vip_addresses: vec![],
            floating_ips: vec![],
            algorithm: Algorithm::RoundRobin,
            pool_protocol: PoolProtocol::Tcp,
            listener_protocol: ListenerProtocol::Tcp,
            allowed_cidrs: vec![],
            allowed_subnets: vec![],
            timeouts: Timeouts::default(),
            health_monitor: HealthMonitorSpec::default(),
            traffic_policy: TrafficPolicy::Cluster,
            health_check_node_port: None,
            force_hostname: None,
            ip_mode: IpMode::Proxy,
            members: vec![],
            node_selector: None,
            ports: vec![],
            binding: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_use_the_wire_spelling() {
        assert_eq!(Algorithm::parse("source_ip"), Some(Algorithm::SourceIp));
        assert_eq!(PoolProtocol::ProxyV2.as_str(), "proxyv2");
        assert_eq!(
            serde_json::to_string(&MonitorType::TlsHello).unwrap(),
            "\"tls-hello\""
        );
        assert_eq!(MonitorType::parse("bogus"), None);
    }

    #[test]
    fn unnamed_ports_are_keyed_by_number() {
        let port = PortSpec {
            name: String::new(),
            port: 80,
            protocol: PortProtocol::Tcp,
            node_port: 30080,
        };
        assert_eq!(port.key(), "80");
    }
}
