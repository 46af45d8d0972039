//! One test per row of impact.md's cloudscale table, at the level of the pure diff: apply a
//! spec change to a load balancer that matches the old spec and check the class and the
//! operations.

use super::*;
use crate::desired::desired_objects;
use crate::objects::SubnetObject;
use crate::spec::{
    Algorithm, ListenerProtocol, MonitorType, PoolProtocol, PortProtocol, PortSpec, TrafficPolicy,
};
use skyplan_core::model::{Impact, ResourceKind};

const SUBNET: &str = "6d0d7d4c-0000-4000-8000-000000000001";

fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "hello")
}

fn subnets() -> Vec<SubnetObject> {
    vec![SubnetObject {
        uuid: SUBNET.into(),
        cidr: "10.0.0.0/24".into(),
    }]
}

fn base() -> CloudscaleLoadBalancerSpec {
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults("hello-lb", "lpg1");
    spec.members = vec!["10.0.0.11".into(), "10.0.0.12".into()];
    spec.floating_ips = vec!["5.102.150.123/32".into()];
    spec.ports = vec![PortSpec {
        name: "http".into(),
        port: 80,
        protocol: PortProtocol::Tcp,
        node_port: 30080,
    }];
    spec
}

/// Plans `change` against a load balancer that was applied from the base spec.
fn plan(change: impl FnOnce(&mut CloudscaleLoadBalancerSpec)) -> ResourceChange {
    let before = base();
    let mut after = base();
    change(&mut after);
    plan_from(Some(&before), &after, Some(&before), false)
}

/// Plans `after` against a load balancer built from `live` (`None`: not in the cloud), with
/// `prior` as the last-applied spec.
fn plan_from(
    live: Option<&CloudscaleLoadBalancerSpec>,
    after: &CloudscaleLoadBalancerSpec,
    prior: Option<&CloudscaleLoadBalancerSpec>,
    replace: bool,
) -> ResourceChange {
    let live = live.map(|spec| desired_objects(&address(), spec, &subnets()).unwrap());
    let desired = desired_objects(&address(), after, &subnets()).unwrap();
    diff(&DiffInput {
        address: &address(),
        desired: Some((after, &desired)),
        prior,
        live: live.as_ref(),
        replace,
        allow_delete: false,
        tag: true,
    })
}

fn ops(change: &ResourceChange) -> Vec<String> {
    change.operations.iter().map(|o| o.to_string()).collect()
}

fn assert_class(change: &ResourceChange, impact: Impact, path: &str) {
    assert_eq!(change.impact(), impact, "{change:#?}");
    assert!(
        change.attributes.iter().any(|a| a.path == path),
        "no change at {path}: {change:#?}"
    );
}

#[test]
fn unchanged_is_a_no_op() {
    let change = plan(|_| {});
    assert_eq!(change.action, Action::NoOp);
    assert!(change.operations.is_empty());
}

#[test]
fn lb_name_is_none() {
    let change = plan(|s| s.name = "renamed".into());
    assert_class(&change, Impact::None, "name");
    assert_eq!(ops(&change), ["rename load balancer to renamed"]);
}

#[test]
fn an_untagged_load_balancer_is_tagged_in_place_keeping_its_tags_with_impact_none() {
    let spec = base();
    let mut live = desired_objects(&address(), &spec, &subnets()).unwrap();
    live.lb.tags = [("team".to_string(), "edge".to_string())].into();
    let desired = desired_objects(&address(), &spec, &subnets()).unwrap();
    let address = address();
    let input = |tag| DiffInput {
        address: &address,
        desired: Some((&spec, &desired)),
        prior: Some(&spec),
        live: Some(&live),
        replace: false,
        allow_delete: false,
        tag,
    };
    let change = diff(&input(true));
    assert_eq!(change.action, Action::Update);
    assert_class(&change, Impact::None, "tags.skyplan.address");
    assert_eq!(change.attributes[0].before, serde_json::Value::Null);
    assert_eq!(change.attributes[0].after, "load-balancer.hello");
    assert_eq!(
        ops(&change),
        ["tag load balancer skyplan.address=load-balancer.hello"]
    );
    let tagged = crate::ops::Op::of(&change.operations[0]);
    let Some(crate::ops::Op::TagLb { tags }) = tagged else {
        panic!("{tagged:?}");
    };
    assert_eq!(tags.get("team").map(String::as_str), Some("edge"));
    assert_eq!(
        diff(&input(false)).action,
        Action::NoOp,
        "drift and the CCM's load balancer are never tagged"
    );
}

#[test]
fn a_tag_naming_another_address_is_left_as_a_move_left_it() {
    let spec = base();
    let mut live = desired_objects(&address(), &spec, &subnets()).unwrap();
    live.lb.tags = [(OWNER_TAG.to_string(), "load-balancer.old".to_string())].into();
    let desired = desired_objects(&address(), &spec, &subnets()).unwrap();
    let change = diff(&DiffInput {
        address: &address(),
        desired: Some((&spec, &desired)),
        prior: Some(&spec),
        live: Some(&live),
        replace: false,
        allow_delete: false,
        tag: true,
    });
    assert_eq!(change.action, Action::NoOp, "{change:#?}");
}

#[test]
fn listener_timeouts_are_none() {
    let change = plan(|s| s.timeouts.member_connect_ms = 1000);
    assert_class(&change, Impact::None, "timeouts.member-connect-ms");
    assert_eq!(ops(&change), ["update listener tcp/80"]);
}

#[test]
fn status_only_fields_are_none_without_calls() {
    let change = plan(|s| {
        s.force_hostname = Some("lb.example.com".into());
        s.ip_mode = crate::spec::IpMode::Vip;
    });
    assert_class(&change, Impact::None, "ip-mode");
    assert_class(&change, Impact::None, "force-hostname");
    assert!(change.operations.is_empty());
}

#[test]
fn allowed_cidrs_are_minimal() {
    let change = plan(|s| s.allowed_cidrs = vec!["1.2.3.0/24".into()]);
    assert_class(&change, Impact::Minimal, "allowed-cidrs");
    assert_eq!(ops(&change), ["update listener tcp/80"]);
}

#[test]
fn floating_ip_added_is_minimal_and_done_last() {
    let change = plan(|s| {
        s.floating_ips.push("5.102.150.124/32".into());
        s.name = "renamed".into();
    });
    assert_class(&change, Impact::Minimal, "floating-ips");
    assert_eq!(
        ops(&change).last().unwrap(),
        "assign floating IP 5.102.150.124/32"
    );
}

#[test]
fn floating_ip_removed_is_none_and_does_nothing() {
    let change = plan(|s| s.floating_ips.clear());
    assert_class(&change, Impact::None, "floating-ips");
    assert!(change.operations.is_empty());
    assert!(change.attributes[0].reason.contains("stays assigned"));
}

#[test]
fn monitor_numbers_and_http_fields_are_minimal_in_place() {
    let change = plan(|s| s.health_monitor.delay_s = 5);
    assert_class(&change, Impact::Minimal, "health-monitor.delay-s");
    assert_eq!(ops(&change), ["update health monitor of pool tcp/http"]);

    let http = |path: &str| {
        let path = path.to_string();
        move |s: &mut CloudscaleLoadBalancerSpec| {
            s.health_monitor.kind = MonitorType::Http;
            s.health_monitor.http = Some(crate::spec::HttpCheck {
                url_path: path,
                ..Default::default()
            });
        }
    };
    let before = {
        let mut s = base();
        http("/")(&mut s);
        s
    };
    let mut after = before.clone();
    http("/healthz")(&mut after);
    let change = plan_from(Some(&before), &after, Some(&before), false);
    assert_class(&change, Impact::Minimal, "health-monitor.http.url-path");
    assert_eq!(ops(&change), ["update health monitor of pool tcp/http"]);
}

#[test]
fn monitor_type_and_http_version_recreate_the_monitor() {
    let change = plan(|s| s.health_monitor.kind = MonitorType::Ping);
    assert_class(&change, Impact::Minimal, "health-monitor.type");
    assert_eq!(
        ops(&change),
        [
            "delete health monitor of pool tcp/http",
            "create health monitor ping of pool tcp/http"
        ]
    );
}

#[test]
fn listener_protocol_recreates_the_listener() {
    let change = plan(|s| s.listener_protocol = ListenerProtocol::Udp);
    assert_class(&change, Impact::Minimal, "ports.http.listener-protocol");
    assert_eq!(
        ops(&change),
        ["delete listener tcp/80", "create listener udp/80"]
    );
}

#[test]
fn port_number_with_the_same_name_recreates_only_the_listener() {
    let change = plan(|s| s.ports[0].port = 8080);
    assert_class(&change, Impact::Minimal, "ports.http.port");
    assert_eq!(change.downtime(), skyplan_core::model::Downtime::new(0, 15));
    assert_eq!(
        ops(&change),
        ["delete listener tcp/80", "create listener tcp/8080"]
    );
}

#[test]
fn port_added_is_none() {
    let change = plan(|s| {
        s.ports.push(PortSpec {
            name: "https".into(),
            port: 443,
            protocol: PortProtocol::Tcp,
            node_port: 30443,
        })
    });
    assert_class(&change, Impact::None, "ports.https");
    assert_eq!(ops(&change)[0], "create pool tcp/https");
    assert_eq!(change.operations.len(), 5);
}

#[test]
fn port_removed_is_pool_recreate_for_that_port() {
    let change = plan(|s| {
        s.ports.push(PortSpec {
            name: "https".into(),
            port: 443,
            protocol: PortProtocol::Tcp,
            node_port: 30443,
        });
    });
    assert_eq!(change.impact(), Impact::None);
    let mut two_ports = base();
    two_ports.ports.push(PortSpec {
        name: "https".into(),
        port: 443,
        protocol: PortProtocol::Tcp,
        node_port: 30443,
    });
    let change = plan_from(Some(&two_ports), &base(), None, false);
    assert_class(&change, Impact::PoolRecreate, "ports.https");
    assert_eq!(ops(&change).last().unwrap(), "delete pool tcp/https");
    assert!(!ops(&change)
        .iter()
        .any(|o| o.contains("tcp/http ") || o.ends_with("tcp/http")));
}

#[test]
fn port_name_change_recreates_the_pool() {
    let change = plan(|s| s.ports[0].name = "web".into());
    assert_class(&change, Impact::PoolRecreate, "ports.web.name");
    assert_eq!(ops(&change).first().unwrap(), "delete listener tcp/80");
    assert!(ops(&change).contains(&"create pool tcp/web".to_string()));

    let change = plan(|s| s.ports[0].name = String::new());
    assert_class(&change, Impact::PoolRecreate, "ports.80.name");
}

#[test]
fn port_protocol_change_recreates_the_pool() {
    let change = plan(|s| s.ports[0].protocol = PortProtocol::Udp);
    assert_class(&change, Impact::PoolRecreate, "ports.http.protocol");
    assert!(ops(&change).contains(&"create pool udp/http".to_string()));
}

#[test]
fn algorithm_and_pool_protocol_recreate_the_pool_once() {
    let change = plan(|s| {
        s.algorithm = Algorithm::SourceIp;
        s.pool_protocol = PoolProtocol::ProxyV2;
    });
    assert_class(&change, Impact::PoolRecreate, "ports.http.algorithm");
    assert_class(&change, Impact::PoolRecreate, "ports.http.pool-protocol");
    assert_eq!(
        change.downtime(),
        skyplan_core::model::Downtime::new(60, 120)
    );
    assert_eq!(
        ops(&change)
            .iter()
            .filter(|o| *o == "delete pool tcp/http")
            .count(),
        1
    );
}

#[test]
fn node_port_recreates_every_member_the_new_ones_first() {
    let change = plan(|s| s.ports[0].node_port = 31080);
    assert_class(&change, Impact::Minimal, "ports.http.node-port");
    assert_eq!(
        ops(&change),
        [
            "create member 10.0.0.11:31080",
            "create member 10.0.0.12:31080",
            "delete member 10.0.0.11:30080",
            "delete member 10.0.0.12:30080"
        ]
    );
}

#[test]
fn a_member_changed_under_its_own_name_is_deleted_and_created_again_at_once() {
    let change = plan(|s| {
        s.members = vec!["10.0.0.11".into(), "10.0.0.13".into()];
        s.traffic_policy = crate::spec::TrafficPolicy::Local;
        s.health_check_node_port = Some(32000);
    });
    let ops = ops(&change);
    let at = |op: &str| {
        ops.iter()
            .position(|o| o == op)
            .unwrap_or_else(|| panic!("no {op} in {ops:?}"))
    };
    assert!(
        at("create member 10.0.0.13:30080") < at("delete member 10.0.0.12:30080"),
        "{ops:?}"
    );
    assert_eq!(
        at("delete member 10.0.0.11:30080") + 1,
        at("create member 10.0.0.11:30080"),
        "{ops:?}"
    );
}

#[test]
fn members_added_or_removed_are_minimal() {
    let change = plan(|s| s.members.push("10.0.0.13".into()));
    assert_class(&change, Impact::Minimal, "ports.http.members");
    assert_eq!(ops(&change), ["create member 10.0.0.13:30080"]);
}

#[test]
fn traffic_policy_recreates_members_and_monitor_but_keeps_the_pool() {
    let change = plan(|s| {
        s.traffic_policy = TrafficPolicy::Local;
        s.health_check_node_port = Some(32000);
    });
    assert_class(&change, Impact::Minimal, "ports.http.monitor-port");
    assert_class(&change, Impact::Minimal, "health-monitor.type");
    assert!(change
        .attributes
        .iter()
        .all(|a| a.reason.contains("README")));
    assert!(!ops(&change)
        .iter()
        .any(|o| o.contains("pool tcp/http") && o.starts_with("delete pool")));
}

#[test]
fn allowed_subnets_only_change_members() {
    let change = plan(|s| s.allowed_subnets = vec!["00000000-0000-4000-8000-000000000009".into()]);
    assert_class(&change, Impact::Minimal, "ports.http.members");
    assert!(change.attributes[0].reason.contains("README"));
    assert_eq!(
        ops(&change),
        [
            "delete member 10.0.0.11:30080",
            "delete member 10.0.0.12:30080"
        ]
    );
}

#[test]
fn flavor_zone_and_vip_addresses_are_forbidden_and_not_attempted() {
    for change in [
        plan(|s| s.flavor = "lb-large".into()),
        plan(|s| s.zone = "rma1".into()),
    ] {
        assert_eq!(change.impact(), Impact::Forbidden);
        assert!(change.is_refused());
        assert!(change.operations.is_empty());
    }
    let change = plan(|s| {
        s.vip_addresses = vec![crate::spec::VipAddress {
            subnet: SUBNET.into(),
            address: Some("10.0.0.5".into()),
        }]
    });
    assert_class(&change, Impact::Forbidden, "vip-addresses");
}

#[test]
fn replace_destroys_and_creates() {
    let mut after = base();
    after.flavor = "lb-large".into();
    let change = plan_from(Some(&base()), &after, Some(&base()), true);
    assert_eq!(change.action, Action::Replace);
    assert!(!change.is_refused());
    assert_eq!(ops(&change)[0], "delete load balancer hello-lb");
    assert_eq!(ops(&change)[1], "create load balancer hello-lb");
}

#[test]
fn removal_is_forbidden_unless_allowed() {
    let live = desired_objects(&address(), &base(), &subnets()).unwrap();
    let input = |allow_delete| DiffInput {
        address: Box::leak(Box::new(address())),
        desired: None,
        prior: None,
        live: Some(Box::leak(Box::new(live.clone()))),
        replace: false,
        allow_delete,
        tag: true,
    };
    let refused = diff(&input(false));
    assert!(refused.is_refused());
    assert!(refused.operations.is_empty());
    let allowed = diff(&input(true));
    assert!(!allowed.is_refused());
    assert_eq!(ops(&allowed), ["delete load balancer hello-lb"]);
}

#[test]
fn a_new_load_balancer_is_none() {
    let change = plan_from(None, &base(), None, false);
    assert_eq!(change.action, Action::Create);
    assert_eq!(change.impact(), Impact::None);
    assert_eq!(
        ops(&change).first().unwrap(),
        "create load balancer hello-lb"
    );
    assert_eq!(
        ops(&change).last().unwrap(),
        "assign floating IP 5.102.150.123/32"
    );
}

#[test]
fn in_place_changes_of_a_recreated_pool_are_shown_without_operations_of_their_own() {
    let change = plan(|s| {
        s.algorithm = Algorithm::LeastConnections;
        s.timeouts.client_data_ms = 1000;
        s.health_monitor.up_threshold = 4;
    });
    assert_class(&change, Impact::PoolRecreate, "ports.http.algorithm");
    assert!(change
        .attributes
        .iter()
        .any(|a| a.path == "timeouts.client-data-ms" && a.reason.contains("recreated")));
    assert!(change
        .attributes
        .iter()
        .any(|a| a.path == "health-monitor.up-threshold"));
    assert!(!ops(&change).iter().any(|o| o.starts_with("update")));
    assert_eq!(
        change.downtime(),
        skyplan_core::model::Downtime::new(60, 120)
    );
}
