//! A load balancer bound to a Service in direct mode: skyplan manages the cloud objects, but
//! the members and node ports come from the cluster, chosen the way the cloudscale CCM chooses
//! them (research/kubernetes.md §1.3-1.4). The result is an ordinary spec, so the cloudscale
//! diff and impact table classify a new node or a changed node port like any other change.

pub mod members;

use k8s_openapi::api::core::v1::{Node, Service};

use super::servers::ServerObject;
use crate::spec::{CloudscaleLoadBalancerSpec, PortSpec, TrafficPolicy};
use skyplan_kubernetes::spec::ServiceBinding;

/// What refresh read from the cluster for one bound load balancer.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    pub nodes: Vec<Node>,
    /// `None`: the Service does not exist.
    pub service: Option<Service>,
    /// This run's node policies change the node set the service controller hands the CCM
    /// (a node gains or loses the exclude label, say): the CCM updates the members then, even
    /// with nothing written to the Service.
    pub node_set_changes: bool,
    /// The node ports the cluster's Services hold, by holder `namespace/name`; read only for
    /// a controller-mode load balancer that configures a node-port (empty otherwise).
    pub node_ports_held: std::collections::BTreeMap<u16, String>,
}

/// Why a direct-mode binding cannot be planned without its Service.
pub fn missing_service(binding: &ServiceBinding) -> String {
    format!(
        "Service {} does not exist in {}: a load balancer bound to it takes its node ports from it (create the Service, or use mode = \"ccm\" to let skyplan write it)",
        binding.service_ref(),
        binding.cluster
    )
}

/// The spec with the cluster filled in: members are the chosen nodes' servers' private
/// addresses, node ports are the live Service's, and with `Local` the monitor port is the
/// Service's healthCheckNodePort.
pub fn resolve_direct(
    spec: &CloudscaleLoadBalancerSpec,
    view: &ClusterView,
    servers: &[ServerObject],
) -> Result<CloudscaleLoadBalancerSpec, String> {
    let binding = spec.binding.as_ref().expect("a bound load balancer");
    let service = view
        .service
        .as_ref()
        .ok_or_else(|| missing_service(binding))?;
    let mut resolved = spec.clone();
    resolved.members = members::member_addresses(spec, &view.nodes, servers)?;
    resolved.ports = spec
        .ports
        .iter()
        .map(|port| with_live_node_port(port, service, &binding.service_ref()))
        .collect::<Result<_, _>>()?;
    if spec.traffic_policy == TrafficPolicy::Local {
        resolved.health_check_node_port = health_check_node_port(service);
    }
    Ok(resolved)
}

/// The Service port's nodePort, matched by name, else by number (an unnamed single port).
fn with_live_node_port(
    port: &PortSpec,
    service: &Service,
    service_ref: &str,
) -> Result<PortSpec, String> {
    let live_ports = service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .map(Vec::as_slice)
        .unwrap_or_default();
    let by_name = live_ports
        .iter()
        .find(|p| !port.name.is_empty() && p.name.as_deref() == Some(port.name.as_str()));
    let live = by_name.or_else(|| live_ports.iter().find(|p| p.port == i32::from(port.port)));
    let node_port = live
        .and_then(|p| p.node_port)
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| *n != 0);
    match node_port {
        Some(node_port) => Ok(PortSpec {
            node_port,
            ..port.clone()
        }),
        None => Err(format!(
            "Service {service_ref} has no node port for port {} (is it of type NodePort or LoadBalancer?)",
            port.key()
        )),
    }
}

fn health_check_node_port(service: &Service) -> Option<u16> {
    service
        .spec
        .as_ref()
        .and_then(|s| s.health_check_node_port)
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| *n != 0)
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{Node, Service};
    use serde_json::json;

    use super::super::servers::{ServerAddress, ServerInterface, ServerObject};

    pub const SUBNET: &str = "6d0d7d4c-0000-4000-8000-000000000001";

    pub fn server(index: u8) -> ServerObject {
        ServerObject {
            uuid: format!("00000000-0000-4000-8000-00000000000{index}"),
            name: format!("node-{index}"),
            status: "running".into(),
            flavor: "flex-4-2".into(),
            zone: "lpg1".into(),
            interfaces: vec![
                ServerInterface {
                    kind: "public".into(),
                    addresses: vec![ServerAddress {
                        address: format!("5.102.145.{index}"),
                        subnet: Some("public".into()),
                    }],
                },
                ServerInterface {
                    kind: "private".into(),
                    addresses: vec![ServerAddress {
                        address: format!("10.0.0.1{index}"),
                        subnet: Some(SUBNET.into()),
                    }],
                },
            ],
        }
    }

    pub fn node(index: u8, labels: &[(&str, &str)]) -> Node {
        let labels: BTreeMap<&str, &str> = labels.iter().copied().collect();
        serde_json::from_value(json!({
            "metadata": {"name": format!("node-{index}"), "labels": labels},
            "spec": {"providerID": format!("cloudscale://00000000-0000-4000-8000-00000000000{index}")}
        }))
        .unwrap()
    }

    pub fn service(ports: &[(&str, i32, i32)], health_check: Option<i32>) -> Service {
        let ports: Vec<_> = ports
            .iter()
            .map(|(name, port, node_port)| json!({"name": name, "port": port, "protocol": "TCP", "nodePort": node_port}))
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "shop", "namespace": "default", "uid": "0a1b2c3d-0000-4000-8000-000000000099", "resourceVersion": "7"},
            "spec": {"type": "LoadBalancer", "ports": ports, "healthCheckNodePort": health_check}
        }))
        .unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::spec::PortProtocol;
    use skyplan_core::model::{Address, ResourceKind};
    use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

    fn bound_spec() -> CloudscaleLoadBalancerSpec {
        let mut spec = CloudscaleLoadBalancerSpec::with_defaults("shop", "lpg1");
        spec.ports = vec![PortSpec {
            name: "http".into(),
            port: 80,
            protocol: PortProtocol::Tcp,
            node_port: 0,
        }];
        spec.binding = Some(ServiceBinding {
            cluster: Address::new(ResourceKind::Cluster, "prod"),
            namespace: "default".into(),
            name: "shop".into(),
            mode: LbMode::Direct,
        });
        spec
    }

    fn view(service: Option<Service>) -> ClusterView {
        ClusterView {
            nodes: (1..=3).map(|i| node(i, &[])).collect(),
            service,
            node_set_changes: false,
            node_ports_held: Default::default(),
        }
    }

    #[test]
    fn members_are_the_nodes_private_addresses_on_the_services_node_ports() {
        let servers: Vec<_> = (1..=3).map(server).collect();
        let view = view(Some(service(&[("http", 80, 31080)], None)));
        let resolved = resolve_direct(&bound_spec(), &view, &servers).unwrap();
        assert_eq!(resolved.members, ["10.0.0.11", "10.0.0.12", "10.0.0.13"]);
        assert_eq!(resolved.ports[0].node_port, 31080);
        assert_eq!(resolved.health_check_node_port, None);
    }

    #[test]
    fn local_traffic_policy_monitors_the_health_check_node_port() {
        let mut spec = bound_spec();
        spec.traffic_policy = TrafficPolicy::Local;
        let servers: Vec<_> = (1..=3).map(server).collect();
        let view = view(Some(service(&[("http", 80, 31080)], Some(32100))));
        let resolved = resolve_direct(&spec, &view, &servers).unwrap();
        assert_eq!(resolved.health_check_node_port, Some(32100));
    }

    #[test]
    fn an_unnamed_port_is_matched_by_number_and_a_missing_service_is_an_error() {
        let mut spec = bound_spec();
        spec.ports[0].name = String::new();
        let servers: Vec<_> = (1..=3).map(server).collect();
        let resolved = resolve_direct(
            &spec,
            &view(Some(service(&[("", 80, 30555)], None))),
            &servers,
        )
        .unwrap();
        assert_eq!(resolved.ports[0].node_port, 30555);
        let error = resolve_direct(&spec, &view(None), &servers).unwrap_err();
        assert!(
            error.contains("Service default/shop does not exist"),
            "{error}"
        );
        let error = resolve_direct(
            &spec,
            &view(Some(service(&[("other", 81, 30555)], None))),
            &servers,
        )
        .unwrap_err();
        assert!(error.contains("no node port for port 80"), "{error}");
    }
}
