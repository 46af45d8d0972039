//! What the CCM reads from a Service, and the pure functions of v1.2.0 over it (research
//! §1.2-§1.4): the load balancer's and rules' names, the protocol of a port, the algorithm
//! from session affinity, the rule's source CIDRs from the annotation.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

pub const PROXY_PROTOCOL: &str =
    "service.beta.kubernetes.io/cloudstack-load-balancer-proxy-protocol";
pub const HOSTNAME: &str = "service.beta.kubernetes.io/cloudstack-load-balancer-hostname";
pub const SOURCE_CIDRS: &str = "service.beta.kubernetes.io/cloudstack-load-balancer-source-cidrs";
pub const IP_ASSOCIATED: &str =
    "service.beta.kubernetes.io/cloudstack-load-balancer-ip-associated-by-controller";
/// The rule's cidrlist when the annotation is absent.
const DEFAULT_CIDR: &str = "0.0.0.0/0";

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct CsService {
    pub metadata: CsMeta,
    pub spec: CsServiceSpec,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct CsMeta {
    pub name: String,
    pub namespace: Option<String>,
    pub uid: String,
    pub annotations: BTreeMap<String, String>,
    pub finalizers: Vec<String>,
    pub deletion_timestamp: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct CsServiceSpec {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub load_balancer_class: Option<String>,
    pub ports: Vec<CsPort>,
    pub session_affinity: Option<String>,
    #[serde(rename = "loadBalancerIP")]
    pub load_balancer_ip: Option<String>,
    pub load_balancer_source_ranges: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct CsPort {
    pub protocol: Option<String>,
    pub port: u16,
    pub node_port: Option<u16>,
}

impl CsService {
    pub fn from_json(raw: &Value) -> Option<CsService> {
        serde_json::from_value(raw.clone()).ok()
    }

    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace(), self.metadata.name)
    }

    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }

    pub fn path(&self) -> String {
        format!(
            "/api/v1/namespaces/{}/services/{}",
            self.namespace(),
            self.metadata.name
        )
    }

    pub fn wants_load_balancer(&self) -> bool {
        self.spec.kind.as_deref() == Some("LoadBalancer") && self.spec.load_balancer_class.is_none()
    }

    /// `spec.loadBalancerIP`, empty meaning unset as in Go.
    pub fn requested_ip(&self) -> Option<&str> {
        self.spec
            .load_balancer_ip
            .as_deref()
            .filter(|ip| !ip.is_empty())
    }

    /// `getBoolFromServiceAnnotation`: only "true" and "false" count, anything else is the
    /// default.
    pub fn bool_annotation(&self, key: &str, default: bool) -> bool {
        match self.metadata.annotations.get(key).map(String::as_str) {
            Some("true") => true,
            Some("false") => false,
            _ => default,
        }
    }

    /// The hostname annotation, reported instead of the IP when set.
    pub fn hostname(&self) -> Option<&str> {
        self.metadata
            .annotations
            .get(HOSTNAME)
            .map(String::as_str)
            .filter(|h| !h.is_empty())
    }
}

/// `DefaultLoadBalancerName`: "a" + the UID without dashes, cut to 32 bytes.
pub fn load_balancer_name(uid: &str) -> String {
    let mut name: String = format!("a{uid}").chars().filter(|c| *c != '-').collect();
    name.truncate(32);
    name
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
    TcpProxy,
}

impl Protocol {
    /// `CSProtocol()`: what the rule is created with and named after.
    pub fn cs(self) -> &'static str {
        match self {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
            Protocol::TcpProxy => "tcp-proxy",
        }
    }

    /// `IPProtocol()`: the firewall rule's protocol (tcp-proxy is tcp on the wire).
    pub fn ip(self) -> &'static str {
        match self {
            Protocol::Udp => "udp",
            Protocol::Tcp | Protocol::TcpProxy => "tcp",
        }
    }

    /// `ProtocolFromLoadBalancer`: a rule's protocol read back.
    pub fn from_cs(text: &str) -> Option<Protocol> {
        match text {
            "tcp" => Some(Protocol::Tcp),
            "udp" => Some(Protocol::Udp),
            "tcp-proxy" => Some(Protocol::TcpProxy),
            _ => None,
        }
    }
}

/// `ProtocolFromServicePort`: TCP (the default) becomes tcp-proxy with the annotation; UDP
/// stays; anything else (SCTP) is unsupported.
pub fn port_protocol(port: &CsPort, service: &CsService) -> Result<Protocol, String> {
    let proxy = service.bool_annotation(PROXY_PROTOCOL, false);
    match port.protocol.as_deref().unwrap_or("TCP") {
        "TCP" if proxy => Ok(Protocol::TcpProxy),
        "TCP" => Ok(Protocol::Tcp),
        "UDP" => Ok(Protocol::Udp),
        other => Err(format!("unsupported load balancer protocol: {other}")),
    }
}

/// `<lb>-<protocol>-<port>`.
pub fn rule_name(lb_name: &str, protocol: Protocol, port: u16) -> String {
    format!("{lb_name}-{}-{port}", protocol.cs())
}

/// The switch on `spec.sessionAffinity` (empty is None, the apiserver's default).
pub fn algorithm(service: &CsService) -> Result<&'static str, String> {
    match service.spec.session_affinity.as_deref().unwrap_or("None") {
        "None" | "" => Ok("roundrobin"),
        "ClientIP" => Ok("source"),
        other => Err(format!("unsupported load balancer affinity: {other}")),
    }
}

/// `getCIDRList`: absent → 0.0.0.0/0; present but empty → no entries; otherwise each
/// comma-separated entry trimmed and parsed as a CIDR.
pub fn rule_cidrs(service: &CsService) -> Result<Vec<String>, String> {
    let Some(text) = service.metadata.annotations.get(SOURCE_CIDRS) else {
        return Ok(vec![DEFAULT_CIDR.into()]);
    };
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(str::trim)
        .map(|cidr| match cidr.parse::<ipnet::IpNet>() {
            Ok(_) => Ok(cidr.to_owned()),
            Err(e) => Err(format!(
                "invalid CIDR {cidr} in annotation {SOURCE_CIDRS}: {e}"
            )),
        })
        .collect()
}

/// The firewall rule's CIDRs: `loadBalancerSourceRanges`, or everyone when empty.
pub fn firewall_cidrs(service: &CsService) -> Vec<String> {
    if service.spec.load_balancer_source_ranges.is_empty() {
        vec![DEFAULT_CIDR.into()]
    } else {
        service.spec.load_balancer_source_ranges.clone()
    }
}

/// `compareStringSlice`: equal as multisets.
pub fn same_multiset(a: &[String], b: &[String]) -> bool {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort();
    b.sort();
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn service(annotations: Value, spec: Value) -> CsService {
        CsService::from_json(&json!({
            "metadata": {"name": "web", "uid": "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9", "annotations": annotations},
            "spec": spec,
        }))
        .unwrap()
    }

    #[test]
    fn the_name_drops_the_dashes_and_the_last_hex_digit() {
        let name = load_balancer_name("1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9");
        assert_eq!(name, "a1b2c3d4e5f6047188293a4b5c6d7e8f");
        assert_eq!(name.len(), 32);
        assert_eq!(
            rule_name(&name, Protocol::TcpProxy, 443),
            "a1b2c3d4e5f6047188293a4b5c6d7e8f-tcp-proxy-443"
        );
    }

    #[test]
    fn proxy_protocol_turns_only_tcp_ports_and_only_on_exactly_true() {
        let tcp = CsPort {
            protocol: Some("TCP".into()),
            port: 80,
            node_port: None,
        };
        let udp = CsPort {
            protocol: Some("UDP".into()),
            ..tcp.clone()
        };
        let on = service(json!({PROXY_PROTOCOL: "true"}), json!({}));
        assert_eq!(port_protocol(&tcp, &on), Ok(Protocol::TcpProxy));
        assert_eq!(port_protocol(&udp, &on), Ok(Protocol::Udp));
        let odd = service(json!({PROXY_PROTOCOL: "enabled"}), json!({}));
        assert_eq!(port_protocol(&tcp, &odd), Ok(Protocol::Tcp));
        let sctp = CsPort {
            protocol: Some("SCTP".into()),
            ..tcp
        };
        assert!(port_protocol(&sctp, &odd).is_err());
    }

    #[test]
    fn affinity_picks_the_algorithm() {
        let none = service(json!({}), json!({"sessionAffinity": "None"}));
        assert_eq!(algorithm(&none), Ok("roundrobin"));
        let client = service(json!({}), json!({"sessionAffinity": "ClientIP"}));
        assert_eq!(algorithm(&client), Ok("source"));
    }

    #[test]
    fn source_cidrs_absent_empty_and_listed() {
        let absent = service(json!({}), json!({}));
        assert_eq!(rule_cidrs(&absent).unwrap(), vec!["0.0.0.0/0"]);
        let empty = service(json!({SOURCE_CIDRS: ""}), json!({}));
        assert!(rule_cidrs(&empty).unwrap().is_empty());
        let listed = service(
            json!({SOURCE_CIDRS: "10.0.0.0/8, 192.168.0.0/16"}),
            json!({}),
        );
        assert_eq!(
            rule_cidrs(&listed).unwrap(),
            vec!["10.0.0.0/8", "192.168.0.0/16"]
        );
        let bad = service(json!({SOURCE_CIDRS: "10.0.0.0/33"}), json!({}));
        assert!(rule_cidrs(&bad)
            .unwrap_err()
            .starts_with("invalid CIDR 10.0.0.0/33"));
    }

    #[test]
    fn firewall_ranges_default_to_everyone() {
        let open = service(json!({}), json!({}));
        assert_eq!(firewall_cidrs(&open), vec!["0.0.0.0/0"]);
        let closed = service(
            json!({}),
            json!({"loadBalancerSourceRanges": ["10.0.0.0/8"]}),
        );
        assert_eq!(firewall_cidrs(&closed), vec!["10.0.0.0/8"]);
    }
}
