use serde_json::json;

use super::*;
use crate::api::{PublicIpAddress, Zone};
use crate::live::KnownCluster;
use crate::spec::{CsAlgorithm, CsPort, CsProtocol};

fn address(text: &str) -> Address {
    text.parse().unwrap()
}

fn applied(attributes: serde_json::Value, ids: serde_json::Value) -> ResourceState {
    ResourceState {
        provider: "cloudstack".into(),
        id: String::new(),
        ids,
        attributes,
        depends_on: vec![],
    }
}

fn lb_spec(members: CsMembers, public_ip: PublicIp) -> CloudstackLoadBalancerSpec {
    CloudstackLoadBalancerSpec {
        name: "web".into(),
        description: None,
        public_ip,
        network: None,
        members,
        algorithm: CsAlgorithm::RoundRobin,
        allowed_cidrs: vec![],
        firewall_cidrs: vec![],
        ports: vec![CsPort {
            port: 80,
            protocol: CsProtocol::Tcp,
            node_port: 30080,
        }],
        binding: None,
    }
}

/// A refresh that knows zone `zone1` (ID z1) and the public IP 203.0.113.10 (ID ip1) in it.
fn live() -> Live {
    let mut live = Live::default();
    live.inventory.zones = vec![Zone {
        id: "z1".into(),
        name: "zone1".into(),
        networktype: String::new(),
        allocationstate: String::new(),
    }];
    let ip = json!({"id": "ip1", "ipaddress": "203.0.113.10", "zoneid": "z1"});
    live.inventory.public_ips = vec![serde_json::from_value::<PublicIpAddress>(ip).unwrap()];
    live
}

fn place(address: &Address, prior: &ResourceState, live: &Live) -> Option<Placement> {
    let target = Target {
        address,
        resource: None,
        prior: Some(prior),
    };
    placement(&target, live)
}

#[test]
fn a_cluster_is_its_own_cluster_in_its_zone_by_name() {
    let mut spec = crate::cluster::tests::spec();
    spec.zone = "z1".into();
    let prior = applied(serde_json::to_value(&spec).unwrap(), json!({}));
    let expected = Placement {
        cluster: Some("cluster.lab".into()),
        zone: Some("zone1".into()),
    };
    assert_eq!(
        place(&address("cluster.lab"), &prior, &live()),
        Some(expected)
    );
}

#[test]
fn a_load_balancer_of_a_clusters_workers_serves_it_in_its_zone() {
    let mut live = live();
    let known = KnownCluster {
        spec: Some(crate::cluster::tests::spec()),
        prior_id: None,
    };
    live.clusters.insert(address("cluster.lab"), known);
    let spec = lb_spec(CsMembers::Cluster("lab".into()), PublicIp::Auto);
    let prior = applied(serde_json::to_value(&spec).unwrap(), json!({}));
    let expected = Placement {
        cluster: Some("cluster.lab".into()),
        zone: Some("zone1".into()),
    };
    assert_eq!(
        place(&address("load-balancer.web"), &prior, &live),
        Some(expected)
    );
}

#[test]
fn a_load_balancer_of_named_vms_is_in_its_public_ips_zone_and_unknown_is_none() {
    let spec = lb_spec(CsMembers::Vms(vec!["web-1".into()]), PublicIp::Auto);
    let prior = applied(
        serde_json::to_value(&spec).unwrap(),
        json!({"public_ip": "ip1", "rules": {}}),
    );
    let expected = Placement {
        cluster: None,
        zone: Some("zone1".into()),
    };
    let lb = address("load-balancer.web");
    assert_eq!(place(&lb, &prior, &live()), Some(expected));
    let nowhere = applied(serde_json::to_value(&spec).unwrap(), json!({}));
    assert_eq!(place(&lb, &nowhere, &live()), None);
}
