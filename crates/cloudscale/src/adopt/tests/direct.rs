//! Direct mode: a load balancer made by hand (or by skyplan, as its tag says) adopted with
//! members as addresses; what differs from the defaults is written, what the config cannot
//! say is refused at the attribute the plan would name.

use super::*;
use crate::spec::{Algorithm, HttpCheck, MonitorType, PoolProtocol, TrafficPolicy, VipAddress};

const UUID: &str = "0f8a1e36-5d4b-4c1e-9a51-000000000001";

fn two_ports() -> CloudscaleLoadBalancerSpec {
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults("legacy web", "rma1");
    spec.members = vec!["10.0.0.11".into(), "10.0.0.12".into()];
    spec.ports = vec![port("https", 443, 30443), port("http", 80, 30080)];
    spec
}

/// Adopted as `legacy-web`: the config text, and the plan of what it reads as against the
/// live objects, with it as the applied spec.
fn adopted(live: LbObjects) -> (String, skyplan_core::plan::ResourceChange) {
    let survey = survey(vec![live.clone()], vec![]);
    let text = config_of(generated("legacy-web", UUID, &survey));
    let spec = read("legacy-web", &text);
    let desired =
        crate::desired::desired_objects(&lb_address("legacy-web"), &spec, &made::subnets())
            .unwrap();
    let change = crate::diff::diff(&crate::diff::DiffInput {
        address: &lb_address("legacy-web"),
        desired: Some((&spec, &desired)),
        prior: Some(&spec),
        live: Some(&live),
        replace: false,
        allow_delete: false,
        tag: false,
    });
    (text, change)
}

#[test]
fn a_load_balancer_made_by_hand_is_written_with_what_differs_from_the_defaults() {
    let mut spec = two_ports();
    spec.flavor = "lb-large".into();
    spec.algorithm = Algorithm::LeastConnections;
    spec.pool_protocol = PoolProtocol::Proxy;
    spec.allowed_cidrs = vec!["192.0.2.0/24".into()];
    spec.timeouts.member_connect_ms = 3000;
    spec.health_monitor.kind = MonitorType::Http;
    spec.health_monitor.delay_s = 5;
    spec.health_monitor.http = Some(HttpCheck {
        url_path: "/healthz".into(),
        ..HttpCheck::default()
    });
    spec.floating_ips = vec!["5.102.150.1/32".into()];
    let (text, change) = adopted(untagged(created(&spec, UUID)));
    assert_eq!(
        text,
        r#"[load-balancer.legacy-web]
provider = "cloudscale"
name = "legacy web"
flavor = "lb-large"
zone = "rma1"
floating-ips = ["5.102.150.1/32"]
algorithm = "least_connections"
pool-protocol = "proxy"
allowed-cidrs = ["192.0.2.0/24"]
timeouts = { member-connect-ms = 3000 }
health-monitor = { type = "http", delay-s = 5, http = { url-path = "/healthz" } }
members = ["10.0.0.11", "10.0.0.12"]

[[load-balancer.legacy-web.ports]]
name = "http"
port = 80
node-port = 30080

[[load-balancer.legacy-web.ports]]
name = "https"
port = 443
node-port = 30443
"#
    );
    assert!(change.attributes.is_empty(), "{change:#?}");
    assert!(change.operations.is_empty(), "{change:#?}");
}

#[test]
fn defaults_are_not_written() {
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults("legacy-web", "lpg1");
    spec.members = vec!["10.0.0.11".into()];
    spec.ports = vec![port("", 80, 30080)];
    let (text, change) = adopted(untagged(created(&spec, UUID)));
    assert_eq!(
        text,
        "[load-balancer.legacy-web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
         [[load-balancer.legacy-web.ports]]\nport = 80\nnode-port = 30080\n"
    );
    assert!(change.attributes.is_empty(), "{change:#?}");
}

#[test]
fn members_checked_by_http_on_one_other_port_are_a_local_traffic_policy() {
    let mut spec = two_ports();
    spec.traffic_policy = TrafficPolicy::Local;
    spec.health_check_node_port = Some(32100);
    let (text, change) = adopted(untagged(created(&spec, UUID)));
    assert!(
        text.contains("traffic-policy = \"Local\"\nhealth-check-node-port = 32100\n"),
        "{text}"
    );
    assert!(
        !text.contains("health-monitor"),
        "the livez check is Local's default: {text}"
    );
    assert!(change.attributes.is_empty(), "{change:#?}");
}

#[test]
fn private_vip_addresses_are_written_and_a_public_one_is_not() {
    let mut spec = two_ports();
    spec.vip_addresses = vec![VipAddress {
        subnet: SUBNET.into(),
        address: Some("10.0.0.200".into()),
    }];
    let (text, change) = adopted(untagged(created(&spec, UUID)));
    assert!(
        text.contains(&format!(
            "vip-addresses = [{{ subnet = \"{SUBNET}\", address = \"10.0.0.200\" }}]\n"
        )),
        "{text}"
    );
    assert!(change.attributes.is_empty(), "{change:#?}");
    let (public, _) = adopted(untagged(created(&two_ports(), UUID)));
    assert!(!public.contains("vip-addresses"), "{public}");
}

#[test]
fn a_load_balancer_skyplan_made_keeps_its_tag_and_is_adopted_in_direct_mode() {
    let live = created(&two_ports(), UUID);
    assert_eq!(live.lb.tags["skyplan.address"], "load-balancer.web");
    let survey = survey(vec![live], vec![]);
    let text = config_of(generated("web", UUID, &survey));
    assert!(text.starts_with("[load-balancer.web]\n"), "{text}");
    assert!(!text.contains("mode"), "{text}");
    let (attribute, reason) = refusal_of(generated("web-2", UUID, &survey));
    assert_eq!(attribute, "tags.skyplan.address");
    assert!(
        reason.contains(&format!("adopt it as load-balancer.web (import --generate-config FILE load-balancer.web={UUID})")),
        "{reason}"
    );
}

/// The refusal for adopting `live` as it is after `change`.
fn refused(change: impl FnOnce(&mut LbObjects)) -> (String, String) {
    let mut live = untagged(created(&two_ports(), UUID));
    change(&mut live);
    refusal_of(generated("legacy-web", UUID, &survey(vec![live], vec![])))
}

fn pool<'a>(live: &'a mut LbObjects, name: &str) -> &'a mut crate::objects::PoolSet {
    live.pools.get_mut(name).expect("the pool")
}

#[test]
fn pools_that_differ_where_the_config_has_one_value_are_refused() {
    let (attribute, reason) =
        refused(|live| pool(live, "tcp/http").pool.algorithm = "source_ip".into());
    assert!(attribute.ends_with(".algorithm"), "{attribute}");
    assert!(reason.contains("one algorithm for every port"), "{reason}");
    let (attribute, _) = refused(|live| {
        let listener = pool(live, "tcp/https").listener.as_mut().unwrap();
        listener.allowed_cidrs = vec!["192.0.2.0/24".into()];
    });
    assert_eq!(attribute, "allowed-cidrs");
    let (attribute, reason) = refused(|live| {
        let members = &mut pool(live, "tcp/http").members;
        members.remove("10.0.0.12:30080");
    });
    assert!(attribute.ends_with(".members"), "{attribute}");
    assert!(reason.contains("members"), "{reason}");
}

#[test]
fn what_the_config_cannot_say_is_refused_at_its_attribute() {
    let (attribute, _) = refused(|live| {
        let listener = pool(live, "tcp/http").listener.as_mut().unwrap();
        listener.protocol = "tls".into();
        listener.name = "tls/80".into();
    });
    assert_eq!(attribute, "ports.http.listener-protocol");
    let (attribute, _) = refused(|live| {
        for set in live.pools.values_mut() {
            set.monitor.as_mut().unwrap().kind = "sctp".into();
        }
    });
    assert_eq!(attribute, "health-monitor.type");
    let (attribute, _) = refused(|live| pool(live, "tcp/http").pool.protocol = "udp".into());
    assert_eq!(attribute, "ports.http.pool-protocol");
    let (attribute, _) = refused(|live| {
        let listener = pool(live, "tcp/http").listener.as_mut().unwrap();
        listener.name = "web".into();
    });
    assert_eq!(attribute, "ports.http.listener-name");
    let (attribute, reason) = refused(|live| pool(live, "tcp/http").listener = None);
    assert_eq!(attribute, "ports.http.port");
    assert!(reason.contains("no listener"), "{reason}");
    let (attribute, _) = refused(|live| pool(live, "tcp/http").monitor = None);
    assert_eq!(attribute, "ports.http.health-monitor");
    let (attribute, _) = refused(|live| live.pools = Default::default());
    assert_eq!(attribute, "ports");
}

#[test]
fn members_not_as_skyplan_makes_them_are_refused() {
    let (attribute, reason) = refused(|live| {
        let member = pool(live, "tcp/http")
            .members
            .get_mut("10.0.0.11:30080")
            .unwrap();
        member.enabled = false;
    });
    assert_eq!(attribute, "ports.http.members");
    assert!(reason.contains("disabled"), "{reason}");
    let (attribute, reason) = refused(|live| {
        let members = &mut pool(live, "tcp/http").members;
        let mut member = members.remove("10.0.0.11:30080").unwrap();
        member.name = "node-1".into();
        members.insert("node-1".into(), member);
    });
    assert_eq!(attribute, "ports.http.members");
    assert!(reason.contains("10.0.0.11:30080"), "{reason}");
    let (attribute, _) = refused(|live| {
        let member = pool(live, "tcp/http")
            .members
            .get_mut("10.0.0.11:30080")
            .unwrap();
        member.monitor_port = 31999;
    });
    assert_eq!(attribute, "ports.http.monitor-port");
    let (attribute, _) = refused(|live| {
        let member = pool(live, "tcp/http")
            .members
            .get_mut("10.0.0.11:30080")
            .unwrap();
        member.subnet = "6d0d7d4c-0000-4000-8000-000000000009".into();
    });
    assert_eq!(attribute, "ports.http.members");
}

#[test]
fn pools_named_otherwise_or_twice_are_refused() {
    let (attribute, reason) = refused(|live| {
        let set = pool(live, "tcp/http").clone();
        live.pools.insert("tcp/http#second".into(), set);
    });
    assert_eq!(attribute, "ports");
    assert!(reason.contains("two pools are named tcp/http"), "{reason}");
    let (attribute, _) = refused(|live| {
        let mut set = live.pools.remove("tcp/http").unwrap();
        set.pool.name = "web".into();
        live.pools.insert("web".into(), set);
    });
    assert_eq!(attribute, "ports.80");
}

#[test]
fn an_empty_host_header_is_refused() {
    let mut spec = two_ports();
    spec.health_monitor.kind = MonitorType::Http;
    spec.health_monitor.http = Some(HttpCheck::default());
    let mut live = untagged(created(&spec, UUID));
    for set in live.pools.values_mut() {
        set.monitor.as_mut().unwrap().http.as_mut().unwrap().host = Some(String::new());
    }
    let (attribute, _) = refusal_of(generated("legacy-web", UUID, &survey(vec![live], vec![])));
    assert_eq!(attribute, "health-monitor.http.host");
}

#[test]
fn a_load_balancer_named_as_the_ccm_names_one_for_a_service_elsewhere_is_refused() {
    let mut spec = two_ports();
    spec.name = "k8s-service-3f1c2d4e-0000-4000-8000-000000000001".into();
    let live = untagged(created(&spec, UUID));
    let (attribute, reason) =
        refusal_of(generated("legacy-web", UUID, &survey(vec![live], vec![])));
    assert_eq!(attribute, "service");
    assert!(reason.contains("no connected cluster"), "{reason}");
}
