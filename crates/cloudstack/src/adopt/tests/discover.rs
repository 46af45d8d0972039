//! Who made what, and what the targets already manage.

use serde_json::json;

use super::*;
use crate::adopt::discover;
use skyplan_core::provider::discover::{Maker, ServiceRef, Unmanaged};

fn found(live: &Live, targets: &[Target]) -> Vec<Unmanaged> {
    let mut found = discover(targets, live).unmanaged;
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

fn by_id<'a>(found: &'a [Unmanaged], id: &str) -> &'a Unmanaged {
    found
        .iter()
        .find(|u| u.id == id)
        .unwrap_or_else(|| panic!("{id} not found: {found:#?}"))
}

#[test]
fn everything_unclaimed_is_listed_once_with_who_made_it() {
    let found = found(&surveyed(), &[]);
    let ids: Vec<&str> = found.iter().map(|u| u.id.as_str()).collect();
    assert_eq!(ids, ["c1", "ip-edge", "ip-shop", "ip-web"], "no api-lb");

    let lab = by_id(&found, "c1");
    assert_eq!(lab.kind, ResourceKind::Cluster);
    assert_eq!(lab.made_by, Maker::Unknown);
    assert_eq!(lab.address, address("cluster.lab"));
    assert_eq!(lab.cluster, None);
    assert_eq!(
        lab.summary,
        "Running, zone zone1, Kubernetes 1.29.3, 1 control + 3 workers (Medium Instance), network lab-network"
    );

    let web = by_id(&found, "ip-web");
    assert_eq!(web.made_by, Maker::Unknown);
    assert_eq!(web.name, "web");
    assert_eq!(web.address, address("load-balancer.web"));
    assert_eq!(web.cluster, None, "k8s-net holds no cluster");
    assert_eq!(
        web.summary,
        "203.0.113.10: tcp 80→30080, tcp 443→30443, network k8s-net"
    );
    assert!(web.importable);

    let edge = by_id(&found, "ip-edge");
    assert_eq!(edge.made_by, Maker::Skyplan(address("load-balancer.edge")));
    assert_eq!(edge.address, address("load-balancer.edge"));
    assert_eq!(edge.cluster, Some(address("cluster.lab")));

    let shop = by_id(&found, "ip-shop");
    assert_eq!(shop.made_by, Maker::Controller("CloudStack CCM".into()));
    assert_eq!(shop.name, shop_base());
    assert_eq!(shop.address, address("load-balancer.shop"));
    assert_eq!(
        shop.service,
        Some(ServiceRef {
            cluster: address("cluster.lab"),
            service: "default/shop".into()
        })
    );
    assert_eq!(shop.cluster, Some(address("cluster.lab")));
    assert_eq!(
        shop.summary,
        "203.0.113.30: tcp 80→31080, network lab-network"
    );
    assert!(shop.importable);
}

#[test]
fn what_the_targets_manage_is_not_listed_and_bound_services_are_named() {
    let live = surveyed();
    let lab = address("cluster.lab");
    let edge = address("load-balancer.edge");
    let shop = address("load-balancer.shop");
    let web = address("load-balancer.web");
    let lab_state = ResourceState {
        id: "c1".into(),
        ids: json!({}),
        ..claimed("c1")
    };
    // A controller-mode load balancer in the state: its rules as the last apply recorded them.
    let shop_state = ResourceState {
        id: "r-shop-80".into(),
        ids: json!({"rules": {format!("{}-tcp-80", shop_base()): "r-shop-80"}}),
        attributes: json!({
            "name": "shop", "public_ip": "auto", "members": {"cluster": "lab"},
            "algorithm": "roundrobin", "allowed_cidrs": [], "firewall_cidrs": ["0.0.0.0/0"],
            "ports": [{"port": 80, "protocol": "tcp", "node_port": 0}],
            "binding": {"cluster": "cluster.lab", "namespace": "default", "name": "shop",
                        "mode": "ccm"}
        }),
        ..claimed("r-shop-80")
    };
    // A direct-mode load balancer in the state under another address, by the IP's ID.
    let web_state = ResourceState {
        ids: json!({"public_ip": "ip-web"}),
        ..claimed("ip-web")
    };
    let targets = [
        Target {
            address: &lab,
            resource: None,
            prior: Some(&lab_state),
        },
        // No state: found by its tag, as a lost state is.
        Target {
            address: &edge,
            resource: None,
            prior: None,
        },
        Target {
            address: &shop,
            resource: None,
            prior: Some(&shop_state),
        },
        Target {
            address: &web,
            resource: None,
            prior: Some(&web_state),
        },
    ];
    let discovered = discover(&targets, &live);
    assert_eq!(discovered.unmanaged, vec![], "all managed");
    assert_eq!(
        discovered.bound,
        vec![ServiceRef {
            cluster: lab.clone(),
            service: "default/shop".into()
        }]
    );
}

#[test]
fn a_tag_naming_a_target_is_not_a_lost_object() {
    let live = surveyed();
    // load-balancer.edge is configured, but with another public IP: the tagged IP is not its.
    let edge = address("load-balancer.edge");
    let state = ResourceState {
        ids: json!({"public_ip": "ip-web"}),
        ..claimed("ip-web")
    };
    let targets = [Target {
        address: &edge,
        resource: None,
        prior: Some(&state),
    }];
    let found = found(&live, &targets);
    assert!(found.iter().all(|u| u.id != "ip-web"));
    // Its plan finds the IP of its state, so the tagged one is not its: listed, but not as a
    // lost object of skyplan's.
    let edge = by_id(&found, "ip-edge");
    assert_eq!(edge.made_by, Maker::Unknown);
}

#[test]
fn ccm_rules_whose_service_cannot_be_read_are_listed_but_not_importable() {
    let mut live = surveyed();
    live.surveyed.clusters[0].services =
        Err("CKS cluster lab is Stopped: its Kubernetes API is not up".into());
    let found = found(&live, &[]);
    let shop = by_id(&found, "ip-shop");
    assert_eq!(shop.made_by, Maker::Controller("CloudStack CCM".into()));
    assert!(!shop.importable);
    assert_eq!(shop.service, None);
    assert_eq!(shop.address, address("load-balancer.203-0-113-30"));
    assert!(shop.summary.contains("is Stopped"), "{}", shop.summary);
}

#[test]
fn ccm_rules_whose_service_is_gone_are_left_over_and_importable() {
    let live = surveyed_with(account(), vec![]);
    let found = found(&live, &[]);
    let shop = by_id(&found, "ip-shop");
    assert_eq!(shop.made_by, Maker::Controller("CloudStack CCM".into()));
    assert!(shop.importable);
    assert!(
        shop.summary.ends_with("its Service no longer exists"),
        "{}",
        shop.summary
    );
}

#[test]
fn a_service_written_by_skyplan_names_its_lost_address() {
    let mut service = shop_service();
    service.metadata.annotations = Some(
        [(
            "skyplan.address".to_string(),
            "load-balancer.store".to_string(),
        )]
        .into(),
    );
    let live = surveyed_with(account(), vec![service]);
    let found = found(&live, &[]);
    let shop = by_id(&found, "ip-shop");
    assert_eq!(shop.made_by, Maker::Skyplan(address("load-balancer.store")));
    assert_eq!(shop.address, address("load-balancer.store"));
}
