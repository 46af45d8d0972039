//! The apiserver's allocators for Services: cluster IPs from the service CIDR 10.96.0.0/12 and
//! node ports (also health-check node ports) from 30000-32767, unique across the cluster.
//! What is allocated is read off the stored Services, so deleting a Service or moving it back
//! to ClusterIP releases its ports with no bookkeeping to get wrong.
//!
//! The real allocators pick at random; this one takes the lowest free value, so a simulated
//! cluster is reproducible. A port renamed in an update still gets a *new* node port: the
//! Service's old ports count as taken while the update is decided, as they do in the apiserver
//! (released only after the update is stored).

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use serde_json::Value;

use super::world::World;

pub const NODE_PORT_MIN: u16 = 30000;
pub const NODE_PORT_MAX: u16 = 32767;

/// 10.96.0.0/12, the kubeadm default.
const SERVICE_CIDR_BASE: u32 = u32::from_be_bytes([10, 96, 0, 0]);
const SERVICE_CIDR_SIZE: u32 = 1 << 20;
/// `.1` is the `kubernetes` Service's, `.10` kube-dns's by convention.
const RESERVED_OFFSETS: [u32; 3] = [0, 1, 10];

/// Every node port and health-check node port the stored Services hold, except those of the
/// Service stored at `except`.
pub fn node_ports_in_use(world: &World, except: &str) -> BTreeSet<u16> {
    world
        .services
        .iter()
        .filter(|(key, _)| key.as_str() != except)
        .flat_map(|(_, service)| service_node_ports(service))
        .collect()
}

/// The node ports one Service holds, its health-check node port included.
pub fn service_node_ports(service: &Value) -> BTreeSet<u16> {
    let spec = &service["spec"];
    let ports = spec["ports"].as_array().into_iter().flatten();
    ports
        .map(|p| &p["nodePort"])
        .chain([&spec["healthCheckNodePort"]])
        .filter_map(Value::as_u64)
        .filter_map(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .collect()
}

pub fn in_node_port_range(port: u64) -> bool {
    (u64::from(NODE_PORT_MIN)..=u64::from(NODE_PORT_MAX)).contains(&port)
}

/// The lowest node port in neither set.
pub fn free_node_port(taken: &BTreeSet<u16>) -> Option<u16> {
    (NODE_PORT_MIN..=NODE_PORT_MAX).find(|p| !taken.contains(p))
}

pub fn cluster_ips_in_use(world: &World, except: &str) -> BTreeSet<Ipv4Addr> {
    world
        .services
        .iter()
        .filter(|(key, _)| key.as_str() != except)
        .filter_map(|(_, s)| s["spec"]["clusterIP"].as_str()?.parse().ok())
        .collect()
}

pub fn in_service_cidr(ip: Ipv4Addr) -> bool {
    u32::from(ip).wrapping_sub(SERVICE_CIDR_BASE) < SERVICE_CIDR_SIZE
}

pub fn free_cluster_ip(taken: &BTreeSet<Ipv4Addr>) -> Option<Ipv4Addr> {
    (0..SERVICE_CIDR_SIZE - 1)
        .filter(|offset| !RESERVED_OFFSETS.contains(offset))
        .map(|offset| Ipv4Addr::from(SERVICE_CIDR_BASE + offset))
        .find(|ip| !taken.contains(ip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn world_with(services: &[(&str, Value)]) -> World {
        let mut world = World::default();
        for (key, service) in services {
            world.services.insert((*key).into(), service.clone());
        }
        world
    }

    #[test]
    fn ports_in_use_include_health_checks_and_skip_the_service_itself() {
        let world = world_with(&[
            (
                "default/a",
                json!({"spec": {"ports": [{"nodePort": 30000}, {"port": 1}],
                                          "healthCheckNodePort": 30005}}),
            ),
            (
                "default/b",
                json!({"spec": {"ports": [{"nodePort": 30001}]}}),
            ),
        ]);
        assert_eq!(
            node_ports_in_use(&world, "default/b"),
            BTreeSet::from([30000, 30005])
        );
        assert_eq!(node_ports_in_use(&world, "").len(), 3);
    }

    #[test]
    fn the_lowest_free_port_and_ip_are_taken() {
        assert_eq!(free_node_port(&BTreeSet::from([30000, 30002])), Some(30001));
        let all: BTreeSet<u16> = (NODE_PORT_MIN..=NODE_PORT_MAX).collect();
        assert_eq!(free_node_port(&all), None);
        let taken = BTreeSet::from([Ipv4Addr::new(10, 96, 0, 2)]);
        assert_eq!(free_cluster_ip(&taken), Some(Ipv4Addr::new(10, 96, 0, 3)));
    }

    #[test]
    fn the_service_cidr_is_10_96_0_0_slash_12() {
        assert!(in_service_cidr(Ipv4Addr::new(10, 96, 0, 1)));
        assert!(in_service_cidr(Ipv4Addr::new(10, 111, 255, 254)));
        assert!(!in_service_cidr(Ipv4Addr::new(10, 112, 0, 0)));
        assert!(!in_service_cidr(Ipv4Addr::new(10, 0, 0, 1)));
        assert!(in_node_port_range(30000) && in_node_port_range(32767));
        assert!(!in_node_port_range(80) && !in_node_port_range(32768));
    }
}
