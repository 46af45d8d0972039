//! The Service skyplan writes in controller mode (research §1.3-1.7): type LoadBalancer, one
//! port per rule (targetPort = port), sessionAffinity from the algorithm, the CCM's
//! `service.beta.kubernetes.io/cloudstack-load-balancer-*` annotations, the firewall's
//! loadBalancerSourceRanges and a fixed public IP as loadBalancerIP. The body is a JSON merge
//! patch: a `null` removes an annotation skyplan no longer wants, and the CCM's own
//! `ip-associated-by-controller` is never mentioned, so it is kept.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use serde_json::{json, Value};

use super::names::service_port_name;
use crate::spec::{CloudstackLoadBalancerSpec, CsAlgorithm, CsProtocol, PublicIp};
use skyplan_kubernetes::spec::ServiceBinding;

pub const PROXY_PROTOCOL: &str =
    "service.beta.kubernetes.io/cloudstack-load-balancer-proxy-protocol";
pub const SOURCE_CIDRS: &str = "service.beta.kubernetes.io/cloudstack-load-balancer-source-cidrs";
/// Written by the CCM v1.2.0 itself when it associated the public IP; never by skyplan.
pub const IP_ASSOCIATED: &str =
    "service.beta.kubernetes.io/cloudstack-load-balancer-ip-associated-by-controller";

/// What skyplan manages of a Service in CloudStack controller mode.
pub const MANAGED: skyplan_kubernetes::service_write::ManagedAnnotations =
    skyplan_kubernetes::service_write::ManagedAnnotations {
        prefix: "service.beta.kubernetes.io/cloudstack-load-balancer-",
        controller_owned: &[IP_ASSOCIATED],
    };

/// The annotations skyplan owns; `None` means absent (the CCM's default).
pub fn desired_annotations(spec: &CloudstackLoadBalancerSpec) -> BTreeMap<String, Option<String>> {
    let proxy = spec
        .ports
        .iter()
        .any(|p| p.protocol == CsProtocol::TcpProxy);
    // Absent means 0.0.0.0/0 to the CCM, which is what an empty allowed-cidrs means here.
    let cidrs = (!spec.allowed_cidrs.is_empty()).then(|| spec.allowed_cidrs.join(","));
    BTreeMap::from([
        (
            PROXY_PROTOCOL.to_string(),
            proxy.then(|| "true".to_string()),
        ),
        (SOURCE_CIDRS.to_string(), cidrs),
    ])
}

pub fn session_affinity(algorithm: CsAlgorithm) -> &'static str {
    match algorithm {
        CsAlgorithm::Source => "ClientIP",
        // leastconn is refused by the config in controller mode.
        CsAlgorithm::RoundRobin | CsAlgorithm::LeastConn => "None",
    }
}

fn wire_protocol(protocol: CsProtocol) -> &'static str {
    match protocol {
        CsProtocol::Udp => "UDP",
        CsProtocol::Tcp | CsProtocol::TcpProxy => "TCP",
    }
}

fn load_balancer_ip(spec: &CloudstackLoadBalancerSpec) -> Option<&str> {
    match &spec.public_ip {
        PublicIp::Address(address) => Some(address),
        PublicIp::Auto => None,
    }
}

/// The merge patch, or for a missing Service the object to create.
pub fn desired_body(
    spec: &CloudstackLoadBalancerSpec,
    binding: &ServiceBinding,
    create: bool,
) -> Value {
    let annotations: serde_json::Map<String, Value> = desired_annotations(spec)
        .into_iter()
        .filter(|(_, v)| !create || v.is_some())
        .map(|(k, v)| (k, v.map_or(Value::Null, Value::String)))
        .collect();
    let ports: Vec<Value> = spec
        .ports
        .iter()
        .map(|p| {
            let mut port = json!({
                "name": service_port_name(p.protocol, p.port),
                "protocol": wire_protocol(p.protocol),
                "port": p.port,
                "targetPort": p.port,
            });
            // Without one the apiserver allocates the node port (and keeps it by name).
            if let Some(node_port) = explicit_node_port(p.node_port) {
                port["nodePort"] = json!(node_port);
            }
            port
        })
        .collect();
    let mut body = json!({
        "metadata": {"annotations": annotations},
        "spec": {
            "type": "LoadBalancer",
            "ports": ports,
            "sessionAffinity": session_affinity(spec.algorithm),
            "loadBalancerSourceRanges": spec.firewall_cidrs,
            "loadBalancerIP": load_balancer_ip(spec),
        },
    });
    if create {
        body["apiVersion"] = json!("v1");
        body["kind"] = json!("Service");
        body["metadata"]["name"] = json!(binding.name);
        body["metadata"]["namespace"] = json!(binding.namespace);
        if load_balancer_ip(spec).is_none() {
            body["spec"]
                .as_object_mut()
                .expect("an object")
                .remove("loadBalancerIP");
        }
    }
    body
}

/// The `node-port` of the config; 0 means "left to the apiserver".
pub fn explicit_node_port(node_port: u16) -> Option<u16> {
    (node_port != 0).then_some(node_port)
}

/// One difference between the written and the live Service.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceChange {
    pub path: String,
    pub before: Value,
    pub after: Value,
}

/// What writing the desired Service would change on the live one (empty: nothing to write).
pub fn service_changes(spec: &CloudstackLoadBalancerSpec, live: &Service) -> Vec<ServiceChange> {
    let mut changes = Vec::new();
    let mut differs = |path: &str, before: Value, after: Value| {
        if before != after {
            changes.push(ServiceChange {
                path: path.to_string(),
                before,
                after,
            });
        }
    };
    let live_annotations = live.metadata.annotations.clone().unwrap_or_default();
    for (key, want) in desired_annotations(spec) {
        let path = format!("service.annotations.{key}");
        differs(&path, json!(live_annotations.get(&key)), json!(want));
    }
    let live_spec = live.spec.clone().unwrap_or_default();
    differs(
        "service.type",
        json!(live_spec.type_),
        json!("LoadBalancer"),
    );
    let affinity = live_spec.session_affinity.unwrap_or_else(|| "None".into());
    let want_affinity = session_affinity(spec.algorithm);
    differs(
        "service.sessionAffinity",
        json!(affinity),
        json!(want_affinity),
    );
    let ranges = live_spec.load_balancer_source_ranges.unwrap_or_default();
    differs(
        "service.loadBalancerSourceRanges",
        json!(ranges),
        json!(spec.firewall_cidrs),
    );
    let want_ip = load_balancer_ip(spec);
    let live_ip = live_spec.load_balancer_ip.filter(|ip| !ip.is_empty());
    differs("service.loadBalancerIP", json!(live_ip), json!(want_ip));
    let want_ports: Vec<Value> = spec
        .ports
        .iter()
        .map(|p| {
            let name = service_port_name(p.protocol, p.port);
            port_value(&name, p.port, wire_protocol(p.protocol), json!(p.port))
        })
        .collect();
    differs(
        "service.ports",
        json!(live_port_values(live)),
        json!(want_ports),
    );
    let live_node_ports = live_node_ports(Some(live));
    for port in &spec.ports {
        let Some(wanted) = explicit_node_port(port.node_port) else {
            continue;
        };
        let name = service_port_name(port.protocol, port.port);
        let path = format!("service.ports.{name}.nodePort");
        differs(&path, json!(live_node_ports.get(&name)), json!(wanted));
    }
    changes
}

/// A Service port as the Service spells it (the node port aside: compared on its own).
fn port_value(name: &str, port: u16, protocol: &str, target: Value) -> Value {
    json!({"name": name, "port": port, "protocol": protocol, "targetPort": target})
}

fn live_port_values(live: &Service) -> Vec<Value> {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let ports = live.spec.as_ref().and_then(|s| s.ports.clone());
    ports
        .unwrap_or_default()
        .into_iter()
        .map(|p| {
            let target = match p.target_port {
                Some(IntOrString::Int(n)) => json!(n),
                Some(IntOrString::String(s)) => json!(s),
                None => json!(p.port),
            };
            let protocol = p.protocol.unwrap_or_else(|| "TCP".into());
            let name = p.name.unwrap_or_default();
            let port = u16::try_from(p.port).unwrap_or_default();
            port_value(&name, port, &protocol, target)
        })
        .collect()
}

/// The live node port of each Service port, by port name (the apiserver keeps them by name).
pub fn live_node_ports(live: Option<&Service>) -> BTreeMap<String, u16> {
    let ports = live
        .and_then(|s| s.spec.as_ref())
        .and_then(|s| s.ports.clone())
        .unwrap_or_default();
    ports
        .into_iter()
        .filter_map(|p| {
            let node_port = u16::try_from(p.node_port?).ok().filter(|n| *n != 0)?;
            Some((p.name.unwrap_or_default(), node_port))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{CsMembers, CsPort};
    use skyplan_core::model::{Address, ResourceKind};
    use skyplan_kubernetes::spec::LbMode;

    pub(crate) fn spec() -> CloudstackLoadBalancerSpec {
        CloudstackLoadBalancerSpec {
            name: "web".into(),
            description: None,
            public_ip: PublicIp::Auto,
            network: None,
            members: CsMembers::Cluster("prod".into()),
            algorithm: CsAlgorithm::Source,
            allowed_cidrs: vec!["10.0.0.0/8".into(), "192.0.2.0/24".into()],
            firewall_cidrs: vec!["0.0.0.0/0".into()],
            ports: vec![CsPort {
                port: 443,
                protocol: CsProtocol::TcpProxy,
                node_port: 0,
            }],
            binding: Some(binding()),
        }
    }

    fn binding() -> ServiceBinding {
        ServiceBinding {
            cluster: Address::new(ResourceKind::Cluster, "prod"),
            namespace: "default".into(),
            name: "web".into(),
            mode: LbMode::Ccm,
        }
    }

    #[test]
    fn the_body_carries_what_the_ccm_reads() {
        let body = desired_body(&spec(), &binding(), false);
        let annotations = &body["metadata"]["annotations"];
        assert_eq!(annotations[PROXY_PROTOCOL], "true");
        assert_eq!(annotations[SOURCE_CIDRS], "10.0.0.0/8,192.0.2.0/24");
        assert_eq!(body["spec"]["sessionAffinity"], "ClientIP");
        assert_eq!(
            body["spec"]["ports"],
            json!([{"name": "tcp-443", "protocol": "TCP", "port": 443, "targetPort": 443}])
        );
        assert_eq!(
            body["spec"]["loadBalancerSourceRanges"],
            json!(["0.0.0.0/0"])
        );
        assert_eq!(body["spec"]["loadBalancerIP"], Value::Null);
    }

    #[test]
    fn defaults_are_removed_on_patch_and_left_out_on_create() {
        let mut plain = spec();
        plain.ports[0].protocol = CsProtocol::Tcp;
        plain.allowed_cidrs.clear();
        plain.algorithm = CsAlgorithm::RoundRobin;
        plain.public_ip = PublicIp::Address("203.0.113.10".into());
        let patch = desired_body(&plain, &binding(), false);
        assert_eq!(
            patch["metadata"]["annotations"][PROXY_PROTOCOL],
            Value::Null
        );
        assert_eq!(patch["spec"]["sessionAffinity"], "None");
        assert_eq!(patch["spec"]["loadBalancerIP"], "203.0.113.10");
        let created = desired_body(&plain, &binding(), true);
        assert_eq!(created["metadata"]["annotations"], json!({}));
        assert_eq!(created["metadata"]["name"], "web");
    }

    #[test]
    fn a_node_port_is_written_and_compared_only_when_the_config_sets_it() {
        let mut fixed = spec();
        fixed.ports[0].node_port = 30443;
        let body = desired_body(&fixed, &binding(), true);
        assert_eq!(body["spec"]["ports"][0]["nodePort"], 30443);
        let mut live: Service = serde_json::from_value(body).unwrap();
        assert_eq!(service_changes(&fixed, &live), vec![]);
        let allocated = &mut live.spec.as_mut().unwrap().ports.as_mut().unwrap()[0];
        allocated.node_port = Some(31000);
        let changes = service_changes(&fixed, &live);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].path, "service.ports.tcp-443.nodePort");
        assert_eq!(
            service_changes(&spec(), &live),
            vec![],
            "left to the apiserver"
        );
        let body = desired_body(&spec(), &binding(), false);
        assert!(body["spec"]["ports"][0].get("nodePort").is_none());
    }

    #[test]
    fn changes_name_the_fields_that_differ_and_none_once_written() {
        let body = desired_body(&spec(), &binding(), true);
        let mut live: Service = serde_json::from_value(body).unwrap();
        assert_eq!(service_changes(&spec(), &live), vec![]);
        live.spec.as_mut().unwrap().session_affinity = Some("None".into());
        let changes = service_changes(&spec(), &live);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].path, "service.sessionAffinity");
    }
}
