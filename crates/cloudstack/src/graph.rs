//! How CloudStack resources appear in `skyplan graph`: a cluster and its node groups; a load
//! balancer's public IP, its rules with their firewall rules, and the edge from the cluster
//! whose workers are the members.

use crate::spec::{CloudstackClusterSpec, CloudstackLoadBalancerSpec, CsMembers, CsProtocol};
use skyplan_core::graph::{ObjectGraph, ObjectKey};
use skyplan_core::model::{Address, ResourceKind};

fn key(address: &Address, kind: &str, name: impl Into<String>) -> ObjectKey {
    ObjectKey::new(address.clone(), kind, name)
}

/// The object standing for the whole cluster, which load balancers depend on.
pub fn cluster_key(address: &Address, spec: &CloudstackClusterSpec) -> ObjectKey {
    key(address, "kubernetes-cluster", spec.name.clone())
}

pub fn add_cluster(graph: &mut ObjectGraph, address: &Address, spec: &CloudstackClusterSpec) {
    let cluster = cluster_key(address, spec);
    graph.add(cluster.clone(), None);
    let groups = [
        ("control", spec.control_nodes),
        ("etcd", spec.etcd_nodes),
        ("worker", spec.workers),
    ];
    for (group, count) in groups.into_iter().filter(|(_, n)| *n > 0) {
        graph.add(
            key(address, "node-group", format!("{group} ×{count}")),
            Some(&cluster),
        );
    }
}

/// Adds the load balancer's objects; `cluster` is the key of its members' cluster, which must
/// already be in the graph.
pub fn add_load_balancer(
    graph: &mut ObjectGraph,
    address: &Address,
    spec: &CloudstackLoadBalancerSpec,
    cluster: Option<&ObjectKey>,
) {
    let ip_name = match &spec.public_ip {
        crate::spec::PublicIp::Auto => "auto".to_string(),
        crate::spec::PublicIp::Address(ip) => ip.clone(),
    };
    let ip = key(address, "public-ip", ip_name);
    graph.add(ip.clone(), None);
    for port in &spec.ports {
        let rule = key(address, "lb-rule", spec.rule_name(port));
        graph.add(rule.clone(), Some(&ip));
        let protocol = match port.protocol {
            CsProtocol::Udp => "udp",
            CsProtocol::Tcp | CsProtocol::TcpProxy => "tcp",
        };
        let firewall = format!("{protocol}/{}", port.port);
        graph.add(key(address, "firewall-rule", firewall), Some(&rule));
        if let Some(cluster) = cluster {
            graph
                .add_dependency(&rule, cluster)
                .expect("a rule is new and cannot close a cycle");
        }
    }
    if let CsMembers::Vms(vms) = &spec.members {
        for vm in vms {
            graph.add(key(address, "member-vm", vm.clone()), Some(&ip));
        }
    }
}

/// The cluster address a load balancer's members come from.
pub fn members_cluster(spec: &CloudstackLoadBalancerSpec) -> Option<Address> {
    match &spec.members {
        CsMembers::Cluster(name) => Some(Address::new(ResourceKind::Cluster, name)),
        CsMembers::Vms(_) => None,
    }
}
