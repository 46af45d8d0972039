//! The controller-mode prediction, one test per row that a plan can reach: a live load
//! balancer as the CCM built it for the applied spec, a live Service as the CCM left it, and
//! the plan of a changed spec.

use super::*;
use crate::binding::test_support::{node, server, service, SUBNET};
use crate::ccm::annotations::{desired_annotations, UUID};
use crate::objects::SubnetObject;
use crate::spec::{Algorithm, PortProtocol, PortSpec, TrafficPolicy, VipAddress};
use k8s_openapi::api::core::v1::Service;
use skyplan_core::model::Impact;
use skyplan_core::model::ResourceKind;
use skyplan_core::plan::Action;
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

pub(super) fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "shop")
}

pub(super) fn applied() -> CloudscaleLoadBalancerSpec {
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults("shop", "lpg1");
    spec.ports = vec![PortSpec {
        name: "http".into(),
        port: 80,
        protocol: PortProtocol::Tcp,
        node_port: 0,
    }];
    spec.binding = Some(ServiceBinding {
        cluster: Address::new(ResourceKind::Cluster, "prod"),
        namespace: "default".into(),
        name: "shop".into(),
        mode: LbMode::Ccm,
    });
    spec
}

/// The world after the CCM reconciled `applied`: Service with node port 31080 and the uuid
/// annotation, load balancer `lb-1` with UUIDs on everything.
pub(super) struct World {
    pub(super) view: ClusterView,
    pub(super) servers: Vec<ServerObject>,
    pub(super) snapshot: Snapshot,
}

/// The Service's ports as the apiserver holds them for `spec`'s: a configured node port, else
/// 31080, 31081… in order.
fn live_ports(spec: &CloudscaleLoadBalancerSpec) -> Service {
    let ports: Vec<(&str, i32, i32)> = (0i32..)
        .zip(&spec.ports)
        .map(|(i, p)| {
            let node_port = match p.node_port {
                0 => 31080 + i,
                set => i32::from(set),
            };
            (p.name.as_str(), i32::from(p.port), node_port)
        })
        .collect();
    let mut live = service(&ports, None);
    let written = live.spec.as_mut().unwrap().ports.as_mut().unwrap();
    for (port, spec) in written.iter_mut().zip(&spec.ports) {
        port.protocol = Some(match spec.protocol {
            PortProtocol::Tcp => "TCP".into(),
            PortProtocol::Udp => "UDP".into(),
        });
    }
    live
}

pub(super) fn world(applied: &CloudscaleLoadBalancerSpec, with_uuid: bool) -> World {
    let mut live = live_ports(applied);
    let mut annotations: std::collections::BTreeMap<String, String> = desired_annotations(applied)
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();
    if with_uuid {
        annotations.insert(UUID.into(), "lb-1".into());
    }
    live.metadata.annotations = Some(annotations);
    live.spec.as_mut().unwrap().external_traffic_policy =
        Some(applied.traffic_policy.as_str().into());
    let view = ClusterView {
        nodes: (1..=3).map(|i| node(i, &[])).collect(),
        service: Some(live),
        node_set_changes: false,
        node_ports_held: Default::default(),
    };
    let servers: Vec<_> = (1..=3).map(server).collect();
    let subnets = vec![SubnetObject {
        uuid: SUBNET.into(),
        cidr: "10.0.0.0/24".into(),
    }];
    let predicted = predicted_spec(applied, &view, &servers).unwrap();
    let mut lb = desired_objects(&address(), &predicted, &subnets).unwrap();
    lb.lb.uuid = Some("lb-1".into());
    lb.lb.status = Some("running".into());
    lb.lb.tags.clear();
    lb.lb.vip_addresses = vec![VipAddress {
        subnet: "public".into(),
        address: Some("5.102.150.1".into()),
    }];
    for (n, set) in lb.pools.values_mut().enumerate() {
        set.pool.uuid = Some(format!("pool-{n}"));
    }
    World {
        view,
        servers,
        snapshot: Snapshot {
            load_balancers: vec![lb],
            floating_ips: vec![],
            subnets,
            ..Snapshot::default()
        },
    }
}

fn plan_of(change: impl FnOnce(&mut CloudscaleLoadBalancerSpec)) -> ResourceChange {
    plan_in(&world(&applied(), true), change)
}

fn plan_in(world: &World, change: impl FnOnce(&mut CloudscaleLoadBalancerSpec)) -> ResourceChange {
    try_plan_in(world, change).unwrap()
}

/// The applied spec with `change` made, planned in `world`: the change, or why it fails.
fn try_plan_in(
    world: &World,
    change: impl FnOnce(&mut CloudscaleLoadBalancerSpec),
) -> Result<ResourceChange, String> {
    let prior = applied();
    let mut spec = prior.clone();
    change(&mut spec);
    plan(&CcmInput {
        address: &address(),
        spec: &spec,
        prior: Some(&prior),
        view: &world.view,
        servers: &world.servers,
        snapshot: &world.snapshot,
    })
}

fn operations(change: &ResourceChange) -> Vec<String> {
    change.operations.iter().map(ToString::to_string).collect()
}

fn has(change: &ResourceChange, op: &str) -> bool {
    operations(change).iter().any(|o| o == op)
}

#[test]
fn an_unchanged_service_plans_nothing() {
    let change = plan_of(|_| {});
    assert_eq!(change.action, Action::NoOp, "{:?}", change.attributes);
    assert!(change.operations.is_empty());
}

#[test]
fn a_port_name_change_recreates_the_pool_on_a_new_node_port() {
    let change = plan_of(|s| s.ports[0].name = "web".into());
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert!(has(&change, "patch service default/shop"));
    assert!(has(&change, "controller: delete pool tcp/http"));
    assert!(has(&change, "controller: create pool tcp/web"));
    assert!(has(
        &change,
        "controller: create member 10.0.0.11:<new node port>"
    ));
    // The user's change is the attribute; the CCM's cloud changes are its effects.
    assert_eq!(change.attributes.len(), 1, "{:#?}", change.attributes);
    let renamed = &change.attributes[0];
    assert_eq!(renamed.path, "ports.web.name");
    assert_eq!(
        (&renamed.before, &renamed.after),
        (&json!("http"), &json!("web"))
    );
    assert_eq!(renamed.impact, Impact::PoolRecreate);
    let effects: Vec<(&str, &Value, &Value)> = renamed
        .effects
        .iter()
        .map(|e| (e.path.as_str(), &e.before, &e.after))
        .collect();
    assert_eq!(
        effects,
        [
            ("ports.web.pool", &json!("tcp/http"), &json!("tcp/web")),
            (
                "ports.web.node-port",
                &json!([31080]),
                &json!([{"unknown": "allocated by the apiserver"}])
            ),
        ]
    );
}

#[test]
fn a_renumbered_port_keeps_its_node_port_and_pool_and_recreates_the_listener() {
    let change = plan_of(|s| s.ports[0].port = 8080);
    assert_eq!(change.impact(), Impact::Minimal);
    assert!(has(&change, "controller: delete listener tcp/80"));
    assert!(has(&change, "controller: create listener tcp/8080"));
    assert!(
        !operations(&change).iter().any(|o| o.contains("pool")),
        "{:?}",
        operations(&change)
    );
    assert!(!operations(&change).iter().any(|o| o.contains("member")));
    assert_eq!(change.attributes.len(), 1, "{:#?}", change.attributes);
    let port = &change.attributes[0];
    assert_eq!(port.path, "ports.http.port");
    assert_eq!(port.effects[0].path, "ports.http.listener");
    assert_eq!(
        (&port.effects[0].before, &port.effects[0].after),
        (&json!("tcp/80"), &json!("tcp/8080"))
    );
}

#[test]
fn a_configured_node_port_recreates_the_members_and_keeps_the_pool() {
    let change = plan_of(|s| s.ports[0].node_port = 32000);
    assert_eq!(change.impact(), Impact::Minimal);
    assert!(has(&change, "patch service default/shop"));
    assert!(has(&change, "controller: delete member 10.0.0.11:31080"));
    assert!(has(&change, "controller: create member 10.0.0.11:32000"));
    assert!(!operations(&change).iter().any(|o| o.contains("pool tcp")));
    let row = &change.attributes[0];
    assert!(row.reason.contains("member key"), "{}", row.reason);
    // The CCM deletes every member, pauses 5 s, then creates: port 80 serves nothing meanwhile.
    let said = format!("{row:?}");
    assert!(
        said.contains("port 80 serves nothing for about 6 s: the CCM deletes all 3 of its members (0.5 s apart), waits 5 s, then creates the new ones"),
        "{said}"
    );
    assert!(change.downtime().min >= 5, "{:?}", change.downtime());

    let same = plan_of(|s| s.ports[0].node_port = 31080);
    assert_eq!(same.action, Action::NoOp, "{:?}", same.attributes);
}

#[test]
fn a_node_port_another_service_holds_fails_the_plan_and_its_own_does_not() {
    let mut world = world(&applied(), true);
    world.view.node_ports_held = [
        (31080, "default/shop".to_string()),
        (32000, "shop/cart".to_string()),
    ]
    .into();
    let kept = plan_in(&world, |s| s.ports[0].node_port = 31080);
    assert_eq!(kept.action, Action::NoOp, "its own node port");
    let error = try_plan_in(&world, |s| s.ports[0].node_port = 32000).unwrap_err();
    assert!(error.contains("held by Service shop/cart"), "{error}");
}

#[test]
fn allowed_cidrs_update_the_listener_in_place() {
    let change = plan_of(|s| s.allowed_cidrs = vec!["10.0.0.0/8".into()]);
    assert_eq!(change.impact(), Impact::Minimal);
    assert!(has(&change, "controller: update listener tcp/80"));
    assert!(!has(&change, "controller: delete listener tcp/80"));
}

#[test]
fn local_traffic_policy_recreates_members_and_monitor_but_keeps_the_pool() {
    let change = plan_of(|s| {
        s.traffic_policy = TrafficPolicy::Local;
        s.health_monitor.kind = crate::spec::MonitorType::Http;
        s.health_monitor.http = Some(crate::spec::HttpCheck::livez());
    });
    assert_eq!(change.impact(), Impact::Minimal);
    assert!(change
        .attributes
        .iter()
        .any(|a| a.reason.contains("README")));
    assert!(has(
        &change,
        "controller: delete health monitor of pool tcp/http"
    ));
    assert!(has(&change, "controller: delete member 10.0.0.11:31080"));
    assert!(!has(&change, "controller: delete pool tcp/http"));
}

#[test]
fn a_flavor_change_is_forbidden_because_the_ccm_loops() {
    let change = plan_of(|s| s.flavor = "lb-large".into());
    assert_eq!(change.impact(), Impact::Forbidden);
    assert!(change.attributes[0].reason.contains("retries forever"));
}

#[test]
fn a_pool_algorithm_change_recreates_the_pool() {
    let change = plan_of(|s| s.algorithm = Algorithm::SourceIp);
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert!(has(&change, "controller: delete pool tcp/http"));
}

#[test]
fn a_rename_is_in_place_with_the_uuid_annotation_and_forbidden_without() {
    let change = plan_of(|s| s.name = "shop-2".into());
    assert_eq!(change.impact(), Impact::None);
    assert!(has(&change, "controller: rename load balancer to shop-2"));

    let without_uuid = world(&applied(), false);
    let change = plan_in(&without_uuid, |s| s.name = "shop-2".into());
    assert_eq!(change.impact(), Impact::Forbidden);
    assert!(change.attributes[0].reason.contains("second one"));
}

#[test]
fn clearing_the_vip_annotation_changes_nothing() {
    let mut prior = applied();
    prior.vip_addresses = vec![VipAddress {
        subnet: "public".into(),
        address: None,
    }];
    let world = world(&prior, true);
    let change = plan(&CcmInput {
        address: &address(),
        spec: &applied(),
        prior: Some(&prior),
        view: &world.view,
        servers: &world.servers,
        snapshot: &world.snapshot,
    })
    .unwrap();
    assert_eq!(change.impact(), Impact::None, "{:?}", change.attributes);
    assert!(change
        .attributes
        .iter()
        .any(|a| a.reason.contains("silently")));
}

#[test]
fn a_new_node_is_a_member_added_and_a_missing_server_fails_the_plan() {
    let mut world = world(&applied(), true);
    world.view.nodes.push(node(4, &[]));
    world.servers.push(server(4));
    let change = plan_in(&world, |_| {});
    assert_eq!(change.impact(), Impact::Minimal);
    assert!(has(&change, "controller: create member 10.0.0.14:31080"));
    assert!(!has(&change, "patch service default/shop"));
    assert!(
        !format!("{:?}", change.attributes).contains("serves nothing"),
        "a member added empties nothing"
    );
    assert_eq!(change.downtime().min, 0);

    world.servers.pop();
    let error = try_plan_in(&world, |_| {}).unwrap_err();
    assert!(error.contains("node node-4"), "{error}");
}

#[test]
fn node_labels_alone_wait_for_the_next_sync() {
    let mut prior = applied();
    prior.node_selector = Some("tier=web".into());
    let mut world = world(&prior, true);
    // The live load balancer still has all three nodes: labels changed after the last sync.
    let all =
        super::super::predict::predicted_spec(&applied(), &world.view, &world.servers).unwrap();
    let lb = desired_objects(&address(), &all, &world.snapshot.subnets).unwrap();
    for (name, set) in lb.pools {
        world.snapshot.load_balancers[0]
            .pools
            .get_mut(&name)
            .unwrap()
            .members = set.members;
    }
    world.view.nodes[0] = node(1, &[("tier", "web")]);
    let change = plan(&CcmInput {
        address: &address(),
        spec: &prior,
        prior: Some(&prior),
        view: &world.view,
        servers: &world.servers,
        snapshot: &world.snapshot,
    })
    .unwrap();
    assert_eq!(change.impact(), Impact::None, "{:?}", change.attributes);
    assert!(change.attributes[0].reason.contains("next synced"));
    assert!(!operations(&change).iter().any(|o| o.contains("member")));
}

#[test]
fn a_new_service_is_created_and_the_ccm_builds_the_load_balancer() {
    let mut world = world(&applied(), true);
    world.view.service = None;
    world.snapshot.load_balancers.clear();
    let change = plan_in(&world, |_| {});
    assert_eq!(change.action, Action::Create);
    assert_eq!(change.impact(), Impact::None);
    assert!(has(&change, "create service default/shop"));
    assert!(has(&change, "controller: create load balancer shop"));
}

/// impact.md's deletion rule: removed from the config, the load balancer is refused with the
/// flag to pass, and nothing is done.
#[test]
fn removal_is_forbidden_without_allow_delete_and_does_nothing() {
    let change = removed(&address(), &applied(), Some("shop"), false);
    assert_eq!(change.action, Action::Delete);
    assert_eq!(change.impact(), Impact::Forbidden);
    assert!(change.is_refused());
    assert!(change.operations.is_empty(), "{:?}", change.operations);
    let reason = &change.attributes[0].reason;
    assert!(
        reason.contains(&format!("--allow-delete {}", address())),
        "{reason}"
    );
}

/// With --allow-delete the Service is deleted and the CCM deletes the load balancer: never
/// the load balancer behind the CCM's back.
#[test]
fn removal_with_allow_delete_deletes_the_service_and_the_ccm_the_load_balancer() {
    let change = removed(&address(), &applied(), Some("shop"), true);
    assert_eq!(change.action, Action::Delete);
    assert_eq!(change.impact(), Impact::Forbidden, "the address is lost");
    assert!(change.requested && !change.is_refused());
    let ops: Vec<String> = change.operations.iter().map(|o| o.to_string()).collect();
    let binding = applied().binding.unwrap();
    assert_eq!(
        ops,
        [
            format!("delete service {}", binding.service_ref()),
            "controller: delete load balancer shop".to_string()
        ]
    );
    assert!(!change
        .operations
        .iter()
        .any(|o| matches!(Op::of(o), Some(Op::DeleteLb { .. }))));
}
