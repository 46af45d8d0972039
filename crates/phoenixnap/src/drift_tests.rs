//! One reading of each difference: for every row of the PhoenixNAP table a drift check can
//! meet, a live state where that row's difference exists (the block and the Service as the
//! CCM, or someone by hand, left them after an apply), and drift's class for each difference
//! equal to the class `plan` gives restoring it.
//!
//! Rows a drift check cannot meet, and why: `ServiceAdded` and `BlockAdopted` (nothing applied
//! yet: drift says "not applied", checked below); `ServiceRemoved` and `ServiceReleased` (the
//! resource gone from the config: a plan's removal, never drift); `ServiceRenamed` (a change
//! of the config against its last apply, and drift compares with the applied spec itself);
//! `LocationChanged` (a block cannot move: its location is always the one applied, so only a
//! config change makes it differ).
//!
//! One row both meet and read differently, by design: `ServiceDeleted`. The Service gone from
//! the cluster is a difference `plan` cannot restore — skyplan never creates the Service, so
//! the plan stops at the `service` key ("create it first"), naming the CCM's release and its
//! class; drift reports the row, pool-recreate, impact.md's class for a Service removed (the
//! address changes). A plan error is no class: the case checks both sides.

use super::tests::{cluster, inventory, owner_block, record, spec, ASSIGNED, NET};
use super::{drift, plan, PlanInput};
use crate::api::TagAssignment;
use crate::impact::{rule, Change};
use crate::live::{AppliedBlock, ClusterFacts, Inventory};
use skyplan_core::model::{Address, Impact, ResourceKind};
use skyplan_core::plan::AttributeChange;
use skyplan_core::provider::DriftCheck;

/// The live state: the Service's cluster and the account.
struct World {
    cluster: ClusterFacts,
    inventory: Inventory,
}

struct Case {
    /// The row restoring the applied block is.
    row: Change,
    /// What changed since the apply.
    live: fn(&mut World),
}

const ADDRESS: &str = "198.51.100.10";

fn case(row: Change, live: fn(&mut World)) -> Case {
    Case { row, live }
}

/// The apply's record and the live state it left: block b1 on the public network, the
/// Service of type LoadBalancer on its third address.
fn applied() -> (AppliedBlock, World) {
    let block = owner_block("b1", ASSIGNED, Some(NET));
    let record = record(&block);
    let world = World {
        cluster: cluster("LoadBalancer", Some(ADDRESS)),
        inventory: inventory(vec![block]),
    };
    (record, world)
}

fn service_ip(world: &mut World) -> &mut Option<String> {
    &mut world.cluster.service.as_mut().unwrap().load_balancer_ip
}

fn cases() -> Vec<Case> {
    use Change::*;
    vec![
        case(AddressCleared, |w| *service_ip(w) = None),
        case(ServiceTypeChanged, |w| {
            w.cluster.service.as_mut().unwrap().service_type = "ClusterIP".into()
        }),
        case(ClusterRebuilt, |w| w.cluster.uid = "new-uid".into()),
        // The Service let go (type changed and back, say): the CCM cleared its address and
        // tagged the block delete=true; its reaper has not deleted it yet.
        case(ReleasedByController, |w| {
            *service_ip(w) = None;
            let block = &mut w.inventory.blocks[0];
            block
                .tags
                .retain(|t| t.name != "serviceName" && t.name != "serviceNamespace");
            block.tags.push(TagAssignment {
                name: "delete".into(),
                value: Some("true".into()),
            });
        }),
        case(NetworkChanged, |w| {
            w.inventory.blocks[0].assigned_resource_id = Some("net-other".into())
        }),
        case(AddressSetByHand, |w| {
            *service_ip(w) = Some("203.0.113.7".into())
        }),
        case(BlockRetagged, |w| {
            w.inventory.blocks[0]
                .tags
                .retain(|t| t.name != "serviceName")
        }),
        case(BlockDetached, |w| {
            let block = &mut w.inventory.blocks[0];
            block.assigned_resource_id = None;
            block.assigned_resource_type = None;
            block.status = "unassigned".into();
        }),
        case(BlockDeleted, |w| w.inventory.blocks.clear()),
    ]
}

fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "api")
}

/// The input drift reads: the applied spec, its record, the live state.
fn input<'a>(address: &'a Address, record: &'a AppliedBlock, world: &'a World) -> PlanInput<'a> {
    PlanInput {
        address,
        spec: Some(&record.spec),
        prior: Some(record.clone()),
        cluster: Some(&world.cluster),
        inventory: &world.inventory,
        requested: false,
    }
}

fn classes(attributes: &[AttributeChange]) -> Vec<(String, Impact)> {
    attributes
        .iter()
        .map(|a| (a.path.clone(), a.impact))
        .collect()
}

fn says(change: Change) -> String {
    let row = rule(change);
    format!("{}: {}", row.what, row.happens)
}

#[test]
fn the_applied_block_in_place_has_no_drift() {
    let (record, world) = applied();
    let address = address();
    assert_eq!(
        drift(&input(&address, &record, &world)).unwrap(),
        DriftCheck::Compared(vec![])
    );
}

#[test]
fn drift_classifies_every_difference_as_plan_restores_it() {
    let address = address();
    let mut reached: Vec<Change> = cases().iter().map(|c| c.row).collect();
    for case in cases() {
        let (record, mut world) = applied();
        (case.live)(&mut world);
        let planned = plan(&input(&address, &record, &world))
            .unwrap_or_else(|e| panic!("{:?}: {}", case.row, e.message));
        assert!(
            planned
                .attributes
                .iter()
                .any(|a| a.reason == says(case.row)),
            "{:?}: the difference is not that row's: {:#?}",
            case.row,
            planned.attributes
        );
        let DriftCheck::Compared(drifted) = drift(&input(&address, &record, &world)).unwrap()
        else {
            panic!("{:?}: not compared", case.row);
        };
        assert!(!drifted.is_empty(), "{:?}: no drift", case.row);
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
    reached.push(Change::ServiceDeleted);
    let unreachable = [
        Change::ServiceAdded,
        Change::BlockAdopted,
        Change::ServiceRemoved,
        Change::ServiceReleased,
        Change::ServiceRenamed,
        Change::LocationChanged,
    ];
    skyplan_core::provider::impact_table::assert_every_change_covered(
        Change::ALL,
        &reached,
        &unreachable,
    );
}

/// `ServiceDeleted`: drift reports the row (pool-recreate, impact.md's class for a Service
/// removed); plan cannot restore it — skyplan never creates the Service — and stops at the
/// `service` key, naming the same release and class.
#[test]
fn a_service_deleted_from_the_cluster_is_pool_recreate_drift_and_plan_says_create_it_first() {
    let (record, mut world) = applied();
    world.cluster.service = None;
    let address = address();
    let DriftCheck::Compared(drifted) = drift(&input(&address, &record, &world)).unwrap() else {
        panic!("not compared");
    };
    assert_eq!(drifted.len(), 1, "{drifted:#?}");
    assert_eq!(drifted[0].reason, says(Change::ServiceDeleted));
    assert_eq!(drifted[0].impact, Impact::PoolRecreate);
    assert_eq!(drifted[0].impact, rule(Change::ServiceDeleted).impact);
    let error = plan(&input(&address, &record, &world)).unwrap_err();
    assert_eq!(error.key, "service");
    assert!(
        error.message.contains("create it first"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains(rule(Change::ServiceDeleted).happens),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("(pool-recreate)"),
        "{}",
        error.message
    );
}

/// Nothing applied: no drift to read (`ServiceAdded`, `BlockAdopted` are a plan's).
#[test]
fn nothing_applied_is_not_applied() {
    let (_, world) = applied();
    let address = address();
    let spec = spec();
    let unapplied = PlanInput {
        address: &address,
        spec: Some(&spec),
        prior: None,
        cluster: Some(&world.cluster),
        inventory: &world.inventory,
        requested: false,
    };
    assert_eq!(drift(&unapplied).unwrap(), DriftCheck::NotApplied);
}
