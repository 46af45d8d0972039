//! The Service skyplan writes in controller mode, and how it differs from the live one. The
//! body is a JSON merge patch: annotations merge key by key (a `null` removes one, and the
//! CCM's own uuid/config-version/zone are not mentioned, so they are kept), `spec.ports` is
//! replaced as a whole (targetPort = port; the apiserver keeps each nodePort by port name).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use serde_json::{json, Map, Value};

use super::annotations::desired_annotations;
use crate::spec::{CloudscaleLoadBalancerSpec, PortProtocol};
use skyplan_kubernetes::spec::ServiceBinding;

/// The merge patch (or, for a missing Service, the object to create).
pub fn desired_body(
    spec: &CloudscaleLoadBalancerSpec,
    binding: &ServiceBinding,
    create: bool,
) -> Value {
    let annotations: Map<String, Value> = desired_annotations(spec)
        .into_iter()
        .filter(|(_, v)| !create || v.is_some())
        .map(|(k, v)| (k, v.map_or(Value::Null, Value::String)))
        .collect();
    let ports: Vec<Value> = spec
        .ports
        .iter()
        .map(|p| {
            let mut port = json!({
                "protocol": wire_protocol(p.protocol),
                "port": p.port,
                "targetPort": p.port,
            });
            if !p.name.is_empty() {
                port["name"] = json!(p.name);
            }
            // Only a configured node port is sent; without one the apiserver keeps the port's
            // node port by name (or allocates one for a new name).
            if p.node_port != 0 {
                port["nodePort"] = json!(p.node_port);
            }
            port
        })
        .collect();
    let mut body = json!({
        "metadata": {"annotations": annotations},
        "spec": {
            "type": "LoadBalancer",
            "ports": ports,
            "externalTrafficPolicy": spec.traffic_policy.as_str(),
        },
    });
    if create {
        body["apiVersion"] = json!("v1");
        body["kind"] = json!("Service");
        body["metadata"]["name"] = json!(binding.name);
        body["metadata"]["namespace"] = json!(binding.namespace);
    }
    body
}

fn wire_protocol(protocol: PortProtocol) -> &'static str {
    match protocol {
        PortProtocol::Tcp => "TCP",
        PortProtocol::Udp => "UDP",
    }
}

/// One difference between the written and the live Service, config-shaped.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceChange {
    pub path: String,
    pub before: Value,
    pub after: Value,
}

/// What writing the desired Service would change on the live one (empty: nothing to write).
pub fn service_changes(spec: &CloudscaleLoadBalancerSpec, live: &Service) -> Vec<ServiceChange> {
    let mut changes = Vec::new();
    let live_annotations = live.metadata.annotations.clone().unwrap_or_default();
    for (key, want) in desired_annotations(spec) {
        let have = live_annotations.get(&key);
        if have != want.as_ref() {
            changes.push(ServiceChange {
                path: format!("service.annotations.{key}"),
                before: json!(have),
                after: json!(want),
            });
        }
    }
    let live_spec = live.spec.clone().unwrap_or_default();
    if live_spec.type_.as_deref() != Some("LoadBalancer") {
        changes.push(ServiceChange {
            path: "service.type".into(),
            before: json!(live_spec.type_),
            after: json!("LoadBalancer"),
        });
    }
    let live_policy = live_spec
        .external_traffic_policy
        .clone()
        .unwrap_or_else(|| "Cluster".into());
    if live_policy != spec.traffic_policy.as_str() {
        changes.push(ServiceChange {
            path: "service.externalTrafficPolicy".into(),
            before: json!(live_policy),
            after: json!(spec.traffic_policy.as_str()),
        });
    }
    let have_ports = live_ports(live);
    let want_ports: Vec<PortKey> = spec
        .ports
        .iter()
        .map(|p| PortKey {
            name: p.name.clone(),
            protocol: wire_protocol(p.protocol).into(),
            port: i32::from(p.port),
            target: i32::from(p.port).to_string(),
        })
        .collect();
    if have_ports != want_ports {
        changes.push(ServiceChange {
            path: "service.ports".into(),
            before: json!(have_ports.iter().map(PortKey::text).collect::<Vec<_>>()),
            after: json!(want_ports.iter().map(PortKey::text).collect::<Vec<_>>()),
        });
    }
    changes.extend(node_port_changes(spec, live));
    changes
}

/// A configured node port that differs from the live one of the same port name. An unset
/// node-port is no change: the apiserver keeps the live one.
fn node_port_changes(spec: &CloudscaleLoadBalancerSpec, live: &Service) -> Vec<ServiceChange> {
    let kept = live_node_ports(Some(live));
    spec.ports
        .iter()
        .filter(|p| p.node_port != 0)
        .filter(|p| kept.get(&p.name) != Some(&p.node_port))
        .map(|p| ServiceChange {
            path: format!("service.ports.{}.nodePort", p.key()),
            before: json!(kept.get(&p.name)),
            after: json!(p.node_port),
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PortKey {
    name: String,
    protocol: String,
    port: i32,
    target: String,
}

impl PortKey {
    fn text(&self) -> String {
        let name = if self.name.is_empty() { "" } else { &self.name };
        format!("{name}:{}/{}→{}", self.port, self.protocol, self.target)
    }
}

fn live_ports(live: &Service) -> Vec<PortKey> {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let ports = live
        .spec
        .as_ref()
        .and_then(|s| s.ports.clone())
        .unwrap_or_default();
    ports
        .into_iter()
        .map(|p| PortKey {
            name: p.name.unwrap_or_default(),
            protocol: p.protocol.unwrap_or_else(|| "TCP".into()),
            port: p.port,
            target: match p.target_port {
                Some(IntOrString::Int(n)) => n.to_string(),
                Some(IntOrString::String(s)) => s,
                None => p.port.to_string(),
            },
        })
        .collect()
}

/// Live node ports by port name, as the apiserver keeps them on update.
pub fn live_node_ports(live: Option<&Service>) -> BTreeMap<String, u16> {
    live.and_then(|s| s.spec.as_ref())
        .and_then(|s| s.ports.as_ref())
        .map(|ports| {
            ports
                .iter()
                .filter_map(|p| {
                    let node_port = u16::try_from(p.node_port?).ok()?;
                    Some((p.name.clone().unwrap_or_default(), node_port))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::super::binding::test_support::service;
    use super::*;
    use crate::spec::PortSpec;
    use skyplan_core::model::{Address, ResourceKind};
    use skyplan_kubernetes::spec::LbMode;

    fn spec() -> (CloudscaleLoadBalancerSpec, ServiceBinding) {
        let mut spec = CloudscaleLoadBalancerSpec::with_defaults("shop", "lpg1");
        spec.ports = vec![PortSpec {
            name: "http".into(),
            port: 80,
            protocol: PortProtocol::Tcp,
            node_port: 0,
        }];
        let binding = ServiceBinding {
            cluster: Address::new(ResourceKind::Cluster, "prod"),
            namespace: "default".into(),
            name: "shop".into(),
            mode: LbMode::Ccm,
        };
        (spec, binding)
    }

    #[test]
    fn the_patch_removes_defaulted_annotations_and_never_names_the_ccms_own() {
        let (spec, binding) = spec();
        let body = desired_body(&spec, &binding, false);
        let annotations = body["metadata"]["annotations"].as_object().unwrap();
        assert_eq!(annotations["k8s.cloudscale.ch/loadbalancer-name"], "shop");
        assert_eq!(
            annotations["k8s.cloudscale.ch/loadbalancer-flavor"],
            Value::Null
        );
        assert!(!annotations.contains_key("k8s.cloudscale.ch/loadbalancer-uuid"));
        assert!(!annotations.contains_key("k8s.cloudscale.ch/loadbalancer-zone"));
        assert_eq!(
            body["spec"]["ports"],
            json!([{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 80}])
        );
        assert_eq!(body["spec"]["externalTrafficPolicy"], "Cluster");
        let created = desired_body(&spec, &binding, true);
        assert_eq!(created["metadata"]["name"], "shop");
        assert!(!created["metadata"]["annotations"]
            .as_object()
            .unwrap()
            .contains_key("k8s.cloudscale.ch/loadbalancer-flavor"));
    }

    #[test]
    fn changes_name_the_service_fields_that_differ() {
        let (spec, _) = spec();
        let mut live = service(&[("http", 80, 31080)], None);
        live.metadata.annotations = Some(
            [(
                "k8s.cloudscale.ch/loadbalancer-name".to_string(),
                "shop".to_string(),
            )]
            .into(),
        );
        live.spec.as_mut().unwrap().external_traffic_policy = Some("Cluster".into());
        assert_eq!(service_changes(&spec, &live), vec![]);
        let mut renamed = spec.clone();
        renamed.ports[0].name = "web".into();
        let changes = service_changes(&renamed, &live);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].path, "service.ports");
        assert_eq!(live_node_ports(Some(&live))["http"], 31080);
    }

    #[test]
    fn a_configured_node_port_is_written_and_compared_and_an_unset_one_left_to_the_apiserver() {
        let (mut spec, binding) = spec();
        let body = desired_body(&spec, &binding, false);
        assert!(body["spec"]["ports"][0].get("nodePort").is_none());
        let mut live = service(&[("http", 80, 31080)], None);
        live.metadata.annotations = Some(
            [(
                "k8s.cloudscale.ch/loadbalancer-name".to_string(),
                "shop".to_string(),
            )]
            .into(),
        );
        spec.ports[0].node_port = 31080;
        assert_eq!(service_changes(&spec, &live), vec![], "same node port");
        spec.ports[0].node_port = 32000;
        let body = desired_body(&spec, &binding, false);
        assert_eq!(body["spec"]["ports"][0]["nodePort"], 32000);
        assert_eq!(
            service_changes(&spec, &live),
            vec![ServiceChange {
                path: "service.ports.http.nodePort".into(),
                before: json!(31080),
                after: json!(32000),
            }]
        );
    }
}
