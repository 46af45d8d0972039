//! Controller mode: a load balancer the CCM made for a Service adopted as the Service-bound
//! load balancer whose Service is the live one — its annotations read back into config keys,
//! and refused where skyplan would write the Service otherwise.

use super::*;
use crate::spec::{Algorithm, TrafficPolicy};
use skyplan_core::plan::Action;

const UUID: &str = "0f8a1e36-5d4b-4c1e-9a51-000000000002";
const UID: &str = "3f1c2d4e-0000-4000-8000-0000000000aa";

fn key(suffix: &str) -> String {
    format!("k8s.cloudscale.ch/loadbalancer-{suffix}")
}

/// The CCM's load balancer for a Service with `annotations` (besides its uuid), on nodes 1
/// and 2, port http 80 on node port 31080.
struct Made {
    lb: LbObjects,
    service: Service,
}

fn made(annotations: &[(&str, &str)], spec: impl FnOnce(&mut CloudscaleLoadBalancerSpec)) -> Made {
    let mut lb = CloudscaleLoadBalancerSpec::with_defaults(format!("k8s-service-{UID}"), "lpg1");
    lb.members = vec!["10.0.0.11".into(), "10.0.0.12".into()];
    lb.ports = vec![port("http", 80, 31080)];
    spec(&mut lb);
    let mut all = vec![(key("uuid"), UUID.to_string())];
    all.extend(annotations.iter().map(|(k, v)| (key(k), v.to_string())));
    let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Made {
        lb: untagged(created(&lb, UUID)),
        service: service("shop", UID, &all, &[("http", 80, 31080)]),
    }
}

impl Made {
    fn survey(&self) -> Live {
        survey(vec![self.lb.clone()], vec![self.service.clone()])
    }

    fn generated(&self) -> Generated {
        generated("shop", UUID, &self.survey())
    }

    /// The config, which must plan nothing in controller mode.
    fn adopted(&self) -> String {
        let text = config_of(self.generated());
        let spec = read("shop", &text);
        let change = ccm_plan("shop", &spec, &self.service, &self.survey(), &[1, 2]);
        assert_eq!(change.action, Action::NoOp, "{change:#?}\n{text}");
        assert!(change.operations.is_empty(), "{change:#?}");
        text
    }
}

#[test]
fn the_ccms_annotations_become_the_config_keys_they_come_from() {
    let annotations = [
        ("name", "shop-lb"),
        ("pool-algorithm", "source_ip"),
        ("health-monitor-delay-s", "5"),
        ("listener-allowed-cidrs", "[\"10.0.0.0/8\"]"),
        ("timeout-member-connect-ms", "3000"),
    ];
    let made = made(&annotations, |lb| {
        lb.name = "shop-lb".into();
        lb.algorithm = Algorithm::SourceIp;
        lb.health_monitor.delay_s = 5;
        lb.allowed_cidrs = vec!["10.0.0.0/8".into()];
        lb.timeouts.member_connect_ms = 3000;
    });
    assert_eq!(
        made.adopted(),
        r#"[load-balancer.shop]
provider = "cloudscale"
name = "shop-lb"
zone = "lpg1"
cluster = "prod"
service = "default/shop"
mode = "ccm"
algorithm = "source_ip"
allowed-cidrs = ["10.0.0.0/8"]
timeouts = { member-connect-ms = 3000 }
health-monitor = { delay-s = 5 }

[[load-balancer.shop.ports]]
name = "http"
port = 80
"#
    );
}

#[test]
fn without_a_name_annotation_the_name_is_the_ccms_own() {
    let text = made(&[], |_| {}).adopted();
    assert!(
        text.contains(&format!("\nname = \"k8s-service-{UID}\"\n")),
        "{text}"
    );
}

#[test]
fn a_local_traffic_policy_is_read_from_the_service() {
    let mut made = made(&[], |lb| {
        lb.traffic_policy = TrafficPolicy::Local;
        lb.health_check_node_port = Some(32100);
    });
    let spec = made.service.spec.as_mut().unwrap();
    spec.external_traffic_policy = Some("Local".into());
    spec.health_check_node_port = Some(32100);
    let text = made.adopted();
    assert!(text.contains("\ntraffic-policy = \"Local\"\n"), "{text}");
    assert!(
        !text.contains("health-check-node-port"),
        "the Service's: {text}"
    );
    assert!(!text.contains("health-monitor"), "{text}");
}

#[test]
fn a_target_port_apart_from_the_port_is_refused() {
    let mut made = made(&[], |_| {});
    let ports = made.service.spec.as_mut().unwrap().ports.as_mut().unwrap();
    ports[0].target_port =
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8080));
    let (attribute, reason) = refusal_of(made.generated());
    assert_eq!(attribute, "service.ports.http.targetPort");
    assert!(reason.contains("targetPort = port"), "{reason}");
}

#[test]
fn annotations_skyplan_would_write_otherwise_are_refused_with_what_it_writes() {
    let explicit_default = made(&[("flavor", "lb-standard")], |_| {});
    let (attribute, reason) = refusal_of(explicit_default.generated());
    assert_eq!(attribute, format!("service.annotations.{}", key("flavor")));
    assert!(
        reason.contains("`lb-standard`") && reason.contains("none"),
        "{reason}"
    );
    let spaced = made(&[("listener-allowed-cidrs", "[ \"10.0.0.0/8\" ]")], |lb| {
        lb.allowed_cidrs = vec!["10.0.0.0/8".into()];
    });
    let (attribute, reason) = refusal_of(spaced.generated());
    assert_eq!(
        attribute,
        format!("service.annotations.{}", key("listener-allowed-cidrs"))
    );
    assert!(reason.contains(r#"`["10.0.0.0/8"]`"#), "{reason}");
    let unknown = made(&[("pool-algorithm", "fastest")], |_| {});
    let (attribute, reason) = refusal_of(unknown.generated());
    assert_eq!(
        attribute,
        format!("service.annotations.{}", key("pool-algorithm"))
    );
    assert!(reason.contains("`fastest`"), "{reason}");
    let not_a_cidr = made(&[("floating-ips", "[\"5.102.150.1\"]")], |_| {});
    let (attribute, _) = refusal_of(not_a_cidr.generated());
    assert_eq!(
        attribute,
        format!("service.annotations.{}", key("floating-ips"))
    );
}

#[test]
fn a_load_balancer_changed_behind_the_ccm_is_refused_where_the_ccm_would_change_it() {
    let mut made = made(&[], |_| {});
    made.lb.pools.get_mut("tcp/http").unwrap().pool.algorithm = "source_ip".into();
    let (attribute, reason) = refusal_of(made.generated());
    assert_eq!(attribute, "ports.http.algorithm");
    assert!(reason.contains("CCM"), "{reason}");
}

#[test]
fn an_sctp_port_is_refused() {
    let mut made = made(&[], |_| {});
    let ports = made.service.spec.as_mut().unwrap().ports.as_mut().unwrap();
    ports[0].protocol = Some("SCTP".into());
    let (attribute, _) = refusal_of(made.generated());
    assert_eq!(attribute, "ports.http.protocol");
}
