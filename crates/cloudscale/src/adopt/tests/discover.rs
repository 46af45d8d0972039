//! Which load balancers no target manages, and who made each.

use super::*;
use crate::adopt::discover;
use skyplan_core::provider::discover::{Maker, ServiceRef, Unmanaged};
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

fn uuid(n: u8) -> String {
    format!("0f8a1e36-5d4b-4c1e-9a51-0000000000{n:02}")
}

/// A load balancer named `name` under `uuid(n)`, untagged unless `tag` says otherwise.
fn lb(n: u8, name: &str, tag: Option<&str>) -> LbObjects {
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults(name, "lpg1");
    spec.members = vec!["10.0.0.11".into()];
    spec.ports = vec![port("http", 80, 30080)];
    let mut lb = untagged(created(&spec, &uuid(n)));
    if let Some(tag) = tag {
        lb.lb.tags.insert("skyplan.address".into(), tag.into());
    }
    lb
}

fn annotated(name: &str, uid: &str, lb: Option<u8>) -> Service {
    let annotation = lb.map(|n| ("k8s.cloudscale.ch/loadbalancer-uuid", uuid(n)));
    let annotations: Vec<(&str, &str)> = annotation.iter().map(|(k, v)| (*k, v.as_str())).collect();
    service(name, uid, &annotations, &[("http", 80, 31080)])
}

/// A target known from the state alone, with the spec it was last applied with.
fn applied(uuid: &str, spec: Option<&CloudscaleLoadBalancerSpec>) -> ResourceState {
    ResourceState {
        attributes: spec.map_or(Value::Null, |s| serde_json::to_value(s).unwrap()),
        ..claimed(uuid)
    }
}

fn bound(service: &str, mode: LbMode) -> CloudscaleLoadBalancerSpec {
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults(service, "lpg1");
    spec.ports = vec![port("http", 80, 0)];
    spec.binding = Some(ServiceBinding {
        cluster: cluster(),
        namespace: "default".into(),
        name: service.into(),
        mode,
    });
    spec
}

const API_UID: &str = "3f1c2d4e-0000-4000-8000-0000000000a1";

fn found() -> (Vec<Unmanaged>, Vec<ServiceRef>) {
    let live = survey(
        vec![
            lb(1, "by-state", None),
            lb(2, "by-tag", Some("load-balancer.kept")),
            lb(3, "for-store", None),
            lb(4, "lost", Some("load-balancer.old")),
            lb(5, "for-web", None),
            lb(6, &format!("k8s-service-{API_UID}"), None),
            lb(7, "legacy", None),
            lb(8, "k8s-service-3f1c2d4e-0000-4000-8000-0000000000ff", None),
        ],
        vec![
            annotated("store", "3f1c2d4e-0000-4000-8000-0000000000a3", Some(3)),
            annotated("web", "3f1c2d4e-0000-4000-8000-0000000000a5", Some(5)),
            annotated("api", API_UID, None),
        ],
    );
    let addresses = [
        lb_address("state"),
        lb_address("kept"),
        lb_address("store"),
        lb_address("cart"),
    ];
    let store = bound("store", LbMode::Ccm);
    let cart = bound("cart", LbMode::Direct);
    let entries = [
        applied(&uuid(1), None),
        applied("not-in-the-account", None),
        applied("", Some(&store)),
        applied("", Some(&cart)),
    ];
    let targets: Vec<Target> = addresses
        .iter()
        .zip(&entries)
        .map(|(address, entry)| Target {
            address,
            resource: None,
            prior: Some(entry),
        })
        .collect();
    let discovered = discover(&targets, &live);
    (discovered.unmanaged, discovered.bound)
}

fn named<'a>(found: &'a [Unmanaged], name: &str) -> &'a Unmanaged {
    found
        .iter()
        .find(|u| u.name == name)
        .unwrap_or_else(|| panic!("{name} not found in {found:#?}"))
}

#[test]
fn load_balancers_a_target_manages_by_state_tag_or_service_are_not_listed() {
    let (found, _) = found();
    let names: Vec<&str> = found.iter().map(|u| u.name.as_str()).collect();
    for managed in ["by-state", "by-tag", "for-store"] {
        assert!(!names.contains(&managed), "{managed} in {names:?}");
    }
    assert_eq!(names.len(), 5, "{names:?}");
}

#[test]
fn each_is_listed_with_who_made_it_and_the_address_it_would_get() {
    let (found, _) = found();
    let lost = named(&found, "lost");
    assert_eq!(lost.made_by, Maker::Skyplan(lb_address("old")));
    assert_eq!(lost.address, lb_address("old"), "its tag stays its own");
    assert!(lost.importable && lost.service.is_none());

    let web = named(&found, "for-web");
    assert_eq!(web.made_by, Maker::Controller("cloudscale CCM".into()));
    assert_eq!(web.cluster, Some(cluster()));
    let service = web.service.as_ref().unwrap();
    assert_eq!(
        (&service.cluster, service.service.as_str()),
        (&cluster(), "default/web")
    );
    assert_eq!(web.address, lb_address("web"), "named after its Service");
    assert_eq!(web.id, uuid(5));
    assert!(web.importable);

    let api = named(&found, &format!("k8s-service-{API_UID}"));
    assert_eq!(api.made_by, Maker::Controller("cloudscale CCM".into()));
    assert_eq!(api.service.as_ref().unwrap().service, "default/api");

    let legacy = named(&found, "legacy");
    assert_eq!(legacy.made_by, Maker::Unknown);
    assert_eq!(
        (legacy.provider.as_str(), legacy.address.clone()),
        ("cloudscale", lb_address("legacy"))
    );
    assert_eq!(legacy.summary, "10.0.0.100, lpg1, lb-standard, port 80/tcp");

    let orphan = named(&found, "k8s-service-3f1c2d4e-0000-4000-8000-0000000000ff");
    assert_eq!(orphan.made_by, Maker::Controller("cloudscale CCM".into()));
    assert!(
        !orphan.importable,
        "adopted in direct mode it would be the CCM's and skyplan's"
    );
}

#[test]
fn the_services_the_targets_are_bound_to_are_reported() {
    let (_, bound) = found();
    let services: Vec<&str> = bound.iter().map(|s| s.service.as_str()).collect();
    assert_eq!(services, ["default/cart", "default/store"]);
}

#[test]
fn the_summary_names_every_port_and_floating_ip() {
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults("web", "rma1");
    spec.ports = vec![port("http", 80, 30080), port("dns", 53, 30053)];
    spec.ports[1].protocol = crate::spec::PortProtocol::Udp;
    spec.floating_ips = vec!["5.102.150.1/32".into(), "5.102.150.2/32".into()];
    let lb = created(&spec, &uuid(9));
    assert_eq!(
        super::super::discover::summary(&lb),
        "10.0.0.100, rma1, lb-standard, ports 53/udp 80/tcp, floating IPs 5.102.150.1/32 5.102.150.2/32"
    );
}
