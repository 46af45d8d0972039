//! One reading of each difference: for every controller-mode row a drift check can meet, a live
//! state where that row's difference exists (the Service and the rules as the CCM left them for
//! a spec that differs from the applied one, or the account or the nodes changed behind it),
//! and drift's class for each difference equal to the class `plan` gives restoring it.
//!
//! Rows a drift check cannot meet, and why: `SamePortTwice` (a property of the spec alone:
//! forbidden, so apply refuses it and no applied spec has it), `ServiceRemoved` and
//! `ServiceDeleted` (the resource gone from the config: a plan's removal, never drift — the
//! provider's drift says "not applied" there). The Service gone from the cluster is drift's
//! "missing" (checked below); rules deleted behind the CCM are `ServiceCreated`, a case.

use k8s_openapi::api::core::v1::{Node, Service};

use super::super::impact::{rule, Change};
use super::super::names::{base_name, service_port_name};
use super::super::predict::{ccm_cidrs, predict, PredictInput};
use super::super::service::SOURCE_CIDRS;
use super::tests::{desired, nodes, service, UID};
use super::*;
use crate::lb::tests::{port, world};
use crate::spec::{CsAlgorithm, CsMembers, CsProtocol, PublicIp};
use skyplan_core::model::{Impact, ResourceKind};
use skyplan_core::plan::AttributeChange;

type Edit = fn(&mut CloudstackLoadBalancerSpec);

/// The cluster and the account as refresh read them.
struct World {
    service: Service,
    live: Inventory,
    nodes: Vec<Node>,
}

struct Case {
    /// The row restoring the applied spec is.
    row: Change,
    /// The applied spec, from the default.
    applied: Edit,
    /// The spec the Service was written from and the CCM made the rules for, from the applied
    /// one.
    live: Edit,
    /// What else changed in the live state (the account behind the CCM, the nodes).
    world: fn(&mut World),
}

fn same(_: &mut CloudstackLoadBalancerSpec) {}
fn untouched(_: &mut World) {}

fn case(row: Change, live: Edit) -> Case {
    Case {
        row,
        applied: same,
        live,
        world: untouched,
    }
}

fn behind_the_ccm(row: Change, world: fn(&mut World)) -> Case {
    Case {
        row,
        applied: same,
        live: same,
        world,
    }
}

/// The node port the apiserver gave a port the spec leaves to it.
fn allocated(p: &crate::spec::CsPort) -> u16 {
    match p.node_port {
        0 => 30000 + p.port % 1000,
        explicit => explicit,
    }
}

/// The Service written from `spec` with its allocated node ports, the rules the CCM made for
/// it (members web-1 and web-2, its cidrlist, the firewall rules), and the nodes web-1, web-2.
fn made_by_the_ccm(spec: &CloudstackLoadBalancerSpec) -> World {
    let node_ports: Vec<(String, i32)> = spec
        .ports
        .iter()
        .map(|p| {
            (
                service_port_name(p.protocol, p.port),
                i32::from(allocated(p)),
            )
        })
        .collect();
    let named: Vec<(&str, i32)> = node_ports.iter().map(|(n, p)| (n.as_str(), *p)).collect();
    let rules = CloudstackLoadBalancerSpec {
        name: base_name(UID),
        members: CsMembers::Vms(vec!["web-1".into(), "web-2".into()]),
        allowed_cidrs: ccm_cidrs(&spec.allowed_cidrs),
        ports: spec
            .ports
            .iter()
            .map(|p| port(p.port, p.protocol, allocated(p)))
            .collect(),
        ..spec.clone()
    };
    World {
        service: service(spec, &named),
        live: world(&rules),
        nodes: nodes(&["web-1", "web-2"]),
    }
}

fn cases() -> Vec<Case> {
    use Change::*;
    vec![
        // The rules deleted by hand: the CCM makes them again, nothing serving is touched.
        behind_the_ccm(ServiceCreated, |w| {
            let base = base_name(UID);
            w.live.rules.retain(|r| !r.name.starts_with(&base));
        }),
        Case {
            row: PortAdded,
            applied: |s| s.ports.push(port(443, CsProtocol::Tcp, 0)),
            live: |s| {
                s.ports.pop();
            },
            world: untouched,
        },
        case(PortRemoved, |s| s.ports.push(port(443, CsProtocol::Tcp, 0))),
        case(Algorithm, |s| s.algorithm = CsAlgorithm::Source),
        case(CidrsInPlace, |s| {
            s.allowed_cidrs = vec!["10.0.0.0/8".into()]
        }),
        Case {
            row: CidrsRecreated,
            applied: same,
            live: |s| s.allowed_cidrs = vec!["10.0.0.0/8".into()],
            world: |w| w.live.capabilities.as_mut().unwrap().cloudstackversion = "4.20.1.0".into(),
        },
        case(ProtocolProxy, |s| {
            s.ports[0].protocol = CsProtocol::TcpProxy
        }),
        case(ProtocolUdp, |s| s.ports[0].protocol = CsProtocol::Udp),
        case(PublicPort, |s| s.ports[0].port = 8080),
        // The applied spec names the node port; the Service's was changed by hand to another
        // and the CCM followed.
        Case {
            row: NodePort,
            applied: |s| s.ports[0].node_port = 31000,
            live: |s| s.ports[0].node_port = 31999,
            world: untouched,
        },
        behind_the_ccm(Members, |w| {
            w.nodes = nodes(&["web-1", "web-2", "web-3"]);
        }),
        // Written and ignored since the rules exist: restoring it writes nothing the CCM does.
        Case {
            row: PublicIpIgnored,
            applied: |s| s.public_ip = PublicIp::Address("198.51.100.99".into()),
            live: same,
            world: untouched,
        },
        case(FirewallCidrs, |s| {
            s.firewall_cidrs = vec!["192.0.2.0/24".into()]
        }),
        Case {
            row: FirewallIgnored,
            applied: same,
            live: |s| s.firewall_cidrs = vec!["192.0.2.0/24".into()],
            world: |w| w.live.networks[0].vpcid = Some("vpc-1".into()),
        },
        // The source-cidrs annotation set by hand to what the CCM does without it: written
        // away, nothing changes in the cloud.
        behind_the_ccm(ServiceWritten, |w| {
            let annotations = w
                .service
                .metadata
                .annotations
                .get_or_insert_with(Default::default);
            annotations.insert(SOURCE_CIDRS.into(), "0.0.0.0/0".into());
        }),
    ]
}

/// The applied spec and the live state of a case.
fn setup(case: &Case) -> (CloudstackLoadBalancerSpec, World) {
    let mut spec = desired();
    (case.applied)(&mut spec);
    let mut live = spec.clone();
    (case.live)(&mut live);
    let mut world = made_by_the_ccm(&live);
    (case.world)(&mut world);
    (spec, world)
}

fn input<'a>(
    address: &'a Address,
    spec: &'a CloudstackLoadBalancerSpec,
    world: &'a World,
) -> CcmPlanInput<'a> {
    CcmPlanInput {
        address,
        spec,
        service: Some(&world.service),
        nodes: &world.nodes,
        live: &world.live,
        scaled_workers: 0,
    }
}

fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "web")
}

#[test]
fn the_default_world_has_no_drift() {
    let spec = desired();
    let world = made_by_the_ccm(&spec);
    let address = address();
    assert_eq!(
        drift(&input(&address, &spec, &world)),
        DriftCheck::Compared(vec![])
    );
    assert_eq!(plan(&input(&address, &spec, &world)).action, Action::NoOp);
}

#[test]
fn drift_classifies_every_difference_as_plan_restores_it() {
    let address = address();
    let reached: Vec<Change> = cases().iter().map(|c| c.row).collect();
    for case in cases() {
        let (spec, world) = setup(&case);
        let planned = plan(&input(&address, &spec, &world));
        let happens = rule(case.row).happens;
        assert!(
            planned
                .attributes
                .iter()
                .any(|a| a.reason.contains(happens)),
            "{:?}: the difference is not that row's: {:#?}",
            case.row,
            planned.attributes
        );
        // Two rows share a text (the protocol changes): the predictor names the row itself.
        let found = predict(&PredictInput {
            spec: &spec,
            service: Some(&world.service),
            nodes: &world.nodes,
            live: &world.live,
            scaled_workers: 0,
        });
        let rows: Vec<Change> = found.findings.iter().map(|f| f.change).collect();
        assert!(
            rows.contains(&case.row) || (rows.is_empty() && case.row == Change::ServiceWritten),
            "{:?}: the predictor found {rows:?}",
            case.row
        );
        let DriftCheck::Compared(drifted) = drift(&input(&address, &spec, &world)) else {
            panic!("{:?}: not compared", case.row);
        };
        assert!(!drifted.is_empty(), "{:?}: no drift", case.row);
        let classes = |attributes: &[AttributeChange]| -> Vec<(String, Impact)> {
            attributes
                .iter()
                .map(|a| (a.path.clone(), a.impact))
                .collect()
        };
        assert_eq!(
            classes(&drifted),
            classes(&planned.attributes),
            "{:?}",
            case.row
        );
        let class = drifted.iter().map(|a| a.impact).max().unwrap();
        assert!(
            class >= rule(case.row).impact,
            "{:?}: drift says {class}, the row {}",
            case.row,
            rule(case.row).impact
        );
    }
    let unreachable = [
        Change::SamePortTwice,
        Change::ServiceRemoved,
        Change::ServiceDeleted,
    ];
    skyplan_core::provider::impact_table::assert_every_change_covered(
        Change::ALL,
        &reached,
        &unreachable,
    );
}

/// The Service gone from the cluster is drift's "missing"; the plan creates it again and the
/// CCM makes the rules (ServiceCreated, none).
#[test]
fn a_deleted_service_is_missing_and_planned_as_created_again() {
    let spec = desired();
    let world = made_by_the_ccm(&spec);
    let address = address();
    let gone = CcmPlanInput {
        service: None,
        ..input(&address, &spec, &world)
    };
    assert_eq!(drift(&gone), DriftCheck::Missing);
    let planned = plan(&gone);
    assert_eq!(planned.action, Action::Create);
    assert_eq!(planned.impact(), rule(Change::ServiceCreated).impact);
}

/// A port moved back by hand in the cluster and the CCM followed: drift says what restoring
/// it does (the rule on the applied port created again, the other deleted), not "none".
#[test]
fn a_node_port_changed_by_hand_is_pool_recreate_drift() {
    let case = Case {
        row: Change::NodePort,
        applied: |s| s.ports[0].node_port = 31000,
        live: |s| s.ports[0].node_port = 31999,
        world: untouched,
    };
    let (spec, world) = setup(&case);
    let address = address();
    let DriftCheck::Compared(drifted) = drift(&input(&address, &spec, &world)) else {
        panic!("not compared");
    };
    assert_eq!(drifted.len(), 1, "{drifted:#?}");
    assert_eq!(drifted[0].path, "ports.80.node-port");
    assert_eq!(drifted[0].impact, Impact::PoolRecreate);
}
