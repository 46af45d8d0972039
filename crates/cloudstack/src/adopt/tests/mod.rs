//! Discovery and generation against one small account made by hand, by skyplan and by the
//! CloudStack CCM: the CKS cluster `lab` (CKS made its network `lab-network`); the rules
//! `web-tcp-80` and `web-tcp-443` on 203.0.113.10 in `k8s-net`, made by hand for the VMs
//! web-1 and web-2; `edge-tcp-80` on 203.0.113.20 in the cluster's network, made by skyplan
//! as `load-balancer.edge` (tagged) for the cluster's workers; `<base>-tcp-80` on
//! 203.0.113.30, made by the CCM for the Service `default/shop` in the cluster; and CKS's own
//! `api-lb` rule on the cluster's source-NAT address.

mod discover;
mod generate;
mod round_trip;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Service};
use serde_json::json;

use super::{Surveyed, SurveyedCluster};
use crate::api::{
    FirewallRule, LoadBalancerRule, Network, NetworkService, Nic, PublicIpAddress, Tag,
    VirtualMachine,
};
use crate::lb::ccm::names::base_name;
use crate::live::{Inventory, KnownCluster, Live};
use crate::spec::CloudstackClusterSpec;
use crate::OWNER_TAG;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::Adopting;
use skyplan_core::provider::Target;
use skyplan_core::state::ResourceState;

pub const SHOP_UID: &str = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
pub const LAB_NET: &str = "n-lab";

pub fn shop_base() -> String {
    base_name(SHOP_UID)
}

fn nic(network: &str) -> Nic {
    Nic {
        id: String::new(),
        networkid: network.into(),
        ipaddress: None,
        isdefault: true,
    }
}

fn vm(id: &str, name: &str, network: &str) -> VirtualMachine {
    VirtualMachine {
        id: id.into(),
        name: name.into(),
        displayname: name.into(),
        state: "Running".into(),
        zoneid: "z1".into(),
        serviceofferingid: "o-medium".into(),
        serviceofferingname: "Medium Instance".into(),
        hypervisor: "KVM".into(),
        nic: vec![nic(network)],
        hostname: None,
        publicip: None,
    }
}

fn ip(id: &str, address: &str, network: &str, tags: Vec<Tag>) -> PublicIpAddress {
    PublicIpAddress {
        id: id.into(),
        ipaddress: address.into(),
        allocated: None,
        associatednetworkid: Some(network.into()),
        issourcenat: false,
        state: "Allocated".into(),
        zoneid: "z1".into(),
        vpcid: None,
        tags,
    }
}

pub fn owner(address: &str) -> Tag {
    Tag {
        key: OWNER_TAG.into(),
        value: address.into(),
        resourcetype: String::new(),
        resourceid: String::new(),
    }
}

/// A rule as listed after its create (cidrlist space-separated).
pub fn rule(
    id: &str,
    name: &str,
    (ip_id, address): (&str, &str),
    (port, node_port): (u32, u32),
    network: &str,
) -> LoadBalancerRule {
    LoadBalancerRule {
        id: id.into(),
        name: name.into(),
        description: None,
        publicipid: ip_id.into(),
        publicip: address.into(),
        publicport: port,
        privateport: node_port,
        algorithm: "roundrobin".into(),
        protocol: "tcp".into(),
        cidrlist: None,
        networkid: Some(network.into()),
        zoneid: "z1".into(),
        state: "Active".into(),
        tags: vec![],
    }
}

pub fn firewall(id: &str, ip_id: &str, port: u32, cidrs: &str) -> FirewallRule {
    FirewallRule {
        id: id.into(),
        protocol: "tcp".into(),
        startport: port,
        endport: port,
        ipaddressid: ip_id.into(),
        ipaddress: String::new(),
        cidrlist: Some(cidrs.into()),
        state: "Active".into(),
    }
}

/// The account described above.
pub fn account() -> Inventory {
    let mut inventory = crate::cluster::tests::inventory();
    inventory.networks.push(Network {
        id: LAB_NET.into(),
        name: "lab-network".into(),
        zoneid: "z1".into(),
        kind: "Isolated".into(),
        state: "Implemented".into(),
        vpcid: None,
        service: ["Lb", "Firewall", "SourceNat", "Dns"]
            .into_iter()
            .map(|name| NetworkService { name: name.into() })
            .collect(),
    });
    inventory.clusters[0].networkid = Some(LAB_NET.into());
    for vm in &mut inventory.vms {
        vm.nic = vec![nic(LAB_NET)];
    }
    inventory.vms.push(vm("vm-web-1", "web-1", "n1"));
    inventory.vms.push(vm("vm-web-2", "web-2", "n1"));
    let web = ("ip-web", "203.0.113.10");
    let edge = ("ip-edge", "203.0.113.20");
    let shop = ("ip-shop", "203.0.113.30");
    let nat = ("ip-nat", "203.0.113.40");
    inventory.public_ips = vec![
        ip(web.0, web.1, "n1", vec![]),
        ip(edge.0, edge.1, LAB_NET, vec![owner("load-balancer.edge")]),
        ip(shop.0, shop.1, LAB_NET, vec![]),
        PublicIpAddress {
            issourcenat: true,
            ..ip(nat.0, nat.1, LAB_NET, vec![])
        },
    ];
    let mut edge_rule = rule("r-edge-80", "edge-tcp-80", edge, (80, 30080), LAB_NET);
    edge_rule.algorithm = "source".into();
    edge_rule.tags = vec![owner("load-balancer.edge")];
    let mut shop_rule = rule(
        "r-shop-80",
        &format!("{}-tcp-80", shop_base()),
        shop,
        (80, 31080),
        LAB_NET,
    );
    shop_rule.cidrlist = Some("0.0.0.0/0".into());
    inventory.rules = vec![
        rule("r-web-80", "web-tcp-80", web, (80, 30080), "n1"),
        rule("r-web-443", "web-tcp-443", web, (443, 30443), "n1"),
        edge_rule,
        shop_rule,
        rule("r-api", "api-lb", nat, (6443, 6443), LAB_NET),
    ];
    inventory.firewall_rules = vec![
        firewall("f-web-80", web.0, 80, "0.0.0.0/0"),
        firewall("f-web-443", web.0, 443, "0.0.0.0/0"),
        firewall("f-edge-80", edge.0, 80, "10.0.0.0/8"),
        firewall("f-shop-80", shop.0, 80, "0.0.0.0/0"),
    ];
    let workers = ["vm-node-0", "vm-node-1", "vm-node-2"];
    let nodes = ["vm-control-0", "vm-node-0", "vm-node-1", "vm-node-2"];
    let ids = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    inventory.rule_members = BTreeMap::from([
        ("r-web-80".to_string(), ids(&["vm-web-1", "vm-web-2"])),
        ("r-web-443".to_string(), ids(&["vm-web-1", "vm-web-2"])),
        ("r-edge-80".to_string(), ids(&workers)),
        ("r-shop-80".to_string(), ids(&nodes)),
    ]);
    inventory
}

/// The Service the CCM made the shop rule for, as the apiserver holds it.
pub fn shop_service() -> Service {
    serde_json::from_value(json!({
        "metadata": {"name": "shop", "namespace": "default", "uid": SHOP_UID,
                     "resourceVersion": "7"},
        "spec": {"type": "LoadBalancer", "sessionAffinity": "None",
                 "ports": [{"name": "tcp-80", "protocol": "TCP", "port": 80,
                            "targetPort": 80, "nodePort": 31080}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.30"}]}}
    }))
    .unwrap()
}

/// The cluster's Nodes, one per VM, Ready.
pub fn nodes() -> Vec<Node> {
    ["lab-control-0", "lab-node-0", "lab-node-1", "lab-node-2"]
        .into_iter()
        .map(|name| {
            serde_json::from_value(json!({
                "metadata": {"name": name},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}
            }))
            .unwrap()
        })
        .collect()
}

/// The cluster as a survey read it: not in the config, its Services and nodes read.
pub fn surveyed_lab(services: Vec<Service>) -> SurveyedCluster {
    SurveyedCluster {
        address: Address::new(ResourceKind::Cluster, "lab"),
        configured: false,
        cks_id: Some("c1".into()),
        services: Ok(services),
        nodes: Some(Ok(nodes())),
    }
}

/// The survey of `account` with the shop Service.
pub fn surveyed() -> Live {
    surveyed_with(account(), vec![shop_service()])
}

pub fn surveyed_with(inventory: Inventory, services: Vec<Service>) -> Live {
    Live {
        inventory,
        surveyed: Surveyed {
            clusters: vec![surveyed_lab(services)],
        },
        ..Live::default()
    }
}

/// A configured cluster target, known to refresh.
pub fn with_cluster_target(mut live: Live, spec: CloudstackClusterSpec) -> Live {
    live.clusters.insert(
        Address::new(ResourceKind::Cluster, "lab"),
        KnownCluster {
            spec: Some(spec),
            prior_id: None,
        },
    );
    live
}

/// What `import --generate-config` hands over for an object: its ID alone.
pub fn claimed(id: &str) -> ResourceState {
    ResourceState {
        provider: "cloudstack".into(),
        id: id.into(),
        ids: serde_json::Value::Null,
        attributes: serde_json::Value::Null,
        depends_on: vec![],
    }
}

pub fn address(text: &str) -> Address {
    text.parse().unwrap()
}

/// The objects adopted together: `(id, address)`.
pub fn adopting(objects: &[(&str, &str)]) -> Adopting {
    let mut adopting = Adopting::default();
    for (id, at) in objects {
        adopting.insert("cloudstack", id, address(at));
    }
    adopting
}

/// Generates the object `id` as `at`.
pub fn generate(
    live: &Live,
    at: &str,
    id: &str,
    adopted: &Adopting,
) -> skyplan_core::provider::discover::Generated {
    let address = address(at);
    let prior = claimed(id);
    let target = Target {
        address: &address,
        resource: None,
        prior: Some(&prior),
    };
    super::generate(&target, live, adopted).unwrap()
}
