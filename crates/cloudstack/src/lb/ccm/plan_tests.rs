//! One test per controller-mode row at plan level: the live rules as the CCM made them (the
//! direct-mode fake world with the CCM's base name), a live Service, and the desired spec.

use k8s_openapi::api::core::v1::{Node, Service};
use serde_json::{json, Value};

use super::*;
use crate::lb::ccm::names::base_name;
use crate::lb::ccm::predict::lb_candidate;
use crate::lb::ccm::predict::{predict, PredictInput};
use crate::lb::tests::{base, port, world};
use crate::spec::{CsAlgorithm, CsMembers, CsProtocol, PublicIp};
use skyplan_core::model::{Impact, ResourceKind};
use skyplan_core::plan::AttributeChange;
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

pub(super) const UID: &str = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";

fn binding() -> ServiceBinding {
    ServiceBinding {
        cluster: Address::new(ResourceKind::Cluster, "prod"),
        namespace: "default".into(),
        name: "web".into(),
        mode: LbMode::Ccm,
    }
}

/// What the CCM made: rule `<base>-tcp-80` on node port 30080 with web-1 and web-2.
fn applied() -> CloudstackLoadBalancerSpec {
    CloudstackLoadBalancerSpec {
        name: base_name(UID),
        members: CsMembers::Vms(vec!["web-1".into(), "web-2".into()]),
        // The CCM v1.2.0 always sends the cidrlist: 0.0.0.0/0 without the annotation.
        allowed_cidrs: vec!["0.0.0.0/0".into()],
        binding: Some(binding()),
        ..base()
    }
}

pub(super) fn desired() -> CloudstackLoadBalancerSpec {
    CloudstackLoadBalancerSpec {
        name: "web".into(),
        members: CsMembers::Cluster("prod".into()),
        ports: vec![port(80, CsProtocol::Tcp, 0)],
        allowed_cidrs: vec![],
        ..applied()
    }
}

/// The live Service as skyplan wrote `spec`, with the apiserver's UID and node ports.
pub(super) fn service(spec: &CloudstackLoadBalancerSpec, node_ports: &[(&str, i32)]) -> Service {
    let mut body = desired_body(spec, &binding(), true);
    body["metadata"]["uid"] = json!(UID);
    body["metadata"]["resourceVersion"] = json!("7");
    for (i, (_, node_port)) in node_ports.iter().enumerate() {
        body["spec"]["ports"][i]["nodePort"] = json!(node_port);
    }
    serde_json::from_value(body).unwrap()
}

/// Ready nodes, as the service controller balances on them.
pub(super) fn nodes(names: &[&str]) -> Vec<Node> {
    names
        .iter()
        .map(|n| {
            serde_json::from_value(json!({
                "metadata": {"name": n},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }))
            .unwrap()
        })
        .collect()
}

fn plan_with(
    spec: &CloudstackLoadBalancerSpec,
    live_service: &Service,
    live: &Inventory,
    node_names: &[&str],
) -> ResourceChange {
    let address = Address::new(ResourceKind::LoadBalancer, "web");
    let input = CcmPlanInput {
        address: &address,
        spec,
        service: Some(live_service),
        nodes: &nodes(node_names),
        live,
        scaled_workers: 0,
    };
    let change = plan(&input);
    never_below_the_findings(&input, &change);
    change
}

/// Under-predicting is the worst bug: the plan's classes are never below what each predicted
/// finding's row says — the class the plan gave when every finding was its own attribute —
/// and every finding is shown, as an attribute or as an effect with its row's class.
fn never_below_the_findings(input: &CcmPlanInput, change: &ResourceChange) {
    use super::super::impact::rule;
    let findings = predict(&PredictInput {
        spec: input.spec,
        service: input.service,
        nodes: input.nodes,
        live: input.live,
        scaled_workers: input.scaled_workers,
    })
    .findings;
    let old = findings.iter().map(|f| rule(f.change).impact).max();
    let new = change.attributes.iter().map(|a| a.impact).max();
    assert!(
        new >= old,
        "class {new:?}, was {old:?}: {:#?}",
        change.attributes
    );
    for finding in &findings {
        let impact = rule(finding.change).impact;
        let shown = change
            .attributes
            .iter()
            .filter(|a| a.impact >= impact)
            .any(|a| a.path == finding.path || a.effects.iter().any(|e| e.impact == impact));
        assert!(shown, "{finding:?} not shown in {:#?}", change.attributes);
    }
}

/// Plans `change` applied to the desired spec against the world the CCM made of `desired()`.
fn plan_change(change: impl FnOnce(&mut CloudstackLoadBalancerSpec)) -> ResourceChange {
    let mut spec = desired();
    change(&mut spec);
    let live_service = service(&desired(), &[("tcp-80", 30080)]);
    plan_with(
        &spec,
        &live_service,
        &world(&applied()),
        &["web-1", "web-2"],
    )
}

fn rows(change: &ResourceChange) -> Vec<(Impact, String)> {
    change
        .attributes
        .iter()
        .map(|a| (a.impact, a.reason.clone()))
        .collect()
}

fn controller(change: &ResourceChange) -> Vec<String> {
    change
        .operations
        .iter()
        .map(|o| o.to_string())
        .filter(|o| o.starts_with("controller:"))
        .collect()
}

fn only(change: &ResourceChange) -> &AttributeChange {
    assert_eq!(change.attributes.len(), 1, "{:#?}", rows(change));
    &change.attributes[0]
}

fn rule(protocol: &str, port: u16) -> String {
    format!("{}-{protocol}-{port}", base_name(UID))
}

#[test]
fn an_unchanged_service_plans_nothing() {
    let change = plan_change(|_| {});
    assert_eq!(change.action, Action::NoOp, "{:#?}", rows(&change));
    assert!(change.operations.is_empty());
}

#[test]
fn a_new_service_is_created_and_touches_nothing() {
    let address = Address::new(ResourceKind::LoadBalancer, "web");
    let change = plan(&CcmPlanInput {
        address: &address,
        spec: &desired(),
        service: None,
        nodes: &[],
        live: &world(&applied()),
        scaled_workers: 0,
    });
    assert_eq!(change.action, Action::Create);
    assert_eq!(only(&change).impact, Impact::None);
    assert_eq!(
        change.operations[0].to_string(),
        "create service default/web"
    );
}

#[test]
fn a_port_added_is_created_and_touches_nothing() {
    let change = plan_change(|s| s.ports.push(port(443, CsProtocol::Tcp, 0)));
    assert_eq!(only(&change).impact, Impact::None);
    assert_eq!(
        controller(&change),
        vec![format!("controller: create LB rule {}", rule("tcp", 443))]
    );
    assert_eq!(
        change.operations[0].to_string(),
        "patch service default/web"
    );
}

#[test]
fn a_port_removed_deletes_its_rule() {
    let mut two = applied();
    two.ports.push(port(443, CsProtocol::Tcp, 30443));
    let live_service = service(
        &CloudstackLoadBalancerSpec {
            ports: vec![port(80, CsProtocol::Tcp, 0), port(443, CsProtocol::Tcp, 0)],
            ..desired()
        },
        &[("tcp-80", 30080), ("tcp-443", 30443)],
    );
    let change = plan_with(&desired(), &live_service, &world(&two), &["web-1", "web-2"]);
    assert_eq!(only(&change).impact, Impact::PoolRecreate);
    assert_eq!(
        controller(&change),
        vec![format!("controller: delete LB rule {}", rule("tcp", 443))]
    );
}

#[test]
fn the_algorithm_is_updated_in_place_and_names_the_router_neighbours() {
    let change = plan_change(|s| s.algorithm = CsAlgorithm::Source);
    let row = only(&change);
    assert_eq!(row.impact, Impact::Minimal);
    assert!(
        row.reason.contains("also reloads 1 other rule of network"),
        "{}",
        row.reason
    );
    assert!(row.reason.contains("other-tcp-443"));
    assert_eq!(
        controller(&change),
        vec![format!(
            "controller: update LB rule {} (algorithm)",
            rule("tcp", 80)
        )]
    );
}

#[test]
fn source_cidrs_follow_the_ccms_version_gate() {
    let change = plan_change(|s| s.allowed_cidrs = vec!["10.0.0.0/8".into()]);
    let row = only(&change);
    assert_eq!(row.impact, Impact::Minimal);
    assert!(row.reason.contains("admin keys"), "{}", row.reason);
    let mut spec = desired();
    spec.allowed_cidrs = vec!["10.0.0.0/8".into()];
    let mut live = world(&applied());
    live.capabilities.as_mut().unwrap().cloudstackversion = "4.20.1.0".into();
    let old = plan_with(
        &spec,
        &service(&desired(), &[("tcp-80", 30080)]),
        &live,
        &["web-1", "web-2"],
    );
    assert_eq!(only(&old).impact, Impact::PoolRecreate);
    let actions = controller(&old);
    assert!(
        actions.contains(&format!("controller: delete LB rule {}", rule("tcp", 80))),
        "{actions:?}"
    );
}

#[test]
fn tcp_to_tcp_proxy_is_forbidden_with_the_way_out() {
    let change = plan_change(|s| s.ports[0].protocol = CsProtocol::TcpProxy);
    let row = only(&change);
    assert_eq!(row.impact, Impact::Forbidden);
    assert!(row.reason.contains("error 537 forever"), "{}", row.reason);
    assert!(row.reason.contains("re-create the Service"));
}

#[test]
fn tcp_to_udp_is_forbidden() {
    let change = plan_change(|s| s.ports[0].protocol = CsProtocol::Udp);
    assert_eq!(only(&change).impact, Impact::Forbidden);
    assert!(only(&change).path.ends_with("protocol"));
}

#[test]
fn a_public_port_move_creates_then_deletes() {
    let change = plan_change(|s| s.ports[0].port = 8080);
    assert_eq!(only(&change).impact, Impact::Minimal);
    assert_eq!(
        controller(&change),
        vec![
            format!("controller: create LB rule {}", rule("tcp", 8080)),
            format!("controller: delete LB rule {}", rule("tcp", 80))
        ]
    );
}

#[test]
fn a_changed_node_port_recreates_the_rule() {
    let live_service = service(&desired(), &[("tcp-80", 31999)]);
    let change = plan_with(
        &desired(),
        &live_service,
        &world(&applied()),
        &["web-1", "web-2"],
    );
    let row = only(&change);
    assert_eq!(row.impact, Impact::PoolRecreate);
    assert_eq!(row.after, json!(31999));
    assert!(
        controller(&change).contains(&format!("controller: delete LB rule {}", rule("tcp", 80)))
    );
}

/// The CCM's order, not the alphabet's: for the port, its rule is deleted before it is created
/// again on the new node port (`checkLoadBalancerRule`), then its firewall rule goes before
/// the new one is made (`updateFirewallRule`).
#[test]
fn a_ports_actions_come_in_the_ccms_order() {
    let live_service = service(&desired(), &[("tcp-80", 31999)]);
    let mut spec = desired();
    spec.firewall_cidrs = vec!["192.0.2.0/24".into()];
    let change = plan_with(
        &spec,
        &live_service,
        &world(&applied()),
        &["web-1", "web-2"],
    );
    let actions = controller(&change);
    let at = |prefix: &str| {
        actions
            .iter()
            .position(|a| a.starts_with(&format!("controller: {prefix}")))
            .unwrap_or_else(|| panic!("no {prefix} in {actions:#?}"))
    };
    assert!(at("delete LB rule") < at("create LB rule"), "{actions:#?}");
    assert!(
        at("create LB rule") < at("delete firewall rule"),
        "{actions:#?}"
    );
    assert!(
        at("delete firewall rule") < at("create firewall rule"),
        "{actions:#?}"
    );
}

/// A node port the apiserver allocates at apply is shown as unknown, never as a number.
#[test]
fn a_node_port_to_be_allocated_is_unknown() {
    let live_service = service(&desired(), &[("tcp-80", 30080)]);
    let mut renamed: Service = live_service.clone();
    renamed.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].name = Some("other".into());
    let change = plan_with(
        &desired(),
        &renamed,
        &world(&applied()),
        &["web-1", "web-2"],
    );
    // The user's change is the port's name in the Service; the rule's private port its effect.
    let renamed = only(&change);
    assert_eq!(renamed.path, "service.ports.80.name");
    assert_eq!(renamed.impact, Impact::PoolRecreate);
    let node_port = renamed
        .effects
        .iter()
        .find(|e| e.path.ends_with("private-port"))
        .unwrap_or_else(|| panic!("no private port in {:#?}", change.attributes));
    assert_eq!(
        node_port.after,
        json!({"unknown": "allocated by the apiserver"})
    );
}

#[test]
fn a_new_node_is_assigned_to_every_rule() {
    let live_service = service(&desired(), &[("tcp-80", 30080)]);
    let change = plan_with(
        &desired(),
        &live_service,
        &world(&applied()),
        &["web-1", "web-2", "web-3.example.org"],
    );
    assert_eq!(only(&change).impact, Impact::Minimal);
    assert_eq!(
        controller(&change),
        vec![format!(
            "controller: assign web-3 to LB rule {}",
            rule("tcp", 80)
        )]
    );
}

#[test]
fn a_changed_load_balancer_ip_is_ignored_and_said_so() {
    let change = plan_change(|s| s.public_ip = PublicIp::Address("198.51.100.99".into()));
    let row = only(&change);
    assert_eq!(row.impact, Impact::None);
    assert!(
        row.reason.contains("ignores a changed loadBalancerIP"),
        "{}",
        row.reason
    );
    assert!(controller(&change).is_empty());
    assert_eq!(change.action, Action::Update);
}

#[test]
fn firewall_cidrs_replace_the_ports_firewall_rule_and_vpc_tiers_ignore_them() {
    let change = plan_change(|s| s.firewall_cidrs = vec!["192.0.2.0/24".into()]);
    assert_eq!(only(&change).impact, Impact::Minimal);
    let actions = controller(&change);
    assert!(
        actions
            .iter()
            .any(|a| a.contains("delete firewall rule fw-80")),
        "{actions:?}"
    );
    let mut live = world(&applied());
    live.networks[0].vpcid = Some("vpc-1".into());
    let mut spec = desired();
    spec.firewall_cidrs = vec!["192.0.2.0/24".into()];
    let vpc = plan_with(
        &spec,
        &service(&desired(), &[("tcp-80", 30080)]),
        &live,
        &["web-1", "web-2"],
    );
    assert_eq!(only(&vpc).impact, Impact::None);
    assert!(controller(&vpc).is_empty());
}

#[test]
fn tcp_and_udp_on_one_port_are_forbidden() {
    let change = plan_change(|s| s.ports.push(port(80, CsProtocol::Udp, 0)));
    assert!(
        change
            .attributes
            .iter()
            .any(|a| a.impact == Impact::Forbidden && a.reason.contains("537")),
        "{:#?}",
        rows(&change)
    );
}

#[test]
fn a_service_only_change_is_written_with_no_cloud_effect() {
    let live_service = service(&desired(), &[("tcp-80", 30080)]);
    let mut stale = live_service.clone();
    stale.spec.as_mut().unwrap().load_balancer_source_ranges =
        Some(vec!["0.0.0.0/0".into(), "10.0.0.0/8".into()]);
    let change = plan_with(&desired(), &stale, &world(&applied()), &["web-1", "web-2"]);
    assert_eq!(change.action, Action::Update);
    assert!(
        change.attributes.iter().all(|a| a.impact == Impact::None),
        "{:#?}",
        rows(&change)
    );
    assert_eq!(change.operations.len(), 1);
}

#[test]
fn removing_it_from_the_config_is_forbidden_and_does_nothing() {
    let change = removed(
        &Address::new(ResourceKind::LoadBalancer, "web"),
        &desired(),
        false,
    );
    assert_eq!(only(&change).impact, Impact::Forbidden);
    assert!(change.is_refused());
    assert!(change.operations.is_empty());
    assert!(
        only(&change)
            .reason
            .contains("--allow-delete load-balancer.web"),
        "{}",
        only(&change).reason
    );
}

/// impact.md's deletion rule: with --allow-delete the Service is deleted and the CCM deletes
/// the rules.
#[test]
fn removing_it_with_allow_delete_deletes_the_service() {
    let change = removed(
        &Address::new(ResourceKind::LoadBalancer, "web"),
        &desired(),
        true,
    );
    assert_eq!(change.action, Action::Delete);
    assert_eq!(
        only(&change).impact,
        Impact::Forbidden,
        "the address is lost"
    );
    assert!(change.requested && !change.is_refused());
    let ops: Vec<String> = change.operations.iter().map(|o| o.to_string()).collect();
    assert_eq!(ops[0], "delete service default/web", "{ops:?}");
    assert!(ops[1].starts_with("controller: delete"), "{ops:?}");
}

#[test]
fn a_node_port_set_in_the_config_recreates_the_rule_on_it() {
    let change = plan_change(|s| s.ports[0].node_port = 31000);
    let row = only(&change);
    assert_eq!(row.impact, Impact::PoolRecreate);
    assert_eq!(
        (row.before.clone(), row.after.clone()),
        (json!(30080), json!(31000))
    );
    let ops: Vec<String> = change.operations.iter().map(|o| o.to_string()).collect();
    assert_eq!(ops[0], "patch service default/web", "{ops:?}");
    let rule = rule("tcp", 80);
    assert!(
        ops.contains(&format!("controller: delete LB rule {rule}")),
        "{ops:?}"
    );
    assert!(
        ops.contains(&format!("controller: create LB rule {rule}")),
        "{ops:?}"
    );
}

#[test]
fn a_node_port_the_service_already_has_plans_nothing() {
    let change = plan_change(|s| s.ports[0].node_port = 30080);
    assert_eq!(change.action, Action::NoOp, "{:#?}", rows(&change));
}

#[test]
fn a_node_that_is_not_ready_is_not_balanced() {
    let live_service = service(&desired(), &[("tcp-80", 30080)]);
    let mut node_list = nodes(&["web-1", "web-2"]);
    node_list[1].status = None;
    let address = Address::new(ResourceKind::LoadBalancer, "web");
    let change = plan(&CcmPlanInput {
        address: &address,
        spec: &desired(),
        service: Some(&live_service),
        nodes: &node_list,
        live: &world(&applied()),
        scaled_workers: 0,
    });
    assert_eq!(
        controller(&change),
        vec![format!(
            "controller: remove web-2 from LB rule {}",
            rule("tcp", 80)
        )]
    );
}

fn plan_scaled(scaled_workers: i64) -> ResourceChange {
    let live_service = service(&desired(), &[("tcp-80", 30080)]);
    let address = Address::new(ResourceKind::LoadBalancer, "web");
    let (spec, nodes, live) = (desired(), nodes(&["web-1", "web-2"]), world(&applied()));
    let input = CcmPlanInput {
        address: &address,
        spec: &spec,
        service: Some(&live_service),
        nodes: &nodes,
        live: &live,
        scaled_workers,
    };
    let change = plan(&input);
    never_below_the_findings(&input, &change);
    change
}

#[test]
fn a_cluster_scaled_up_in_the_same_apply_gets_its_new_worker_assigned() {
    let change = plan_scaled(1);
    assert_eq!(change.action, Action::Update);
    let row = only(&change);
    assert_eq!(row.impact, Impact::Minimal);
    assert_eq!(row.after, json!(["web-1", "web-2", "+1 new worker"]));
    assert!(
        row.reason.contains("scaled first in this apply"),
        "{}",
        row.reason
    );
    assert_eq!(
        controller(&change),
        vec![format!(
            "controller: assign 1 new worker VM to LB rule {}",
            rule("tcp", 80)
        )]
    );
    assert!(
        !change
            .operations
            .iter()
            .any(|o| o.to_string().starts_with("patch")),
        "nothing to write: the controller follows the nodes"
    );
}

#[test]
fn a_cluster_scaled_down_in_the_same_apply_loses_workers_chosen_by_cks() {
    let change = plan_scaled(-2);
    assert_eq!(only(&change).impact, Impact::Minimal);
    assert_eq!(
        controller(&change),
        vec![format!(
            "controller: remove 2 worker VMs (chosen by CKS) from LB rule {}",
            rule("tcp", 80)
        )]
    );
}

#[test]
fn a_load_balancer_ip_already_written_but_ignored_is_reported_and_left_alone() {
    let mut spec = desired();
    spec.public_ip = PublicIp::Address("198.51.100.99".into());
    let live_service = service(&spec, &[("tcp-80", 30080)]);
    let change = plan_with(
        &spec,
        &live_service,
        &world(&applied()),
        &["web-1", "web-2"],
    );
    assert_eq!(change.action, Action::NoOp);
    assert!(change.operations.is_empty());
    assert!(only(&change)
        .reason
        .contains("ignores a changed loadBalancerIP"));
}

#[test]
fn only_ready_nodes_without_the_exclude_label_are_members() {
    let node = |body: serde_json::Value| -> Node { serde_json::from_value(body).unwrap() };
    let ready = json!([{"type": "Ready", "status": "True"}]);
    assert!(lb_candidate(&node(
        json!({"metadata": {"name": "a"}, "status": {"conditions": ready}})
    )));
    assert!(
        !lb_candidate(&node(json!({"metadata": {"name": "a"}}))),
        "no conditions: not accepted"
    );
    assert!(!lb_candidate(&node(json!({"metadata": {"name": "a"},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]}}))));
    assert!(
        !lb_candidate(&node(json!({"metadata": {"name": "a",
        "labels": {"node.kubernetes.io/exclude-from-external-load-balancers": "false"}},
        "status": {"conditions": ready}}))),
        "v0.24: presence excludes"
    );
    assert!(!lb_candidate(&node(json!({"metadata": {"name": "a"},
        "spec": {"taints": [{"key": "ToBeDeletedByClusterAutoscaler", "effect": "NoSchedule"}]},
        "status": {"conditions": ready}}))));
}

/// The user's change is the attribute, named and valued as the config spells it; the CCM's
/// actions on the rules are its effects, on the objects they act on.
#[test]
fn the_attribute_is_the_config_key_and_the_rules_changes_its_effects() {
    let rule80 = format!("rules.{}", rule("tcp", 80));
    type Case = (
        ResourceChange,
        &'static str,
        Value,
        Value,
        Impact,
        Vec<String>,
    );
    let cases: Vec<Case> = vec![
        (
            plan_change(|s| s.algorithm = CsAlgorithm::Source),
            "algorithm",
            json!("roundrobin"),
            json!("source"),
            Impact::Minimal,
            vec![format!("{rule80}.algorithm")],
        ),
        (
            plan_change(|s| s.allowed_cidrs = vec!["10.0.0.0/8".into()]),
            "allowed-cidrs",
            json!([]),
            json!(["10.0.0.0/8"]),
            Impact::Minimal,
            vec![format!("{rule80}.cidrlist")],
        ),
        (
            plan_change(|s| s.ports[0].protocol = CsProtocol::Udp),
            "ports.80.protocol",
            json!("tcp"),
            json!("udp"),
            Impact::Forbidden,
            vec![format!("{rule80}.protocol")],
        ),
        (
            plan_change(|s| s.ports[0].port = 8080),
            "ports.80.port",
            json!(80),
            json!(8080),
            Impact::Minimal,
            vec![format!("{rule80}.public-port")],
        ),
        (
            plan_change(|s| s.ports.push(port(443, CsProtocol::Tcp, 0))),
            "ports.443",
            Value::Null,
            json!({"port": 443, "protocol": "tcp"}),
            Impact::None,
            vec![format!("rules.{}", rule("tcp", 443))],
        ),
        (
            plan_change(|s| s.ports[0].node_port = 31080),
            "ports.80.node-port",
            json!(30080),
            json!(31080),
            Impact::PoolRecreate,
            vec![format!("{rule80}.private-port")],
        ),
        (
            plan_change(|s| s.firewall_cidrs = vec!["192.0.2.0/24".into()]),
            "firewall-cidrs",
            json!(["0.0.0.0/0"]),
            json!(["192.0.2.0/24"]),
            Impact::Minimal,
            vec!["firewall.80.cidrlist".to_string()],
        ),
        (
            // The CCM ignores it: the attribute is its own row, no effect.
            plan_change(|s| s.public_ip = PublicIp::Address("198.51.100.99".into())),
            "public-ip",
            Value::Null,
            json!("198.51.100.99"),
            Impact::None,
            vec![],
        ),
    ];
    for (change, path, before, after, impact, effects) in cases {
        let row = only(&change);
        assert_eq!(
            (row.path.as_str(), &row.before, &row.after, row.impact),
            (path, &before, &after, impact),
            "{row:#?}"
        );
        let paths: Vec<&str> = row.effects.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, effects, "{row:#?}");
        // Said once on the attribute; each effect names the rule it acts on.
        assert!(!row.reason.starts_with("LB rule"), "{}", row.reason);
        for effect in &row.effects {
            assert!(effect.reason.contains(&rule("tcp", 80)) || effect.path.contains("443"));
            assert!(effect.impact <= row.impact);
        }
    }
}

/// Two Service ports on one number: the config's second port is the attribute, forbidden;
/// the rule the CCM tries to create for it is its effect.
#[test]
fn the_same_port_twice_is_the_port_added_forbidden() {
    let change = plan_change(|s| s.ports.push(port(80, CsProtocol::Udp, 0)));
    let row = only(&change);
    assert_eq!(row.path, "ports.80");
    assert_eq!(row.impact, Impact::Forbidden);
    assert_eq!(row.after, json!({"port": 80, "protocol": "udp"}));
    assert_eq!(row.effects.len(), 1, "{row:#?}");
    assert_eq!(row.effects[0].path, format!("rules.{}", rule("udp", 80)));
}

/// A Service field no config key sets (loadBalancerSourceRanges written behind skyplan's back
/// is `firewall-cidrs`; a port's name is the Service's own path) is written with no effect.
#[test]
fn a_field_with_no_cloud_effect_is_the_service_written() {
    let live_service = service(&desired(), &[("tcp-80", 30080)]);
    let mut stale = live_service.clone();
    stale.spec.as_mut().unwrap().load_balancer_source_ranges =
        Some(vec!["0.0.0.0/0".into(), "10.0.0.0/8".into()]);
    let change = plan_with(&desired(), &stale, &world(&applied()), &["web-1", "web-2"]);
    let row = only(&change);
    assert_eq!(row.path, "firewall-cidrs");
    assert!(row.effects.is_empty());
    assert!(
        row.reason.contains("finds nothing to change"),
        "{}",
        row.reason
    );
}

/// The node set is no key of the user's: the members stay an attribute of their own, one for
/// every rule they change on, each rule an effect.
#[test]
fn members_of_every_rule_are_one_attribute() {
    let mut two = applied();
    two.ports.push(port(443, CsProtocol::Tcp, 30443));
    let both = CloudstackLoadBalancerSpec {
        ports: vec![port(80, CsProtocol::Tcp, 0), port(443, CsProtocol::Tcp, 0)],
        ..desired()
    };
    let live_service = service(&both, &[("tcp-80", 30080), ("tcp-443", 30443)]);
    let change = plan_with(
        &both,
        &live_service,
        &world(&two),
        &["web-1", "web-2", "web-3"],
    );
    let row = only(&change);
    assert_eq!(row.path, "members");
    assert_eq!(row.impact, Impact::Minimal);
    let paths: Vec<&str> = row.effects.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            format!("rules.{}.members", rule("tcp", 80)),
            format!("rules.{}.members", rule("tcp", 443))
        ]
    );
    assert_eq!(controller(&change).len(), 2, "{:#?}", controller(&change));
}

/// Ports only reordered: no config key differs, so the Service's own field is the attribute,
/// spelled as the Service spells its ports; the CCM changes nothing.
#[test]
fn ports_only_reordered_are_the_services_ports_written() {
    let mut two = applied();
    two.ports.push(port(443, CsProtocol::Tcp, 30443));
    let both = CloudstackLoadBalancerSpec {
        ports: vec![port(80, CsProtocol::Tcp, 0), port(443, CsProtocol::Tcp, 0)],
        ..desired()
    };
    let reversed = CloudstackLoadBalancerSpec {
        ports: vec![port(443, CsProtocol::Tcp, 0), port(80, CsProtocol::Tcp, 0)],
        ..desired()
    };
    let live_service = service(&reversed, &[("tcp-443", 30443), ("tcp-80", 30080)]);
    let change = plan_with(&both, &live_service, &world(&two), &["web-1", "web-2"]);
    let row = only(&change);
    assert_eq!(row.path, "service.ports");
    assert_eq!(row.impact, Impact::None);
    assert_eq!(
        row.after[0],
        json!({"name": "tcp-80", "port": 80, "protocol": "TCP", "targetPort": 80})
    );
    assert!(controller(&change).is_empty(), "{:#?}", controller(&change));
}
