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
    // Without the name annotation the CCM names the load balancer `k8s-service-<uid>`: a
    // config asking for that name (an adopted Service) asks for nothing to change.
    let ccm_default_name = super::predict::default_name(live);
    for (key, want) in desired_annotations(spec) {
        let have = live_annotations.get(&key);
        let named_as_the_ccm_does =
            key == super::annotations::NAME && have.is_none() && want == ccm_default_name;
        if have != want.as_ref() && !named_as_the_ccm_does {
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
    changes.extend(port_changes(spec, live));
    changes
}

/// The port list's differences, as the user edits `[[ports]]`: a port is matched to the live
/// one of its name, else (renamed) to the one serving the same port number — as the CCM's
/// pools are. A matched port's fields that differ are `service.ports.<key>.<field>`; a port
/// only one side has is `service.ports.<key>` (config-shaped); the same ports in another order
/// is `service.ports` (the list is written whole). A configured node port is compared with the
/// matched live one; an unset one is no change (the apiserver keeps it by name, or allocates
/// one for a new name — the CCM's consequence, not the user's change).
fn port_changes(spec: &CloudscaleLoadBalancerSpec, live: &Service) -> Vec<ServiceChange> {
    let have = live_ports(live);
    let mut unmatched: Vec<usize> = (0..have.len()).collect();
    let mut take = |found: &dyn Fn(&LivePort) -> bool| {
        let at = unmatched.iter().position(|&i| found(&have[i]))?;
        Some(unmatched.remove(at))
    };
    // By name first, for every port, so a rename never takes another port's live twin.
    let by_name: Vec<Option<usize>> = spec
        .ports
        .iter()
        .map(|p| take(&|l: &LivePort| l.name == p.name))
        .collect();
    let matched: Vec<Option<usize>> = spec
        .ports
        .iter()
        .zip(by_name)
        .map(|(p, m)| m.or_else(|| take(&|l: &LivePort| l.port == i32::from(p.port))))
        .collect();
    let mut changes = Vec::new();
    let field = |key: &str, name: &str, before: Value, after: Value| ServiceChange {
        path: format!("service.ports.{key}.{name}"),
        before,
        after,
    };
    for (want, at) in spec.ports.iter().zip(&matched) {
        let key = want.key();
        let Some(at) = at else {
            changes.push(ServiceChange {
                path: format!("service.ports.{key}"),
                before: Value::Null,
                after: port_value(want),
            });
            continue;
        };
        let have = &have[*at];
        if have.name != want.name {
            changes.push(field(&key, "name", json!(have.name), json!(want.name)));
        }
        if have.protocol != wire_protocol(want.protocol) {
            let before = have.protocol.to_lowercase();
            changes.push(field(
                &key,
                "protocol",
                json!(before),
                json!(want.protocol.as_str()),
            ));
        }
        if have.port != i32::from(want.port) {
            changes.push(field(&key, "port", json!(have.port), json!(want.port)));
        }
        // skyplan writes targetPort = port: it follows a renumbered port, and is the user's
        // change only where it was set apart from the port by hand.
        if have.target != have.port.to_string() && have.target != want.port.to_string() {
            changes.push(field(
                &key,
                "targetPort",
                json!(have.target),
                json!(want.port),
            ));
        }
        if want.node_port != 0 && have.node_port != Some(want.node_port) {
            changes.push(field(
                &key,
                "nodePort",
                json!(have.node_port),
                json!(want.node_port),
            ));
        }
    }
    for at in unmatched {
        let gone = &have[at];
        let key = match gone.name.is_empty() {
            true => gone.port.to_string(),
            false => gone.name.clone(),
        };
        let mut before = json!({"port": gone.port, "protocol": gone.protocol.to_lowercase()});
        if let Some(node_port) = gone.node_port {
            before["node-port"] = json!(node_port);
        }
        changes.push(ServiceChange {
            path: format!("service.ports.{key}"),
            before,
            after: Value::Null,
        });
    }
    let in_order = matched.iter().flatten().is_sorted();
    if changes.is_empty() && !in_order {
        let keys = |ports: Vec<String>| json!(ports);
        let mut before: Vec<(usize, String)> = matched
            .iter()
            .zip(&spec.ports)
            .filter_map(|(at, p)| Some(((*at)?, p.key())))
            .collect();
        before.sort();
        changes.push(ServiceChange {
            path: "service.ports".into(),
            before: keys(before.into_iter().map(|(_, k)| k).collect()),
            after: keys(spec.ports.iter().map(|p| p.key()).collect()),
        });
    }
    changes
}

/// A configured port as its `[[ports]]` entry reads (its name is the path's).
fn port_value(port: &crate::spec::PortSpec) -> Value {
    let mut value = json!({"port": port.port, "protocol": port.protocol.as_str()});
    if port.node_port != 0 {
        value["node-port"] = json!(port.node_port);
    }
    value
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct LivePort {
    name: String,
    protocol: String,
    port: i32,
    target: String,
    node_port: Option<u16>,
}

fn live_ports(live: &Service) -> Vec<LivePort> {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let ports = live
        .spec
        .as_ref()
        .and_then(|s| s.ports.clone())
        .unwrap_or_default();
    ports
        .into_iter()
        .map(|p| LivePort {
            name: p.name.unwrap_or_default(),
            protocol: p.protocol.unwrap_or_else(|| "TCP".into()),
            port: p.port,
            target: match p.target_port {
                Some(IntOrString::Int(n)) => n.to_string(),
                Some(IntOrString::String(s)) => s,
                None => p.port.to_string(),
            },
            node_port: p
                .node_port
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n != 0),
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
    fn a_service_without_a_name_annotation_has_the_ccms_default_name() {
        let (mut spec, _) = spec();
        let live = service(&[("http", 80, 31080)], None);
        let uid = live.metadata.uid.clone().unwrap();
        spec.name = format!("k8s-service-{uid}");
        assert_eq!(service_changes(&spec, &live), vec![]);
        spec.name = "shop".into();
        let changes = service_changes(&spec, &live);
        assert_eq!(
            changes[0].path,
            "service.annotations.k8s.cloudscale.ch/loadbalancer-name"
        );
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
        assert_eq!(
            service_changes(&renamed, &live),
            vec![ServiceChange {
                path: "service.ports.web.name".into(),
                before: json!("http"),
                after: json!("web"),
            }]
        );
        assert_eq!(live_node_ports(Some(&live))["http"], 31080);
    }

    /// The port list's differences as the user edits `[[ports]]`: a renumbered port's port
    /// (its targetPort follows), a port added or removed as its config-shaped entry, the same
    /// ports reordered as the list of their names.
    #[test]
    fn port_changes_are_config_keys_of_the_port_the_user_edited() {
        let (spec, _) = spec();
        let live = service(&[("http", 80, 31080)], None);
        let paths =
            |spec: &CloudscaleLoadBalancerSpec, live: &Service| -> Vec<(String, Value, Value)> {
                port_changes(spec, live)
                    .into_iter()
                    .map(|c| (c.path, c.before, c.after))
                    .collect()
            };
        let mut renumbered = spec.clone();
        renumbered.ports[0].port = 8080;
        assert_eq!(
            paths(&renumbered, &live),
            [("service.ports.http.port".into(), json!(80), json!(8080))]
        );
        let mut added = spec.clone();
        added.ports.push(PortSpec {
            name: "admin".into(),
            port: 9000,
            protocol: PortProtocol::Udp,
            node_port: 32000,
        });
        assert_eq!(
            paths(&added, &live),
            [(
                "service.ports.admin".into(),
                Value::Null,
                json!({"port": 9000, "protocol": "udp", "node-port": 32000})
            )]
        );
        let two = service(&[("http", 80, 31080), ("admin", 9000, 32000)], None);
        assert_eq!(
            paths(&spec, &two),
            [(
                "service.ports.admin".into(),
                json!({"port": 9000, "protocol": "tcp", "node-port": 32000}),
                Value::Null
            )]
        );
        let mut reordered = added.clone();
        reordered.ports[1].protocol = PortProtocol::Tcp;
        reordered.ports.reverse();
        assert_eq!(
            paths(&reordered, &two),
            [(
                "service.ports".into(),
                json!(["http", "admin"]),
                json!(["admin", "http"])
            )]
        );
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
