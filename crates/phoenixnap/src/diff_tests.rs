//! Each row of the impact table at the diff level: the row found, its class and the operations.

use crate::api::{IpBlock, NetworkBlock, PublicNetwork, TagAssignment};
use crate::ccm::{Owner, TAG_NAMES};
use crate::diff::{plan, PlanInput};
use crate::live::{AppliedBlock, ClusterFacts, Inventory, ServiceFacts};
use crate::ops::Op;
use crate::spec::{PhoenixnapLoadBalancerSpec, PnapLocation};
use skyplan_core::model::{Address, Impact, ResourceKind};
use skyplan_core::plan::{Action, ResourceChange};

pub(super) const UID: &str = "5c1b7a0e-uid";
pub(super) const NET: &str = "net-phx";

pub(super) fn spec() -> PhoenixnapLoadBalancerSpec {
    PhoenixnapLoadBalancerSpec {
        cluster: Address::new(ResourceKind::Cluster, "prod"),
        namespace: "default".into(),
        name: "api".into(),
        public_network: "k8s-public".into(),
        location: PnapLocation::Phx,
    }
}

pub(super) fn owner_block(id: &str, cidr: &str, network: Option<&str>) -> IpBlock {
    let owner = Owner {
        cluster_uid: UID,
        namespace: "default",
        name: "api",
    };
    IpBlock {
        id: id.into(),
        location: "PHX".into(),
        cidr_block_size: "/29".into(),
        cidr: cidr.into(),
        status: if network.is_some() {
            "assigned"
        } else {
            "unassigned"
        }
        .into(),
        assigned_resource_id: network.map(str::to_owned),
        assigned_resource_type: network.map(|_| "public network".to_owned()),
        description: None,
        tags: owner
            .tags()
            .into_iter()
            .map(|t| TagAssignment {
                name: t.name,
                value: Some(t.value),
            })
            .collect(),
    }
}

pub(super) fn inventory(blocks: Vec<IpBlock>) -> Inventory {
    Inventory {
        tag_names: TAG_NAMES.iter().map(|n| n.to_string()).collect(),
        blocks,
        networks: vec![
            PublicNetwork {
                id: NET.into(),
                name: "k8s-public".into(),
                location: "PHX".into(),
                status: Some("READY".into()),
                ip_blocks: vec![],
            },
            PublicNetwork {
                id: "net-other".into(),
                name: "other".into(),
                location: "PHX".into(),
                status: Some("READY".into()),
                ip_blocks: vec![],
            },
        ],
    }
}

pub(super) fn cluster(service_type: &str, ip: Option<&str>) -> ClusterFacts {
    ClusterFacts {
        uid: UID.into(),
        service: Some(ServiceFacts {
            service_type: service_type.into(),
            load_balancer_ip: ip.map(str::to_owned),
            load_balancer_class: None,
            resource_version: Some("7".into()),
        }),
        missing_namespace: None,
    }
}

pub(super) fn record(block: &IpBlock) -> AppliedBlock {
    AppliedBlock {
        spec: spec(),
        block: block.id.clone(),
        cidr: block.cidr.clone(),
        address: "198.51.100.10".into(),
        network_id: NET.into(),
        cluster_uid: UID.into(),
        service_type_before: "ClusterIP".into(),
    }
}

struct Case {
    spec: Option<PhoenixnapLoadBalancerSpec>,
    prior: Option<AppliedBlock>,
    cluster: ClusterFacts,
    inventory: Inventory,
    requested: bool,
}

impl Case {
    fn run(&self) -> Result<ResourceChange, String> {
        self.plan().map_err(|e| e.message)
    }

    fn plan(&self) -> Result<ResourceChange, crate::diff::PlanError> {
        let address = Address::new(ResourceKind::LoadBalancer, "api");
        plan(&PlanInput {
            address: &address,
            spec: self.spec.as_ref(),
            prior: self.prior.clone(),
            cluster: Some(&self.cluster),
            inventory: &self.inventory,
            requested: self.requested,
        })
    }
}

fn applied(block: IpBlock, cluster: ClusterFacts) -> Case {
    Case {
        spec: Some(spec()),
        prior: Some(record(&block)),
        cluster,
        inventory: inventory(vec![block]),
        requested: false,
    }
}

fn ops(change: &ResourceChange) -> Vec<String> {
    change
        .operations
        .iter()
        .map(|op| match Op::of(op) {
            Some(op) => match op {
                Op::CreateTagNames { .. } => "create-tags",
                Op::CreateBlock { .. } => "create-block",
                Op::Attach { .. } => "attach",
                Op::WriteService { .. } => "write-service",
                Op::ClearService { .. } => "clear-service",
                Op::MarkReleased { .. } => "mark-released",
                Op::Detach { .. } => "detach",
                Op::DeleteBlock { .. } => "delete-block",
            }
            .to_string(),
            other => panic!("{other:?}"),
        })
        .collect()
}

pub(super) const ASSIGNED: &str = "198.51.100.8/29";

#[test]
fn a_new_service_gets_a_block_attached_and_its_address() {
    let mut case = Case {
        spec: Some(spec()),
        prior: None,
        cluster: cluster("ClusterIP", None),
        inventory: inventory(vec![]),
        requested: false,
    };
    case.inventory.tag_names.clear();
    let change = case.run().unwrap();
    assert_eq!(change.action, Action::Create);
    assert_eq!(change.impact(), Impact::None);
    assert_eq!(
        ops(&change),
        ["create-tags", "create-block", "attach", "write-service"]
    );
    let Some(Op::CreateBlock { tags, location, .. }) = Op::of(&change.operations[1]) else {
        panic!()
    };
    assert_eq!(location, "PHX");
    let placement = change.placement.as_ref().unwrap();
    assert_eq!(placement.cluster.as_deref(), Some("cluster.prod"));
    assert_eq!(placement.zone.as_deref(), Some("PHX"));
    let pairs: Vec<String> = tags
        .iter()
        .map(|t| format!("{}={}", t.name, t.value))
        .collect();
    assert_eq!(
        pairs,
        [
            "usage=cloud-provider-phoenixnap-auto",
            &format!("cluster={UID}"),
            "serviceNamespace=default",
            "serviceName=api"
        ]
    );
}

#[test]
fn a_tagged_block_is_adopted_and_finished_instead_of_a_second() {
    let case = Case {
        spec: Some(spec()),
        prior: None,
        cluster: cluster("ClusterIP", None),
        inventory: inventory(vec![owner_block("b1", ASSIGNED, None)]),
        requested: false,
    };
    let change = case.run().unwrap();
    assert_eq!(change.impact(), Impact::None);
    assert_eq!(ops(&change), ["attach", "write-service"]);
    assert_eq!(change.attributes[0].path, "block");
}

#[test]
fn an_applied_block_in_place_plans_nothing() {
    let change = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("198.51.100.10")),
    )
    .run()
    .unwrap();
    assert_eq!(change.action, Action::NoOp, "{change:?}");
}

#[test]
fn a_cleared_address_is_written_back_minimal() {
    let change = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", None),
    )
    .run()
    .unwrap();
    assert_eq!(change.impact(), Impact::Minimal);
    assert_eq!(ops(&change), ["write-service"]);
    let Some(Op::WriteService { address, .. }) = Op::of(&change.operations[0]) else {
        panic!()
    };
    assert_eq!(address.as_deref(), Some("198.51.100.10"));
}

#[test]
fn an_address_set_by_hand_is_forbidden_and_replace_makes_a_new_block() {
    let mut case = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("203.0.113.7")),
    );
    let change = case.run().unwrap();
    assert_eq!(change.impact(), Impact::Forbidden);
    assert!(change.is_refused());
    assert!(change.operations.is_empty());
    case.requested = true;
    let change = case.run().unwrap();
    assert!(!change.is_refused());
    assert_eq!(change.action, Action::Replace);
    assert_eq!(
        ops(&change),
        [
            "clear-service",
            "mark-released",
            "detach",
            "delete-block",
            "create-block",
            "attach",
            "write-service"
        ]
    );
}

#[test]
fn another_network_or_location_is_forbidden() {
    let mut case = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("198.51.100.10")),
    );
    case.spec.as_mut().unwrap().public_network = "other".into();
    let change = case.run().unwrap();
    assert_eq!(change.impact(), Impact::Forbidden);
    assert_eq!(change.attributes[0].path, "public-network");
    let mut case = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("198.51.100.10")),
    );
    case.spec.as_mut().unwrap().location = PnapLocation::Ash;
    let change = case.run().unwrap();
    assert_eq!(change.impact(), Impact::Forbidden);
    assert_eq!(change.attributes[0].path, "location");
}

#[test]
fn a_detached_or_retagged_or_deleted_block_is_forbidden() {
    let detached = applied(
        owner_block("b1", ASSIGNED, None),
        cluster("LoadBalancer", Some("198.51.100.10")),
    );
    assert_eq!(
        detached.run().unwrap().attributes[0].path,
        "block.public-network"
    );
    let mut retagged = owner_block("b1", ASSIGNED, Some(NET));
    retagged.tags.retain(|t| t.name != "serviceName");
    let change = applied(retagged, cluster("LoadBalancer", Some("198.51.100.10")))
        .run()
        .unwrap();
    assert_eq!(change.impact(), Impact::Forbidden);
    assert_eq!(change.attributes[0].path, "block.tags");
    let mut gone = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("198.51.100.10")),
    );
    gone.inventory.blocks.clear();
    let change = gone.run().unwrap();
    assert_eq!(change.impact(), Impact::Forbidden);
    assert!(change.operations.is_empty());
}

#[test]
fn a_renamed_service_releases_the_old_block_first() {
    let mut case = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("ClusterIP", None),
    );
    case.spec.as_mut().unwrap().name = "web".into();
    let change = case.run().unwrap();
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(change.action, Action::Replace);
    assert_eq!(
        ops(&change),
        [
            "clear-service",
            "mark-released",
            "detach",
            "delete-block",
            "create-block",
            "attach",
            "write-service"
        ]
    );
    let Some(Op::ClearService { name, .. }) = Op::of(&change.operations[0]) else {
        panic!()
    };
    assert_eq!(name, "api", "the old Service lets go");
}

#[test]
fn a_rebuilt_cluster_or_a_block_the_ccm_released_gets_a_new_block() {
    let mut rebuilt = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("198.51.100.10")),
    );
    rebuilt.cluster.uid = "new-uid".into();
    let change = rebuilt.run().unwrap();
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(change.attributes[0].path, "cluster");
    let mut released = owner_block("b1", ASSIGNED, Some(NET));
    released
        .tags
        .retain(|t| t.name != "serviceName" && t.name != "serviceNamespace");
    released.tags.push(TagAssignment {
        name: "delete".into(),
        value: Some("true".into()),
    });
    let change = applied(released, cluster("LoadBalancer", None))
        .run()
        .unwrap();
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(
        ops(&change),
        [
            "detach",
            "delete-block",
            "create-block",
            "attach",
            "write-service"
        ]
    );
}

#[test]
fn a_service_no_longer_of_type_load_balancer_is_pool_recreate() {
    let change = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("ClusterIP", Some("198.51.100.10")),
    )
    .run()
    .unwrap();
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(change.attributes[0].path, "service.type");
}

/// impact.md's deletion rule: the address is gone for good, so removal is forbidden and does
/// nothing unless named with --allow-delete.
#[test]
fn removal_is_forbidden_without_allow_delete_and_does_nothing() {
    let mut case = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("198.51.100.10")),
    );
    case.spec = None;
    let change = case.run().unwrap();
    assert_eq!(change.action, Action::Delete);
    assert_eq!(change.impact(), Impact::Forbidden);
    assert!(change.is_refused());
    assert!(
        change.attributes[0].reason.contains("--allow-delete"),
        "{:?}",
        change.attributes
    );
    assert!(ops(&change).is_empty(), "{:?}", ops(&change));
    let placement = change.placement.as_ref().unwrap();
    assert_eq!(
        placement.cluster.as_deref(),
        Some("cluster.prod"),
        "placed as applied"
    );
    assert_eq!(placement.zone.as_deref(), Some("PHX"));
}

#[test]
fn removal_with_allow_delete_releases_in_the_ccm_s_order() {
    let mut case = applied(
        owner_block("b1", ASSIGNED, Some(NET)),
        cluster("LoadBalancer", Some("198.51.100.10")),
    );
    case.spec = None;
    case.requested = true;
    let change = case.run().unwrap();
    assert_eq!(change.action, Action::Delete);
    assert_eq!(change.impact(), Impact::Forbidden, "the address is lost");
    assert!(change.requested && !change.is_refused());
    assert!(
        change.attributes[0].reason.contains("gone for good"),
        "{:?}",
        change.attributes
    );
    assert_eq!(
        ops(&change),
        ["clear-service", "mark-released", "detach", "delete-block"]
    );
}

#[test]
fn a_service_in_a_namespace_that_does_not_exist_is_an_error_at_the_service_key() {
    let mut case = Case {
        spec: Some(spec()),
        prior: None,
        cluster: cluster("LoadBalancer", None),
        inventory: inventory(vec![]),
        requested: false,
    };
    case.cluster.service = None;
    let error = case.plan().unwrap_err();
    assert_eq!(error.key, "service");
    assert!(error.message.contains("does not exist"), "{error:?}");
    case.cluster.missing_namespace = Some("namespace `nons` does not exist in cluster.prod".into());
    let error = case.plan().unwrap_err();
    assert_eq!(
        (error.key, error.message.as_str()),
        ("service", "namespace `nons` does not exist in cluster.prod")
    );
}

#[test]
fn plan_time_checks_name_what_exists() {
    let mut case = Case {
        spec: Some(spec()),
        prior: None,
        cluster: cluster("ClusterIP", None),
        inventory: inventory(vec![]),
        requested: false,
    };
    case.spec.as_mut().unwrap().public_network = "nope".into();
    assert_eq!(case.plan().unwrap_err().key, "public-network");
    let error = case.run().unwrap_err();
    assert!(
        error.contains("public networks: k8s-public (net-phx, PHX)"),
        "{error}"
    );
    case.spec = Some(spec());
    case.spec.as_mut().unwrap().location = PnapLocation::Ash;
    assert!(case.run().unwrap_err().contains("is in PHX"));
    assert_eq!(case.plan().unwrap_err().key, "location");
    case.spec = Some(spec());
    case.inventory.networks[0].ip_blocks = (0..10)
        .map(|i| NetworkBlock {
            id: format!("b{i}"),
        })
        .collect();
    assert!(case.run().unwrap_err().contains("already holds 10"));
    case.cluster.service = None;
    let error = case.run().unwrap_err();
    assert!(error.contains("does not exist in cluster.prod"), "{error}");
    assert_eq!(case.plan().unwrap_err().key, "service");
}

#[test]
fn a_block_deleted_by_hand_then_remade_by_the_ccm_is_forbidden_unless_the_service_moved_along() {
    let gone = owner_block("b1", ASSIGNED, Some(NET));
    let remade = owner_block("b2", "198.51.100.16/29", Some(NET));
    let mut case = applied(gone, cluster("LoadBalancer", Some("198.51.100.10")));
    case.inventory.blocks = vec![remade];
    let change = case.run().unwrap();
    assert_eq!(change.impact(), Impact::Forbidden);
    assert_eq!(
        change.attributes[0].reason.split(':').next(),
        Some("block deleted by hand")
    );
    assert!(change.operations.is_empty());
    case.requested = true;
    assert_eq!(ops(&case.run().unwrap()), ["write-service"]);
    case.requested = false;
    case.cluster = cluster("LoadBalancer", Some("198.51.100.18"));
    let change = case.run().unwrap();
    assert_eq!(change.impact(), Impact::PoolRecreate, "{change:?}");
    assert!(change.operations.is_empty());
}
