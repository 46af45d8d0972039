//! What the rollout's health gate reads of a PhoenixNAP load balancer after a change: its IP
//! block `assigned` (attached to the public network: the address routes), and the Service it
//! serves with `status.loadBalancer.ingress` set (kube-vip announces the address only once the
//! CCM has written it there). Every block skyplan manages serves a Service, so both are read.

use k8s_openapi::api::core::v1::Service;

use crate::api::IpBlock;
use crate::spec::PhoenixnapLoadBalancerSpec;
use skyplan_core::provider::Health;

/// The block status that means attached and routed (ips/v1 `IpBlock.status`).
const ASSIGNED: &str = "assigned";

/// The health of the block `block_id` (`block`: what the API answered, `None` when not found)
/// and of the Service `spec` names (`service`: `None` when it does not exist).
pub fn block_health(
    block_id: &str,
    block: Option<&IpBlock>,
    spec: &PhoenixnapLoadBalancerSpec,
    service: Option<&Service>,
) -> Health {
    let problems = [
        block_problem(block_id, block),
        service_problem(spec, service),
    ];
    Health::from_problems(problems.into_iter().flatten().collect())
}

fn block_problem(block_id: &str, block: Option<&IpBlock>) -> Option<String> {
    match block {
        None => Some(format!("IP block {block_id}: not found")),
        Some(block) if block.status != ASSIGNED => {
            Some(format!("IP block {block_id}: status {}", block.status))
        }
        Some(_) => None,
    }
}

fn service_problem(spec: &PhoenixnapLoadBalancerSpec, service: Option<&Service>) -> Option<String> {
    let service_ref = spec.service_ref();
    let Some(service) = service else {
        return Some(format!("Service {service_ref}: not found"));
    };
    match has_ingress(service) {
        true => None,
        false => Some(format!(
            "Service {service_ref}: no status.loadBalancer.ingress"
        )),
    }
}

/// An ingress entry with an address. Not just an entry: the CCM's first Ensure of a Service
/// writes `ingress: [{ip: ""}]` (its addService returns no address yet), which announces
/// nothing.
fn has_ingress(service: &Service) -> bool {
    let status = service.status.as_ref();
    let ingress = status
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref());
    let addressed = |entry: &k8s_openapi::api::core::v1::LoadBalancerIngress| {
        let set = |value: &Option<String>| value.as_deref().is_some_and(|v| !v.is_empty());
        set(&entry.ip) || set(&entry.hostname)
    };
    ingress.is_some_and(|entries| entries.iter().any(addressed))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::spec::PnapLocation;
    use skyplan_core::model::{Address, ResourceKind};

    fn spec() -> PhoenixnapLoadBalancerSpec {
        PhoenixnapLoadBalancerSpec {
            cluster: Address::new(ResourceKind::Cluster, "prod"),
            namespace: "default".into(),
            name: "api".into(),
            public_network: "k8s-public".into(),
            location: PnapLocation::Phx,
        }
    }

    fn block(status: &str) -> IpBlock {
        serde_json::from_value(json!({
            "id": "b1", "location": "PHX", "cidr": "198.51.100.8/29", "status": status,
        }))
        .unwrap()
    }

    fn service(ingress: serde_json::Value) -> Service {
        serde_json::from_value(json!({
            "metadata": {"name": "api", "namespace": "default"},
            "status": {"loadBalancer": {"ingress": ingress}},
        }))
        .unwrap()
    }

    #[test]
    fn an_assigned_block_whose_service_has_its_ingress_is_healthy() {
        let served = service(json!([{"ip": "198.51.100.10"}]));
        let health = block_health("b1", Some(&block("assigned")), &spec(), Some(&served));
        assert_eq!(health, Health::Healthy);
    }

    #[test]
    fn a_block_still_assigning_and_a_service_without_ingress_are_each_named() {
        // No entry, or only the empty one the CCM's first Ensure writes: nothing announced.
        for waiting in [json!([]), json!([{"ip": ""}])] {
            let waiting = service(waiting);
            let health = block_health("b1", Some(&block("assigning")), &spec(), Some(&waiting));
            assert_eq!(
                health,
                Health::Unhealthy(vec![
                    "IP block b1: status assigning".into(),
                    "Service default/api: no status.loadBalancer.ingress".into(),
                ])
            );
        }
    }

    #[test]
    fn a_missing_block_or_service_is_unhealthy() {
        let health = block_health("b1", None, &spec(), None);
        assert_eq!(
            health,
            Health::Unhealthy(vec![
                "IP block b1: not found".into(),
                "Service default/api: not found".into(),
            ])
        );
    }
}
