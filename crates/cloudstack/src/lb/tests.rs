//! One test per row of impact.md's CloudStack LB table (direct mode) and per plan-time error, at
//! the level of `plan`: a small inventory that holds the load balancer as applied from a base
//! spec, a changed spec, and the class, path, reason and operations that come out.

use serde_json::json;

use super::super::api::{
    Capabilities, FirewallRule, KubernetesCluster, LoadBalancerRule, Network, NetworkService, Nic,
    PublicIpAddress, Tag, VirtualMachine,
};
use super::super::live::{ClusterRef, Inventory, PlanInput};
use super::super::OWNER_TAG;
use super::found::LbIds;
use super::impact::{rule, Change};
use super::*;
use crate::ops::Op;
use crate::spec::{
    CloudstackClusterSpec, ClusterRunState, CsAlgorithm, CsMembers, CsPort, CsProtocol, PublicIp,
};
use skyplan_core::model::{Address, Impact, ResourceKind};
use skyplan_core::plan::{unknown, AttributeChange};

pub(super) const IP_ID: &str = "ip-1";
pub(super) const IP: &str = "198.51.100.10";
pub(super) const NET_ID: &str = "net-1";
const NET: &str = "k8s-net";

pub(super) fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "edge")
}

fn owner_tag() -> Tag {
    Tag {
        key: OWNER_TAG.into(),
        value: address().to_string(),
        resourcetype: String::new(),
        resourceid: String::new(),
    }
}

pub(super) fn port(port: u16, protocol: CsProtocol, node_port: u16) -> CsPort {
    CsPort {
        port,
        protocol,
        node_port,
    }
}

pub(super) fn base() -> CloudstackLoadBalancerSpec {
    CloudstackLoadBalancerSpec {
        name: "edge".into(),
        description: None,
        public_ip: PublicIp::Auto,
        network: Some(NET.into()),
        members: CsMembers::Vms(vec!["web-1".into(), "web-2".into()]),
        algorithm: CsAlgorithm::RoundRobin,
        allowed_cidrs: vec![],
        firewall_cidrs: vec!["0.0.0.0/0".into()],
        ports: vec![port(80, CsProtocol::Tcp, 30080)],
        binding: None,
    }
}

fn network(id: &str, name: &str, kind: &str, services: &[&str]) -> Network {
    Network {
        id: id.into(),
        name: name.into(),
        zoneid: "zone-1".into(),
        kind: kind.into(),
        state: "Implemented".into(),
        vpcid: None,
        service: services
            .iter()
            .map(|s| NetworkService {
                name: s.to_string(),
            })
            .collect(),
    }
}

fn vm(id: &str, name: &str) -> VirtualMachine {
    VirtualMachine {
        id: id.into(),
        name: name.into(),
        displayname: name.into(),
        state: "Running".into(),
        zoneid: "zone-1".into(),
        serviceofferingid: String::new(),
        serviceofferingname: String::new(),
        hypervisor: "KVM".into(),
        nic: vec![Nic {
            id: format!("nic-{id}"),
            networkid: NET_ID.into(),
            ipaddress: None,
            isdefault: true,
        }],
        hostname: None,
        publicip: None,
    }
}

fn rule_of(spec: &CloudstackLoadBalancerSpec, p: &CsPort, ip: &str) -> LoadBalancerRule {
    LoadBalancerRule {
        id: format!("rule-{}", p.port),
        name: spec.rule_name(p),
        description: spec.description.clone(),
        publicipid: ip.into(),
        publicip: IP.into(),
        publicport: u32::from(p.port),
        privateport: u32::from(p.node_port),
        algorithm: spec.algorithm.as_str().into(),
        protocol: p.protocol.as_str().into(),
        // As after a create: space-separated.
        cidrlist: (!spec.allowed_cidrs.is_empty()).then(|| spec.allowed_cidrs.join(" ")),
        networkid: Some(NET_ID.into()),
        zoneid: "zone-1".into(),
        state: "Active".into(),
        tags: vec![owner_tag()],
    }
}

fn firewall_of(spec: &CloudstackLoadBalancerSpec, p: &CsPort) -> FirewallRule {
    FirewallRule {
        id: format!("fw-{}", p.port),
        protocol: diff::firewall_protocol(p.protocol.as_str()).into(),
        startport: u32::from(p.port),
        endport: u32::from(p.port),
        ipaddressid: IP_ID.into(),
        ipaddress: IP.into(),
        cidrlist: Some(spec.firewall_cidrs.join(",")),
        state: "Active".into(),
    }
}

/// An account without the load balancer: the network, four VMs, and another load balancer's
/// rule in the same network (it shares the virtual router).
pub(super) fn empty_world() -> Inventory {
    let other_ip = PublicIpAddress {
        allocated: None,
        id: "ip-other".into(),
        ipaddress: "198.51.100.20".into(),
        associatednetworkid: Some(NET_ID.into()),
        issourcenat: false,
        state: "Allocated".into(),
        zoneid: "zone-1".into(),
        vpcid: None,
        tags: vec![],
    };
    let mut other = rule_of(&base(), &port(443, CsProtocol::Tcp, 30443), "ip-other");
    other.id = "rule-other".into();
    other.name = "other-tcp-443".into();
    other.tags = vec![];
    Inventory {
        capabilities: Some(Capabilities {
            cloudstackversion: "4.22.0.0".into(),
            kubernetesserviceenabled: true,
        }),
        max_cluster_size: 10,
        networks: vec![network(
            NET_ID,
            NET,
            "Isolated",
            &["Lb", "Firewall", "SourceNat", "Dns"],
        )],
        vms: vec![
            vm("vm-1", "web-1"),
            vm("vm-2", "web-2"),
            vm("vm-3", "web-3"),
            vm("vm-4", "lab-node-1"),
        ],
        public_ips: vec![other_ip],
        rules: vec![other],
        ..Inventory::default()
    }
}

/// The account after `spec` was applied: a tagged IP, one rule per port with its members and
/// firewall rule.
pub(super) fn world(spec: &CloudstackLoadBalancerSpec) -> Inventory {
    let mut live = empty_world();
    live.public_ips.push(PublicIpAddress {
        allocated: None,
        id: IP_ID.into(),
        ipaddress: IP.into(),
        associatednetworkid: Some(NET_ID.into()),
        issourcenat: false,
        state: "Allocated".into(),
        zoneid: "zone-1".into(),
        vpcid: None,
        tags: vec![owner_tag()],
    });
    let members: Vec<String> = match &spec.members {
        CsMembers::Vms(names) => names
            .iter()
            .map(|n| live.vm_by_name(n).unwrap().id.clone())
            .collect(),
        CsMembers::Cluster(_) => vec!["vm-4".into()],
    };
    for p in &spec.ports {
        let rule = rule_of(spec, p, IP_ID);
        live.rule_members.insert(rule.id.clone(), members.clone());
        live.rules.push(rule);
        live.firewall_rules.push(firewall_of(spec, p));
    }
    live
}

pub(super) fn state_of(spec: &CloudstackLoadBalancerSpec, live: &Inventory) -> ResourceState {
    let ids = LbIds {
        public_ip: Some(IP_ID.into()),
        address: Some(IP.into()),
        ip_associated_by_skyplan: true,
        network: Some(NET_ID.into()),
        rules: live
            .rules_on(IP_ID)
            .map(|r| (r.name.clone(), r.id.clone()))
            .collect(),
    };
    ResourceState {
        provider: "cloudstack".into(),
        id: IP_ID.into(),
        ids: serde_json::to_value(ids).unwrap(),
        attributes: serde_json::to_value(spec).unwrap(),
        depends_on: vec![],
    }
}

#[derive(Default, Clone, Copy)]
pub(super) struct Flags {
    pub replace: bool,
    pub allow_delete: bool,
    pub no_state: bool,
}

pub(super) fn plan_in(
    live: &Inventory,
    applied: Option<&CloudstackLoadBalancerSpec>,
    desired: Option<&CloudstackLoadBalancerSpec>,
    cluster: Option<ClusterRef<'_>>,
    flags: Flags,
) -> Result<ResourceChange, ProviderError> {
    let prior = applied
        .filter(|_| !flags.no_state)
        .map(|spec| state_of(spec, live));
    let address = address();
    super::plan(
        &PlanInput {
            address: &address,
            desired,
            prior: prior.as_ref(),
            live,
            replace: flags.replace,
            allow_delete: flags.allow_delete,
        },
        cluster,
    )
}

/// Plans the base spec changed by `change` against the account where the base was applied.
fn plan_change(change: impl FnOnce(&mut CloudstackLoadBalancerSpec)) -> ResourceChange {
    let before = base();
    let mut after = base();
    change(&mut after);
    plan_in(
        &world(&before),
        Some(&before),
        Some(&after),
        None,
        Flags::default(),
    )
    .unwrap()
}

fn ops(change: &ResourceChange) -> Vec<String> {
    change.operations.iter().map(|op| op.to_string()).collect()
}

fn only(change: &ResourceChange) -> &AttributeChange {
    assert_eq!(change.attributes.len(), 1, "{:#?}", change.attributes);
    &change.attributes[0]
}

fn assert_row(change: &AttributeChange, path: &str, impact: Impact, reason_has: &str) {
    assert_eq!(change.path, path, "{change:#?}");
    assert_eq!(change.impact, impact, "{change:#?}");
    assert!(
        change.reason.contains(reason_has),
        "reason {:?} lacks {reason_has:?}",
        change.reason
    );
}

const ROUTER: &str = "also reloads 1 other rule of network k8s-net: other-tcp-443";

#[test]
fn an_unchanged_load_balancer_plans_nothing() {
    let change = plan_change(|_| {});
    assert_eq!(change.action, Action::NoOp);
    assert!(change.attributes.is_empty() && change.operations.is_empty());
}

#[test]
fn cidrs_compare_as_sets_whatever_the_separator() {
    let mut spec = base();
    spec.allowed_cidrs = vec!["192.168.0.0/16".into(), "10.0.0.0/8".into()];
    let mut live = world(&spec);
    live.rules
        .iter_mut()
        .find(|r| r.id == "rule-80")
        .unwrap()
        .cidrlist = Some("10.0.0.0/8,192.168.0.0/16".into());
    let change = plan_in(&live, Some(&spec), Some(&spec), None, Flags::default()).unwrap();
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.attributes);
}

#[test]
fn an_added_load_balancer_is_created_with_ip_rules_members_and_firewall() {
    let spec = base();
    let change = plan_in(&empty_world(), None, Some(&spec), None, Flags::default()).unwrap();
    assert_eq!(change.action, Action::Create);
    assert_row(only(&change), "", Impact::None, "members: web-1, web-2");
    assert_eq!(
        ops(&change),
        [
            "associate a new public IP with network k8s-net",
            "tag the public IP",
            "create LB rule edge-tcp-80 (tcp 80 → 30080)",
            "tag LB rule edge-tcp-80",
            "assign web-1, web-2 to LB rule edge-tcp-80",
            "create firewall rule tcp/80 from 0.0.0.0/0",
        ]
    );
    assert_eq!(change.record, Some(skyplan_core::plan::Record::of(&spec)));
}

#[test]
fn a_given_allocated_address_is_used_without_associating() {
    let mut spec = base();
    spec.public_ip = PublicIp::Address("198.51.100.20".into());
    let change = plan_in(&empty_world(), None, Some(&spec), None, Flags::default()).unwrap();
    assert_eq!(
        ops(&change)[0],
        "create LB rule edge-tcp-80 (tcp 80 → 30080)"
    );
}

#[test]
fn an_unknown_given_address_is_a_plan_error() {
    let mut spec = base();
    spec.public_ip = PublicIp::Address("203.0.113.9".into());
    let error = plan_in(&empty_world(), None, Some(&spec), None, Flags::default()).unwrap_err();
    assert!(error.message.contains("203.0.113.9"), "{error}");
}

#[test]
fn rule_name_is_updated_in_place() {
    let change = plan_change(|s| s.name = "front".into());
    assert_row(only(&change), "name", Impact::None, "renamed in place");
    assert_eq!(change.attributes[0].after, json!("front-tcp-80"));
    assert_eq!(ops(&change), ["update LB rule edge-tcp-80"]);
}

#[test]
fn rule_description_is_updated_in_place() {
    let change = plan_change(|s| s.description = Some("shop frontend".into()));
    assert_row(only(&change), "description", Impact::None, "description");
    assert_eq!(ops(&change), ["update LB rule edge-tcp-80"]);
}

#[test]
fn a_port_added_creates_its_rule_members_and_firewall_rule() {
    let change = plan_change(|s| s.ports.push(port(443, CsProtocol::Tcp, 30443)));
    assert_row(only(&change), "ports.443", Impact::None, "new LB rule");
    assert!(change.attributes[0].reason.contains(ROUTER));
    assert_eq!(
        ops(&change),
        [
            "create LB rule edge-tcp-443 (tcp 443 → 30443)",
            "tag LB rule edge-tcp-443",
            "assign web-1, web-2 to LB rule edge-tcp-443",
            "create firewall rule tcp/443 from 0.0.0.0/0",
        ]
    );
}

#[test]
fn a_port_removed_deletes_its_rule_and_firewall_rule() {
    let mut before = base();
    before.ports.push(port(443, CsProtocol::Tcp, 30443));
    let after = base();
    let change = plan_in(
        &world(&before),
        Some(&before),
        Some(&after),
        None,
        Flags::default(),
    )
    .unwrap();
    assert_row(
        only(&change),
        "ports.443",
        Impact::PoolRecreate,
        "stops serving",
    );
    assert_eq!(
        ops(&change),
        [
            "delete firewall rule tcp/443",
            "delete LB rule edge-tcp-443"
        ]
    );
}

#[test]
fn algorithm_is_updated_in_place_and_names_the_router_neighbours() {
    let change = plan_change(|s| s.algorithm = CsAlgorithm::Source);
    assert_row(
        only(&change),
        "algorithm",
        Impact::Minimal,
        "updated in place",
    );
    assert!(change.attributes[0].reason.contains(ROUTER));
    assert_eq!(change.attributes[0].before, json!("roundrobin"));
    assert_eq!(change.attributes[0].after, json!("source"));
    assert_eq!(ops(&change), ["update LB rule edge-tcp-80"]);
    let Some(Op::Lb(LbOp::UpdateRule { update, .. })) = Op::of(&change.operations[0]) else {
        panic!("not an update");
    };
    assert_eq!(update.algorithm, Some(CsAlgorithm::Source));
    assert_eq!(update.cidrs, None);
}

#[test]
fn allowed_cidrs_on_4_22_are_updated_in_place() {
    let change = plan_change(|s| s.allowed_cidrs = vec!["10.0.0.0/8".into()]);
    assert_row(only(&change), "allowed-cidrs", Impact::Minimal, "4.22");
    assert_eq!(change.attributes[0].before, json!([]));
    assert_eq!(change.attributes[0].after, json!(["10.0.0.0/8"]));
    assert_eq!(ops(&change), ["update LB rule edge-tcp-80"]);
    let Some(Op::Lb(LbOp::UpdateRule { update, .. })) = Op::of(&change.operations[0]) else {
        panic!("not an update");
    };
    assert_eq!(update.cidrs, Some(vec!["10.0.0.0/8".to_string()]));
}

fn on_version(
    version: &str,
    after: &CloudstackLoadBalancerSpec,
) -> Result<ResourceChange, ProviderError> {
    let before = base();
    let mut live = world(&before);
    live.capabilities.as_mut().unwrap().cloudstackversion = version.into();
    plan_in(&live, Some(&before), Some(after), None, Flags::default())
}

#[test]
fn allowed_cidrs_before_4_22_delete_and_create_the_rule() {
    let mut after = base();
    after.allowed_cidrs = vec!["10.0.0.0/8".into()];
    let change = on_version("4.20.1.0", &after).unwrap();
    assert_row(
        only(&change),
        "allowed-cidrs",
        Impact::PoolRecreate,
        "before 4.22",
    );
    assert_eq!(
        ops(&change),
        [
            "delete LB rule edge-tcp-80",
            "create LB rule edge-tcp-80 (tcp 80 → 30080)",
            "tag LB rule edge-tcp-80",
            "assign web-1, web-2 to LB rule edge-tcp-80",
        ]
    );
}

#[test]
fn a_cidrlist_on_create_before_4_18_is_a_plan_error_unless_empty() {
    let mut after = base();
    after.allowed_cidrs = vec!["10.0.0.0/8".into()];
    let error = on_version("4.17.2.0", &after).unwrap_err();
    assert!(error.message.contains("4.18"), "{error}");
    assert!(error.message.starts_with("allowed-cidrs"), "{error}");
    let mut added = base();
    added.ports.push(port(443, CsProtocol::Tcp, 30443));
    let change = on_version("4.17.2.0", &added).unwrap();
    assert_eq!(change.impact(), Impact::None);
}

#[test]
fn tcp_to_tcp_proxy_deletes_then_creates_the_rule() {
    let change = plan_change(|s| s.ports[0].protocol = CsProtocol::TcpProxy);
    assert_row(
        only(&change),
        "ports.80.protocol",
        Impact::PoolRecreate,
        "conflict, 537",
    );
    assert_eq!(
        ops(&change),
        [
            "delete LB rule edge-tcp-80",
            "create LB rule edge-tcp-proxy-80 (tcp-proxy 80 → 30080)",
            "tag LB rule edge-tcp-proxy-80",
            "assign web-1, web-2 to LB rule edge-tcp-proxy-80",
        ]
    );
}

#[test]
fn tcp_to_udp_off_the_virtual_router_recreates_rule_and_firewall_rule() {
    let before = base();
    let mut live = world(&before);
    // An external LB provider on a shared network: udp is allowed there.
    live.networks = vec![network(NET_ID, NET, "Shared", &["Lb", "Firewall"])];
    let mut after = base();
    after.ports[0].protocol = CsProtocol::Udp;
    let change = plan_in(&live, Some(&before), Some(&after), None, Flags::default()).unwrap();
    assert_row(
        only(&change),
        "ports.80.protocol",
        Impact::PoolRecreate,
        "537",
    );
    assert_eq!(
        ops(&change),
        [
            "delete firewall rule tcp/80",
            "delete LB rule edge-tcp-80",
            "create LB rule edge-udp-80 (udp 80 → 30080)",
            "tag LB rule edge-udp-80",
            "assign web-1, web-2 to LB rule edge-udp-80",
            "create firewall rule udp/80 from 0.0.0.0/0",
        ]
    );
}

#[test]
fn udp_on_a_virtual_router_network_is_a_plan_error() {
    let mut after = base();
    after.ports[0].protocol = CsProtocol::Udp;
    let error = on_version("4.22.0.0", &after).unwrap_err();
    assert!(error.message.starts_with("ports.80.protocol"), "{error}");
    assert!(
        error
            .message
            .contains("LB service provider cannot support this rule"),
        "{error}"
    );
}

#[test]
fn a_public_port_change_creates_the_new_rule_before_deleting_the_old() {
    let change = plan_change(|s| s.ports[0].port = 8080);
    assert_row(
        only(&change),
        "ports.8080.port",
        Impact::Minimal,
        "then the old rule",
    );
    assert_eq!(change.attributes[0].before, json!(80));
    assert_eq!(
        ops(&change),
        [
            "create LB rule edge-tcp-8080 (tcp 8080 → 30080)",
            "tag LB rule edge-tcp-8080",
            "assign web-1, web-2 to LB rule edge-tcp-8080",
            "create firewall rule tcp/8080 from 0.0.0.0/0",
            "delete firewall rule tcp/80",
            "delete LB rule edge-tcp-80",
        ]
    );
}

#[test]
fn a_node_port_change_deletes_then_creates_the_rule() {
    let change = plan_change(|s| s.ports[0].node_port = 31080);
    assert_row(
        only(&change),
        "ports.80.node-port",
        Impact::PoolRecreate,
        "private port cannot be updated",
    );
    assert_eq!(
        ops(&change),
        [
            "delete LB rule edge-tcp-80",
            "create LB rule edge-tcp-80 (tcp 80 → 31080)",
            "tag LB rule edge-tcp-80",
            "assign web-1, web-2 to LB rule edge-tcp-80",
        ]
    );
}

#[test]
fn members_added_and_removed_are_assigned_and_removed() {
    let change = plan_change(|s| {
        s.members = CsMembers::Vms(vec!["web-1".into(), "web-3".into()]);
    });
    assert_row(
        only(&change),
        "members",
        Impact::Minimal,
        "added: web-3; removed: web-2",
    );
    assert_eq!(change.attributes[0].before, json!(["web-1", "web-2"]));
    assert_eq!(change.attributes[0].after, json!(["web-1", "web-3"]));
    assert_eq!(
        ops(&change),
        [
            "assign web-3 to LB rule edge-tcp-80",
            "remove web-2 from LB rule edge-tcp-80",
        ]
    );
}

#[test]
fn an_unknown_member_vm_is_a_plan_error_listing_the_vms() {
    let error = plan_in(
        &empty_world(),
        None,
        Some(&CloudstackLoadBalancerSpec {
            members: CsMembers::Vms(vec!["web-9".into()]),
            ..base()
        }),
        None,
        Flags::default(),
    )
    .unwrap_err();
    assert!(error.message.contains("web-9"), "{error}");
    assert!(
        error.message.contains("lab-node-1, web-1, web-2, web-3"),
        "{error}"
    );
}

#[test]
fn a_changed_public_ip_is_forbidden() {
    let change = plan_change(|s| s.public_ip = PublicIp::Address("198.51.100.20".into()));
    assert_row(
        only(&change),
        "public-ip",
        Impact::Forbidden,
        "address users reach",
    );
    assert!(change.operations.is_empty());
    assert!(change.is_refused());
}

#[test]
fn a_changed_network_is_forbidden() {
    let before = base();
    let mut live = world(&before);
    live.networks.push(network(
        "net-2",
        "other-net",
        "Isolated",
        &["Lb", "Firewall"],
    ));
    // The members have a NIC in both networks.
    for vm in &mut live.vms {
        let mut second = vm.nic[0].clone();
        second.networkid = "net-2".into();
        second.isdefault = false;
        vm.nic.push(second);
    }
    let mut after = base();
    after.network = Some("other-net".into());
    let change = plan_in(&live, Some(&before), Some(&after), None, Flags::default()).unwrap();
    assert_row(only(&change), "network", Impact::Forbidden, "cannot move");
    assert!(change.operations.is_empty());
}

#[test]
fn replace_deletes_everything_and_creates_on_a_new_ip() {
    let before = base();
    let flags = Flags {
        replace: true,
        ..Flags::default()
    };
    let change = plan_in(&world(&before), Some(&before), Some(&before), None, flags).unwrap();
    assert_eq!(change.action, Action::Replace);
    assert!(change.requested && !change.is_refused());
    assert_row(only(&change), "", Impact::Forbidden, "deleted");
    assert_eq!(
        ops(&change),
        [
            "delete firewall rule tcp/80",
            "delete LB rule edge-tcp-80",
            "release public IP 198.51.100.10",
            "associate a new public IP with network k8s-net",
            "tag the public IP",
            "create LB rule edge-tcp-80 (tcp 80 → 30080)",
            "tag LB rule edge-tcp-80",
            "assign web-1, web-2 to LB rule edge-tcp-80",
            "create firewall rule tcp/80 from 0.0.0.0/0",
        ]
    );
}

#[test]
fn firewall_cidrs_delete_then_create_the_firewall_rules() {
    let change = plan_change(|s| s.firewall_cidrs = vec!["203.0.113.0/24".into()]);
    assert_row(
        only(&change),
        "firewall-cidrs",
        Impact::Minimal,
        "deleted, then created",
    );
    assert_eq!(
        ops(&change),
        [
            "delete firewall rule tcp/80",
            "create firewall rule tcp/80 from 203.0.113.0/24",
        ]
    );
}

#[test]
fn firewall_cidrs_on_a_vpc_tier_are_ignored_and_said_so() {
    let before = base();
    let mut live = world(&before);
    let mut tier = network(NET_ID, NET, "Isolated", &["Lb", "NetworkACL", "SourceNat"]);
    tier.vpcid = Some("vpc-1".into());
    live.networks = vec![tier];
    live.firewall_rules.clear();
    let mut after = base();
    after.firewall_cidrs = vec!["203.0.113.0/24".into()];
    let change = plan_in(&live, Some(&before), Some(&after), None, Flags::default()).unwrap();
    assert_row(only(&change), "firewall-cidrs", Impact::None, "VPC tiers");
    assert!(change.operations.is_empty());
}

#[test]
fn the_haproxy_stats_port_is_a_plan_error() {
    let error = plan_in(
        &empty_world(),
        None,
        Some(&CloudstackLoadBalancerSpec {
            ports: vec![port(8081, CsProtocol::Tcp, 30081)],
            ..base()
        }),
        None,
        Flags::default(),
    )
    .unwrap_err();
    assert!(error.message.starts_with("ports.8081"), "{error}");
    assert!(error.message.contains("stats port"), "{error}");
}

#[test]
fn port_53_on_a_source_nat_ip_is_a_plan_error() {
    let mut live = empty_world();
    live.public_ips.push(PublicIpAddress {
        allocated: None,
        id: "ip-snat".into(),
        ipaddress: "198.51.100.1".into(),
        associatednetworkid: Some(NET_ID.into()),
        issourcenat: true,
        state: "Allocated".into(),
        zoneid: "zone-1".into(),
        vpcid: None,
        tags: vec![],
    });
    let spec = CloudstackLoadBalancerSpec {
        public_ip: PublicIp::Address("198.51.100.1".into()),
        ports: vec![port(53, CsProtocol::Tcp, 30053)],
        ..base()
    };
    let error = plan_in(&live, None, Some(&spec), None, Flags::default()).unwrap_err();
    assert!(error.message.contains("source-NAT"), "{error}");
}

#[test]
fn a_removed_load_balancer_is_forbidden_unless_allowed() {
    let before = base();
    let live = world(&before);
    let change = plan_in(&live, Some(&before), None, None, Flags::default()).unwrap();
    assert_eq!(change.action, Action::Delete);
    assert_row(only(&change), "", Impact::Forbidden, "--allow-delete");
    assert!(change.is_refused() && change.operations.is_empty());

    let flags = Flags {
        allow_delete: true,
        ..Flags::default()
    };
    let change = plan_in(&live, Some(&before), None, None, flags).unwrap();
    assert!(!change.is_refused());
    assert_eq!(
        ops(&change),
        [
            "delete firewall rule tcp/80",
            "delete LB rule edge-tcp-80",
            "release public IP 198.51.100.10",
        ]
    );
}

#[test]
fn a_deleted_load_balancer_on_a_given_address_keeps_the_ip() {
    let mut before = base();
    before.public_ip = PublicIp::Address(IP.into());
    let mut live = world(&before);
    live.public_ips.iter_mut().for_each(|ip| ip.tags.clear());
    let mut state = state_of(&before, &live);
    state.ids["ip_associated_by_skyplan"] = json!(false);
    let address = address();
    let change = super::plan(
        &PlanInput {
            address: &address,
            desired: None,
            prior: Some(&state),
            live: &live,
            replace: false,
            allow_delete: true,
        },
        None,
    )
    .unwrap();
    assert_eq!(
        ops(&change),
        ["delete firewall rule tcp/80", "delete LB rule edge-tcp-80"]
    );
}

#[test]
fn a_lost_state_adopts_the_tagged_ip_and_rules() {
    let spec = base();
    let flags = Flags {
        no_state: true,
        ..Flags::default()
    };
    let change = plan_in(&world(&spec), Some(&spec), Some(&spec), None, flags).unwrap();
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.attributes);
}

#[test]
fn drift_shows_a_hand_made_change_as_what_restores_it() {
    let spec = base();
    let mut live = world(&spec);
    live.rules
        .iter_mut()
        .find(|r| r.id == "rule-80")
        .unwrap()
        .algorithm = "leastconn".into();
    let state = state_of(&spec, &live);
    let address = address();
    let input = PlanInput {
        address: &address,
        desired: Some(&spec),
        prior: Some(&state),
        live: &live,
        replace: false,
        allow_delete: false,
    };
    let DriftCheck::Compared(changes) = super::drift(&input, None).unwrap() else {
        panic!("not compared");
    };
    assert_eq!(changes.len(), 1);
    assert_row(&changes[0], "algorithm", Impact::Minimal, "in place");
    assert_eq!(changes[0].before, json!("leastconn"));

    let gone = empty_world();
    let input = PlanInput {
        live: &gone,
        ..input
    };
    assert_eq!(super::drift(&input, None).unwrap(), DriftCheck::Missing);
}

// ---- members from a cluster ----------------------------------------------------------------

pub(super) fn cluster_spec(workers: u32, network: Option<&str>) -> CloudstackClusterSpec {
    CloudstackClusterSpec {
        name: "lab".into(),
        description: None,
        zone: "zone1".into(),
        kubernetes_version: "1.29.3".into(),
        control_nodes: 1,
        etcd_nodes: 0,
        workers,
        service_offering: "Medium Instance".into(),
        node_offerings: Default::default(),
        network: network.map(str::to_string),
        keypair: None,
        autoscaling: None,
        state: ClusterRunState::Running,
    }
}

pub(super) fn live_cluster(size: u32) -> KubernetesCluster {
    serde_json::from_value(json!({
        "id": "k-1", "name": "lab", "zoneid": "zone-1", "kubernetesversionid": "v-1",
        "serviceofferingid": "o-1", "networkid": NET_ID, "size": size, "controlnodes": 1,
        "state": "Running",
        "virtualmachines": [
            {"id": "vm-5", "name": "lab-control-1"},
            {"id": "vm-4", "name": "lab-node-1"}
        ]
    }))
    .unwrap()
}

/// The plan of a load balancer on cluster.lab: configured with `workers`, running with one.
pub(super) fn plan_on_lab(
    world: &Inventory,
    applied: Option<&CloudstackLoadBalancerSpec>,
    desired: Option<&CloudstackLoadBalancerSpec>,
    workers: u32,
) -> ResourceChange {
    let cluster_address = Address::new(ResourceKind::Cluster, "lab");
    let config = cluster_spec(workers, None);
    let running = live_cluster(1);
    let cluster = ClusterRef {
        address: &cluster_address,
        spec: Some(&config),
        live: Some(&running),
    };
    plan_in(world, applied, desired, Some(cluster), Flags::default()).unwrap()
}

fn cluster_lb() -> CloudstackLoadBalancerSpec {
    CloudstackLoadBalancerSpec {
        network: None,
        members: CsMembers::Cluster("lab".into()),
        ..base()
    }
}

#[test]
fn members_of_a_live_cluster_are_its_workers() {
    let spec = cluster_lb();
    let change = plan_on_lab(&empty_world(), None, Some(&spec), 1);
    assert!(ops(&change).contains(&"assign lab-node-1 to LB rule edge-tcp-80".to_string()));
    assert!(ops(&change)[0].contains("network k8s-net"));
    let unchanged = plan_on_lab(&world(&spec), Some(&spec), Some(&spec), 1);
    assert_eq!(
        unchanged.action,
        Action::NoOp,
        "{:#?}",
        unchanged.attributes
    );
}

#[test]
fn members_of_a_cluster_scaled_in_the_same_apply_are_resolved_after_it() {
    let spec = cluster_lb();
    let change = plan_on_lab(&world(&spec), Some(&spec), Some(&spec), 4);
    let members = only(&change);
    assert_row(
        members,
        "members",
        Impact::Minimal,
        "LB rule edge-tcp-80: the cluster is applied first",
    );
    // Known only once the cluster is scaled: a marker, never a sentence in place of the list.
    assert_eq!(members.before, json!(["lab-node-1"]));
    assert_eq!(
        members.after,
        unknown("the 4 workers of cluster.lab, known once it is applied")
    );
    assert_eq!(
        ops(&change),
        ["assign the workers of cluster lab to LB rule edge-tcp-80"]
    );
}

/// Two ports, 443 changed to tcp-proxy (its rule recreated), 80 kept.
fn two_rules_one_recreated(
    members: CsMembers,
) -> (CloudstackLoadBalancerSpec, CloudstackLoadBalancerSpec) {
    let before = CloudstackLoadBalancerSpec {
        ports: vec![
            port(80, CsProtocol::Tcp, 30080),
            port(443, CsProtocol::Tcp, 30443),
        ],
        ..base()
    };
    let mut after = before.clone();
    after.ports[1].protocol = CsProtocol::TcpProxy;
    after.members = members;
    (before, after)
}

#[test]
fn the_members_of_rules_recreated_and_kept_are_one_row_of_the_highest_class() {
    let (before, after) = two_rules_one_recreated(CsMembers::Vms(vec!["web-3".into()]));
    let change = plan_in(
        &world(&before),
        Some(&before),
        Some(&after),
        None,
        Flags::default(),
    )
    .unwrap();
    let paths: Vec<&str> = change.attributes.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(paths, ["ports.443.protocol", "members"]);
    let members = &change.attributes[1];
    // The highest class and the overlapping downtime of what each rule does (both rows of
    // the table's members row).
    assert_eq!(members.impact, rule(Change::Members).impact);
    assert_eq!(members.downtime, rule(Change::Members).downtime);
    assert_eq!(members.before, json!(["web-1", "web-2"]));
    assert_eq!(members.after, json!(["web-3"]));
    assert!(
        members.reason.starts_with(
            "LB rules edge-tcp-443, edge-tcp-80: for edge-tcp-443, set anew when the rule is recreated (members (VMs) added/removed) — for edge-tcp-80, VMs are assigned to or removed from the rules"
        ),
        "{}",
        members.reason
    );
    assert!(members
        .reason
        .contains("(added: web-3; removed: web-1, web-2)"));
    assert!(members.reason.contains(ROUTER), "{}", members.reason);
    // Never less than the rows it replaces: the recreation, then the kept rule's assignment.
    assert_eq!(members.group, "LB rule edge-tcp-80");
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(
        change.downtime(),
        skyplan_core::model::Downtime::new(60, 125)
    );
    assert_eq!(
        ops(&change),
        [
            "assign web-3 to LB rule edge-tcp-80",
            "remove web-1, web-2 from LB rule edge-tcp-80",
            "delete LB rule edge-tcp-443",
            "create LB rule edge-tcp-proxy-443 (tcp-proxy 443 → 30443)",
            "tag LB rule edge-tcp-proxy-443",
            "assign web-3 to LB rule edge-tcp-proxy-443",
        ]
    );
}

#[test]
fn the_workers_of_a_scaled_cluster_on_two_rules_are_one_unknown_members_row() {
    let (before, after) = two_rules_one_recreated(CsMembers::Cluster("lab".into()));
    let before = CloudstackLoadBalancerSpec {
        members: CsMembers::Cluster("lab".into()),
        network: None,
        ..before
    };
    let after = CloudstackLoadBalancerSpec {
        network: None,
        ..after
    };
    let change = plan_on_lab(&world(&before), Some(&before), Some(&after), 2);
    let members: Vec<&AttributeChange> = change
        .attributes
        .iter()
        .filter(|a| a.path == "members")
        .collect();
    let [members] = members.as_slice() else {
        panic!("one members row: {:#?}", change.attributes);
    };
    assert_eq!(members.impact, rule(Change::MembersAfterCluster).impact);
    assert_eq!(members.downtime, rule(Change::MembersAfterCluster).downtime);
    assert_eq!(members.before, json!(["lab-node-1"]));
    assert_eq!(
        members.after,
        unknown("the 2 workers of cluster.lab, known once it is applied")
    );
    assert!(
        members.reason.starts_with(
            "LB rules edge-tcp-443, edge-tcp-80: for edge-tcp-443, set anew when the rule is recreated (members of a cluster that is created or scaled in the same apply) — for edge-tcp-80, the cluster is applied first"
        ),
        "{}",
        members.reason
    );
    assert_eq!(
        change.downtime(),
        skyplan_core::model::Downtime::new(60, 125)
    );
    assert_eq!(
        ops(&change),
        [
            "assign the workers of cluster lab to LB rule edge-tcp-80",
            "delete LB rule edge-tcp-443",
            "create LB rule edge-tcp-proxy-443 (tcp-proxy 443 → 30443)",
            "tag LB rule edge-tcp-proxy-443",
            "assign the workers of cluster lab to LB rule edge-tcp-proxy-443",
        ]
    );
}

#[test]
fn the_members_of_two_recreated_rules_are_one_row_within_the_first_recreation() {
    let before = CloudstackLoadBalancerSpec {
        ports: vec![
            port(80, CsProtocol::Tcp, 30080),
            port(443, CsProtocol::Tcp, 30443),
        ],
        ..base()
    };
    let mut after = before.clone();
    after.ports[0].protocol = CsProtocol::TcpProxy;
    after.ports[1].protocol = CsProtocol::TcpProxy;
    after.members = CsMembers::Vms(vec!["web-3".into()]);
    let change = plan_in(
        &world(&before),
        Some(&before),
        Some(&after),
        None,
        Flags::default(),
    )
    .unwrap();
    let paths: Vec<&str> = change.attributes.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(
        paths,
        ["ports.80.protocol", "ports.443.protocol", "members"]
    );
    let members = &change.attributes[2];
    assert_eq!(
        members.reason,
        "LB rules edge-tcp-443, edge-tcp-80: set anew when each rule is recreated (members (VMs) added/removed)"
    );
    assert_eq!(members.group, "LB rule edge-tcp-80");
    // Two recreations one after the other, the members within them.
    assert_eq!(
        change.downtime(),
        skyplan_core::model::Downtime::new(60, 240)
    );
}

#[test]
fn a_load_balancer_of_a_cluster_not_created_yet_takes_its_network_at_apply_time() {
    let spec = cluster_lb();
    let cluster_address = Address::new(ResourceKind::Cluster, "lab");
    let config = cluster_spec(3, None);
    let cluster = ClusterRef {
        address: &cluster_address,
        spec: Some(&config),
        live: None,
    };
    let change = plan_in(
        &empty_world(),
        None,
        Some(&spec),
        Some(cluster),
        Flags::default(),
    )
    .unwrap();
    assert_row(
        only(&change),
        "",
        Impact::None,
        "the 3 workers of cluster.lab after it is applied",
    );
    assert_eq!(
        ops(&change),
        [
            "associate a new public IP with the network of cluster lab",
            "tag the public IP",
            "create LB rule edge-tcp-80 (tcp 80 → 30080)",
            "tag LB rule edge-tcp-80",
            "assign the workers of cluster lab to LB rule edge-tcp-80",
            "create firewall rule tcp/80 from 0.0.0.0/0",
        ]
    );
    // CKS makes an isolated virtual-router network: udp would be refused there.
    let udp = CloudstackLoadBalancerSpec {
        ports: vec![port(5000, CsProtocol::Udp, 30500)],
        ..cluster_lb()
    };
    let error = plan_in(
        &empty_world(),
        None,
        Some(&udp),
        Some(cluster),
        Flags::default(),
    )
    .unwrap_err();
    assert!(error.message.contains("virtual router"), "{error}");
}

#[test]
fn changes_a_recreation_carries_are_shown_within_its_downtime() {
    let change = plan_change(|s| {
        s.algorithm = CsAlgorithm::Source;
        s.ports[0].protocol = CsProtocol::TcpProxy;
        s.members = CsMembers::Vms(vec!["web-3".into()]);
    });
    let paths: Vec<&str> = change.attributes.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(paths, ["ports.80.protocol", "algorithm", "members"]);
    assert_row(
        &change.attributes[1],
        "algorithm",
        Impact::Minimal,
        "set anew when the rule is recreated",
    );
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(
        change.downtime(),
        skyplan_core::model::Downtime::new(60, 120)
    );
    assert_eq!(
        ops(&change),
        [
            "delete LB rule edge-tcp-80",
            "create LB rule edge-tcp-proxy-80 (tcp-proxy 80 → 30080)",
            "tag LB rule edge-tcp-proxy-80",
            "assign web-3 to LB rule edge-tcp-proxy-80",
        ]
    );
}

#[test]
fn a_given_address_of_another_network_is_a_plan_error() {
    let mut live = empty_world();
    live.networks.push(network(
        "net-2",
        "other-net",
        "Isolated",
        &["Lb", "Firewall"],
    ));
    live.public_ips[0].associatednetworkid = Some("net-2".into());
    let spec = CloudstackLoadBalancerSpec {
        public_ip: PublicIp::Address("198.51.100.20".into()),
        ..base()
    };
    let error = plan_in(&live, None, Some(&spec), None, Flags::default()).unwrap_err();
    assert!(error.message.starts_with("public-ip"), "{error}");
    assert!(error.message.contains("other-net"), "{error}");
}

/// The state entry `import ADDR ID` starts from: the ID claimed, nothing else known yet.
fn claimed(id: &str) -> ResourceState {
    ResourceState {
        provider: "cloudstack".into(),
        id: id.into(),
        ids: json!({}),
        attributes: json!(null),
        depends_on: vec![],
    }
}

#[test]
fn import_takes_the_ip_by_address_and_its_rules_and_then_plans_nothing() {
    let spec = CloudstackLoadBalancerSpec {
        public_ip: PublicIp::Address(IP.into()),
        ..base()
    };
    let mut live = world(&spec);
    live.public_ips.iter_mut().for_each(|ip| ip.tags.clear());
    live.rules.iter_mut().for_each(|r| r.tags.clear());
    let address = address();
    let named = claimed(IP);
    let input = PlanInput {
        address: &address,
        desired: Some(&spec),
        prior: Some(&named),
        live: &live,
        replace: false,
        allow_delete: false,
    };
    let state = super::import(&input).unwrap();
    assert_eq!(state.id, IP_ID);
    let ids: LbIds = serde_json::from_value(state.ids.clone()).unwrap();
    assert!(!ids.ip_associated_by_skyplan);
    assert_eq!(
        ids.rules.get("edge-tcp-80").map(String::as_str),
        Some("rule-80")
    );
    let change = super::plan(
        &PlanInput {
            prior: Some(&state),
            ..input
        },
        None,
    )
    .unwrap();
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.attributes);
}

/// An address skyplan did not associate carries no tag of this load balancer: with
/// `public-ip = "auto"` a lost state would not find it, so the import names the address to
/// write. One skyplan associated (its tag) is imported as auto, as `state rm` left it.
#[test]
fn import_of_an_untagged_ip_as_auto_is_refused_naming_the_address_to_write() {
    let spec = base();
    let mut live = world(&spec);
    let address = address();
    let named = claimed(IP);
    let import = |live: &Inventory| {
        super::import(&PlanInput {
            address: &address,
            desired: Some(&spec),
            prior: Some(&named),
            live,
            replace: false,
            allow_delete: false,
        })
    };
    let tagged = import(&live).unwrap();
    let ids: LbIds = serde_json::from_value(tagged.ids).unwrap();
    assert!(ids.ip_associated_by_skyplan);
    live.public_ips.iter_mut().for_each(|ip| ip.tags.clear());
    let error = import(&live).unwrap_err();
    assert!(error.message.starts_with("public-ip: \"auto\""), "{error}");
    assert!(
        error
            .message
            .ends_with(&format!("write public-ip = \"{IP}\" to import it")),
        "{error}"
    );
}

#[test]
fn a_port_another_rule_holds_on_the_ip_is_a_plan_error() {
    // The other load balancer's IP, which holds other-tcp-443.
    let spec = CloudstackLoadBalancerSpec {
        public_ip: PublicIp::Address("198.51.100.20".into()),
        ports: vec![port(443, CsProtocol::Tcp, 30443)],
        ..base()
    };
    let error = plan_in(&empty_world(), None, Some(&spec), None, Flags::default()).unwrap_err();
    assert!(error.message.starts_with("ports.443"), "{error}");
    assert!(error.message.contains("other-tcp-443"), "{error}");
}

#[test]
fn a_shared_network_with_another_lb_provider_names_no_router_neighbours() {
    let before = base();
    let mut live = world(&before);
    live.networks = vec![network(NET_ID, NET, "Shared", &["Lb", "Firewall"])];
    let mut after = base();
    after.algorithm = CsAlgorithm::LeastConn;
    let change = plan_in(&live, Some(&before), Some(&after), None, Flags::default()).unwrap();
    assert!(
        !only(&change).reason.contains("also reloads"),
        "{}",
        change.attributes[0].reason
    );
}

#[test]
fn a_member_outside_the_rules_network_is_a_plan_error() {
    let mut live = empty_world();
    live.networks.push(network(
        "net-2",
        "other-net",
        "Isolated",
        &["Lb", "Firewall"],
    ));
    live.vms[2].nic[0].networkid = "net-2".into();
    let spec = CloudstackLoadBalancerSpec {
        members: CsMembers::Vms(vec!["web-1".into(), "web-3".into()]),
        ..base()
    };
    let error = plan_in(&live, None, Some(&spec), None, Flags::default()).unwrap_err();
    assert!(
        error
            .message
            .starts_with("members: web-3 has no NIC in network k8s-net"),
        "{error}"
    );
}

#[test]
fn members_of_an_autoscaled_cluster_are_its_live_workers() {
    let spec = cluster_lb();
    let cluster_address = Address::new(ResourceKind::Cluster, "lab");
    let mut config = cluster_spec(4, None);
    config.autoscaling = Some(crate::spec::Autoscaling { min: 1, max: 5 });
    let running = live_cluster(1);
    let cluster = ClusterRef {
        address: &cluster_address,
        spec: Some(&config),
        live: Some(&running),
    };
    let change = plan_in(
        &world(&spec),
        Some(&spec),
        Some(&spec),
        Some(cluster),
        Flags::default(),
    )
    .unwrap();
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.attributes);
}

#[test]
fn ignored_firewall_cidrs_on_a_vpc_tier_are_no_drift() {
    let mut spec = base();
    spec.firewall_cidrs = vec!["203.0.113.0/24".into()];
    let mut live = world(&spec);
    let mut tier = network(NET_ID, NET, "Isolated", &["Lb", "NetworkACL", "SourceNat"]);
    tier.vpcid = Some("vpc-1".into());
    live.networks = vec![tier];
    live.firewall_rules.clear();
    let state = state_of(&spec, &live);
    let address = address();
    let input = PlanInput {
        address: &address,
        desired: Some(&spec),
        prior: Some(&state),
        live: &live,
        replace: false,
        allow_delete: false,
    };
    assert_eq!(
        super::drift(&input, None).unwrap(),
        DriftCheck::Compared(vec![])
    );
    assert_eq!(super::plan(&input, None).unwrap().action, Action::NoOp);
}
