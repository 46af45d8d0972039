//! One reading of each difference: for every controller-mode row a drift check can meet, a live
//! state where that row's difference exists (the Service and the load balancer as the CCM left
//! them for a spec that differs from the applied one, or a cloud object changed behind it), and
//! drift's class for each difference equal to the class `plan` gives restoring it.
//!
//! Rows a drift check cannot meet, and why: `ServiceCreated` (no Service is drift's "missing",
//! checked below), `VipCleared` and `FloatingIpRemoved` (a change of the config against its last
//! apply, and drift compares with the applied spec itself), `ServiceRemoved` and
//! `ServiceDeleted` (the resource gone from the config: a plan's removal, never drift),
//! `StatusOnly` (force-hostname and ip-mode are nowhere in the cloud: a hand edit of them is the
//! Service field written again, `ServiceWritten`, of the same class none), `AllowedSubnets`
//! (the diff names it from the config against its last apply; a hand edit of the annotation
//! reads as the members it changes, `MembersChanged`, of the same class minimal).

use super::super::impact::{rule, Change};
use super::tests::{address, applied, world, World};
use super::*;
use crate::binding::test_support::{node, server};
use crate::ccm::annotations::PREFIX;
use crate::spec::{self, Algorithm, MonitorType, PortSpec, VipAddress};
use skyplan_core::model::Impact;

type Edit = fn(&mut CloudscaleLoadBalancerSpec);

struct Case {
    /// The row restoring the applied spec is.
    row: Change,
    /// The applied spec, from the default.
    applied: Edit,
    /// The spec the CCM built the live state for, from the applied one.
    live: Edit,
    /// What else changed in the live state (the cloud behind the CCM, the nodes).
    world: fn(&mut World),
}

fn same(_: &mut CloudscaleLoadBalancerSpec) {}
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

fn cases() -> Vec<Case> {
    use Change::*;
    vec![
        case(LbRenamed, |s| s.name = "shop-old".into()),
        case(ListenerTimeouts, |s| s.timeouts.client_data_ms = 60000),
        case(ListenerAllowedCidrs, |s| {
            s.allowed_cidrs = vec!["10.0.0.0/8".into()]
        }),
        Case {
            row: FloatingIpAdded,
            applied: |s| s.floating_ips = vec!["5.102.150.123/32".into()],
            live: |s| s.floating_ips = vec![],
            world: untouched,
        },
        case(MonitorUpdated, |s| s.health_monitor.delay_s = 5),
        case(MonitorRecreated, |s| {
            s.health_monitor.kind = MonitorType::Ping
        }),
        behind_the_ccm(MonitorCreated, |w| {
            for set in w.snapshot.load_balancers[0].pools.values_mut() {
                set.monitor = None;
            }
        }),
        behind_the_ccm(ListenerRecreated, |w| {
            for set in w.snapshot.load_balancers[0].pools.values_mut() {
                set.listener.as_mut().unwrap().name = "by-hand".into();
            }
        }),
        case(ListenerProtocol, |s| {
            s.listener_protocol = spec::ListenerProtocol::Udp
        }),
        case(ListenerPort, |s| s.ports[0].port = 8080),
        case(PortAdded, |s| s.ports.clear()),
        case(PortRemoved, |s| {
            s.ports.push(PortSpec {
                name: "admin".into(),
                port: 8080,
                protocol: spec::PortProtocol::Tcp,
                node_port: 0,
            })
        }),
        case(PortRenamed, |s| s.ports[0].name = "web".into()),
        case(PortProtocol, |s| {
            s.ports[0].protocol = spec::PortProtocol::Udp
        }),
        case(PoolAlgorithm, |s| s.algorithm = Algorithm::SourceIp),
        case(PoolProtocol, |s| {
            s.pool_protocol = spec::PoolProtocol::Proxy
        }),
        Case {
            row: NodePort,
            applied: |s| s.ports[0].node_port = 32000,
            live: |s| s.ports[0].node_port = 31080,
            world: untouched,
        },
        // The port renamed by hand and not yet synced: restoring its name makes the apiserver
        // allocate it a new node port, the pool (named by the config) is kept.
        behind_the_ccm(NewNodePort, |w| {
            let service = w.view.service.as_mut().unwrap();
            service.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].name = Some("web".into());
        }),
        behind_the_ccm(MembersChanged, |w| {
            w.view.nodes.push(node(4, &[]));
            w.servers.push(server(4));
        }),
        Case {
            row: NodeSelector,
            applied: same,
            live: |s| s.node_selector = Some("tier=web".into()),
            world: |w| w.view.nodes[0] = node(1, &[("tier", "web")]),
        },
        // Labels changed since the last sync: the live members are still every node's.
        Case {
            row: NodeLabelsPending,
            applied: |s| s.node_selector = Some("tier=web".into()),
            live: same,
            world: |w| {
                let all =
                    super::super::predict::predicted_spec(&applied(), &w.view, &w.servers).unwrap();
                let lb =
                    crate::desired::desired_objects(&address(), &all, &w.snapshot.subnets).unwrap();
                for (name, set) in lb.pools {
                    w.snapshot.load_balancers[0]
                        .pools
                        .get_mut(&name)
                        .unwrap()
                        .members = set.members;
                }
                w.view.nodes[0] = node(1, &[("tier", "web")]);
            },
        },
        case(TrafficPolicy, |s| {
            s.traffic_policy = spec::TrafficPolicy::Local
        }),
        case(LbFlavor, |s| s.flavor = "lb-large".into()),
        behind_the_ccm(LbZone, |w| {
            w.snapshot.load_balancers[0].lb.zone = "rma1".into()
        }),
        Case {
            row: LbVipAddresses,
            applied: |s| {
                s.vip_addresses = vec![VipAddress {
                    subnet: "public".into(),
                    address: Some("5.102.150.9".into()),
                }]
            },
            live: |s| s.vip_addresses = vec![],
            world: untouched,
        },
        // A managed annotation set by hand to the CCM's default: written away, nothing changes.
        behind_the_ccm(ServiceWritten, |w| {
            let service = w.view.service.as_mut().unwrap();
            let annotations = service.metadata.annotations.as_mut().unwrap();
            annotations.insert(format!("{PREFIX}health-monitor-delay-s"), "2".into());
        }),
        Case {
            row: RenameWithoutUuid,
            applied: same,
            live: |s| s.name = "shop-old".into(),
            world: |w| {
                let service = w.view.service.as_mut().unwrap();
                let annotations = service.metadata.annotations.as_mut().unwrap();
                annotations.remove(super::super::annotations::UUID);
            },
        },
    ]
}

/// The applied spec and the live state of a case.
fn setup(case: &Case) -> (CloudscaleLoadBalancerSpec, World) {
    let mut spec = applied();
    (case.applied)(&mut spec);
    let mut live = spec.clone();
    (case.live)(&mut live);
    let mut world = world(&live, true);
    (case.world)(&mut world);
    (spec, world)
}

fn input<'a>(
    address: &'a Address,
    spec: &'a CloudscaleLoadBalancerSpec,
    world: &'a World,
) -> CcmInput<'a> {
    CcmInput {
        address,
        spec,
        prior: Some(spec),
        view: &world.view,
        servers: &world.servers,
        snapshot: &world.snapshot,
    }
}

/// Every reason in a change: its attributes' and their effects'.
fn reasons(attributes: &[AttributeChange]) -> Vec<&str> {
    attributes
        .iter()
        .flat_map(|a| {
            std::iter::once(a.reason.as_str()).chain(a.effects.iter().map(|e| e.reason.as_str()))
        })
        .collect()
}

#[test]
fn drift_classifies_every_difference_as_plan_restores_it() {
    let address = address();
    let reached: Vec<Change> = cases().iter().map(|c| c.row).collect();
    for case in cases() {
        let (spec, world) = setup(&case);
        let planned = plan(&input(&address, &spec, &world)).unwrap();
        let happens = rule(case.row).happens;
        assert!(
            reasons(&planned.attributes)
                .iter()
                .any(|r| r.contains(happens)),
            "{:?}: the difference is not that row's: {:#?}",
            case.row,
            planned.attributes
        );
        let DriftCheck::Compared(drifted) = drift(&input(&address, &spec, &world)).unwrap() else {
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
        Change::ServiceCreated,
        Change::VipCleared,
        Change::FloatingIpRemoved,
        Change::ServiceRemoved,
        Change::ServiceDeleted,
        Change::StatusOnly,
        Change::AllowedSubnets,
    ];
    skyplan_core::provider::impact_table::assert_every_change_covered(
        Change::ALL,
        &reached,
        &unreachable,
    );
}

/// The Service gone from the cluster is drift's "missing"; the plan creates it again and the
/// CCM builds the load balancer (ServiceCreated, none).
#[test]
fn a_deleted_service_is_missing_and_planned_as_created_again() {
    let spec = applied();
    let mut world = world(&spec, true);
    world.view.service = None;
    world.snapshot.load_balancers.clear();
    let address = address();
    assert_eq!(
        drift(&input(&address, &spec, &world)).unwrap(),
        DriftCheck::Missing
    );
    let planned = plan(&input(&address, &spec, &world)).unwrap();
    assert_eq!(planned.action, Action::Create);
    assert_eq!(planned.impact(), rule(Change::ServiceCreated).impact);
}

/// The quickstart's case: the Service's port renamed back in the cluster and the CCM followed.
/// Restoring the applied name recreates the pool: drift says so, as plan does — not "none".
#[test]
fn a_port_renamed_back_by_hand_is_pool_recreate_drift() {
    let spec = applied();
    let mut live = spec.clone();
    live.ports[0].name = "web".into();
    let world = world(&live, true);
    let address = address();
    let DriftCheck::Compared(drifted) = drift(&input(&address, &spec, &world)).unwrap() else {
        panic!("not compared");
    };
    assert_eq!(drifted[0].path, "ports.http.name");
    assert_eq!(drifted[0].impact, Impact::PoolRecreate);
    assert_eq!(drifted[0].effects[0].path, "ports.http.pool");
}
