//! Discovery in the connected clusters: every Service of type LoadBalancer that no resource
//! manages, listed so that one no cloud object serves is not missed (`skyplan discover`). A
//! Service is the cloud's to adopt, not this provider's: it is listed not importable, and core
//! (`fold_services`) drops it where a cloud's object serves it or a configured load balancer is
//! bound to it. Pure: the survey listed the Services (`ClusterConnection::services`).

use k8s_openapi::api::core::v1::Service;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::{Maker, ServiceRef, Unmanaged};
use skyplan_core::provider::Target;

use crate::service_write::OWNER_ANNOTATION;
use crate::PROVIDER;

/// The annotation prefixes of the cloud controllers skyplan knows, and how a user calls each:
/// the cloudscale CCM's `k8s.cloudscale.ch/loadbalancer-…` (cloudscale's `config/
/// annotations.rs`), the CloudStack CCM's `service.beta.kubernetes.io/cloudstack-load-balancer-…`
/// (CloudStack's `lb/ccm/service.rs`), and PhoenixNAP's `phoenixnap.com/ip-location` (parsed by
/// its CCM v1.0.0 and never read: research/phoenixnap.md §6.1).
const CONTROLLER_ANNOTATIONS: [(&str, &str); 3] = [
    ("k8s.cloudscale.ch/", "cloudscale CCM"),
    (
        "service.beta.kubernetes.io/cloudstack-load-balancer-",
        "CloudStack CCM",
    ),
    ("phoenixnap.com/", "PhoenixNAP CCM"),
];

const LOAD_BALANCER: &str = "LoadBalancer";

/// The LoadBalancer Services of `cluster` that no target manages: none carries a
/// `skyplan.address` naming a target. One marked with an address no target has was made by
/// skyplan (a lost state, a removed config); any other was made by a user.
pub fn unmanaged_services(
    cluster: &Address,
    services: &[Service],
    targets: &[Target<'_>],
) -> Vec<Unmanaged> {
    services
        .iter()
        .filter(|s| is_load_balancer(s))
        .filter_map(|service| {
            let marked = marked_address(service);
            if marked
                .as_ref()
                .is_some_and(|a| targets.iter().any(|t| t.address == a))
            {
                return None;
            }
            let namespace = service.metadata.namespace.clone().unwrap_or_default();
            let name = service.metadata.name.clone().unwrap_or_default();
            let id = format!("{namespace}/{name}");
            Some(Unmanaged {
                provider: PROVIDER.into(),
                kind: ResourceKind::LoadBalancer,
                id: id.clone(),
                name: name.clone(),
                made_by: marked.map_or(Maker::Unknown, Maker::Skyplan),
                cluster: Some(cluster.clone()),
                service: Some(ServiceRef {
                    cluster: cluster.clone(),
                    service: id,
                }),
                address: Address::new(ResourceKind::LoadBalancer, name),
                summary: summary(service),
                importable: false,
                why_not_importable: Some(NO_CLOUD_OBJECT.to_string()),
            })
        })
        .collect()
}

/// Why a Service is listed not importable.
const NO_CLOUD_OBJECT: &str = "a Service no cloud object serves yet: its cloud's provider adopts the load balancer its controller makes for it";

fn is_load_balancer(service: &Service) -> bool {
    service.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some(LOAD_BALANCER)
}

/// The address in the Service's `skyplan.address` annotation, if it names one.
fn marked_address(service: &Service) -> Option<Address> {
    let annotations = service.metadata.annotations.as_ref()?;
    annotations.get(OWNER_ANNOTATION)?.parse().ok()
}

/// Where users reach it (its ingress, or `pending`), its ports, a loadBalancerClass, and whose
/// controller's annotations it carries.
fn summary(service: &Service) -> String {
    let spec = service.spec.as_ref();
    let ingress: Vec<String> = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|i| i.ip.clone().or_else(|| i.hostname.clone()))
        .collect();
    let mut parts = vec![match ingress.is_empty() {
        true => "pending".to_string(),
        false => ingress.join(", "),
    }];
    let ports: Vec<String> = spec
        .and_then(|s| s.ports.as_ref())
        .into_iter()
        .flatten()
        .map(|p| format!("{}/{}", p.port, p.protocol.as_deref().unwrap_or("TCP")))
        .collect();
    if !ports.is_empty() {
        let noun = if ports.len() == 1 { "port" } else { "ports" };
        parts.push(format!("{noun} {}", ports.join(", ")));
    }
    if let Some(class) = spec.and_then(|s| s.load_balancer_class.as_deref()) {
        parts.push(format!("loadBalancerClass {class}"));
    }
    let annotations = service.metadata.annotations.as_ref();
    let controllers: Vec<String> = CONTROLLER_ANNOTATIONS
        .iter()
        .filter(|(prefix, _)| annotations.is_some_and(|a| a.keys().any(|k| k.starts_with(prefix))))
        .map(|(_, controller)| format!("{controller} annotations"))
        .collect();
    if !controllers.is_empty() {
        parts.push(controllers.join(", "));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skyplan_core::state::ResourceState;

    fn service(name: &str, type_: &str, extra: serde_json::Value) -> Service {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"type": type_, "ports": [{"port": 80, "protocol": "TCP"}]},
        });
        merge(&mut value, extra);
        serde_json::from_value(value).unwrap()
    }

    fn merge(into: &mut serde_json::Value, from: serde_json::Value) {
        match (into, from) {
            (serde_json::Value::Object(into), serde_json::Value::Object(from)) => {
                for (key, value) in from {
                    merge(into.entry(key).or_insert(serde_json::Value::Null), value);
                }
            }
            (into, from) => *into = from,
        }
    }

    fn cluster() -> Address {
        "cluster.prod".parse().unwrap()
    }

    #[test]
    fn every_load_balancer_service_is_listed_with_its_ingress_ports_and_controller() {
        let services = [
            service(
                "web",
                "LoadBalancer",
                json!({
                    "metadata": {"annotations": {"k8s.cloudscale.ch/loadbalancer-flavor": "lb-standard"}},
                    "spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]},
                    "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.10"}]}},
                }),
            ),
            service("internal", "ClusterIP", json!({})),
            service(
                "pending",
                "LoadBalancer",
                json!({
                    "metadata": {"annotations": {"service.beta.kubernetes.io/cloudstack-load-balancer-proxy-protocol": "true"}},
                    "spec": {"loadBalancerClass": "example.com/other"},
                }),
            ),
            service(
                "named",
                "LoadBalancer",
                json!({
                    "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}},
                    "metadata": {"annotations": {"phoenixnap.com/ip-location": "ASH"}},
                }),
            ),
        ];
        let found = unmanaged_services(&cluster(), &services, &[]);
        let lines: Vec<(String, String, String)> = found
            .iter()
            .map(|u| (u.id.clone(), u.address.to_string(), u.summary.clone()))
            .collect();
        assert_eq!(
            lines,
            [
                (
                    "default/web".to_string(),
                    "load-balancer.web".to_string(),
                    "203.0.113.10; ports 80/TCP, 53/UDP; cloudscale CCM annotations".to_string()
                ),
                (
                    "default/pending".to_string(),
                    "load-balancer.pending".to_string(),
                    "pending; port 80/TCP; loadBalancerClass example.com/other; CloudStack CCM annotations".to_string()
                ),
                (
                    "default/named".to_string(),
                    "load-balancer.named".to_string(),
                    "lb.example.com; port 80/TCP; PhoenixNAP CCM annotations".to_string()
                ),
            ]
        );
        for object in &found {
            assert_eq!(object.provider, "kubernetes");
            assert_eq!(object.made_by, Maker::Unknown, "a user made it");
            assert!(!object.importable, "the cloud's provider adopts it");
            assert_eq!(object.cluster, Some(cluster()));
            assert_eq!(
                object.service,
                Some(ServiceRef {
                    cluster: cluster(),
                    service: object.id.clone()
                })
            );
        }
    }

    #[test]
    fn a_service_marked_for_a_target_is_managed_and_one_marked_for_another_address_is_skyplan_s() {
        let marked = |name: &str, address: &str| {
            service(
                name,
                "LoadBalancer",
                json!({"metadata": {"annotations": {OWNER_ANNOTATION: address}}}),
            )
        };
        let services = [
            marked("kept", "nodes.web"),
            marked("lost", "load-balancer.old"),
            marked("garbled", "not an address"),
        ];
        let address: Address = "nodes.web".parse().unwrap();
        let prior = ResourceState {
            provider: PROVIDER.into(),
            id: "nodes.web".into(),
            ids: serde_json::Value::Null,
            attributes: serde_json::Value::Null,
            depends_on: vec![],
        };
        let targets = [Target {
            address: &address,
            resource: None,
            prior: Some(&prior),
        }];
        let found = unmanaged_services(&cluster(), &services, &targets);
        let makers: Vec<(&str, &Maker)> = found
            .iter()
            .map(|u| (u.name.as_str(), &u.made_by))
            .collect();
        assert_eq!(
            makers,
            [
                (
                    "lost",
                    &Maker::Skyplan("load-balancer.old".parse().unwrap())
                ),
                ("garbled", &Maker::Unknown),
            ]
        );
    }
}
