//! One test per row of impact.md's CKS table and per plan-time constraint: a spec change
//! against the cluster `lab` applied from [`spec`], checking class, path, reason and the
//! operations in order.

use super::*;
use crate::spec::{Autoscaling, NodeType};
use skyplan_core::model::Impact;
use skyplan_core::plan::{Action, AttributeChange};
use skyplan_core::provider::DriftCheck;

/// Plans `edit`ed spec against the default cluster (Running on KVM), applied from `spec()`.
fn change(edit: impl FnOnce(&mut CloudstackClusterSpec)) -> ResourceChange {
    change_in(|_| {}, edit).unwrap()
}

/// Plans against an `adjust`ed inventory.
fn change_in(
    adjust: impl FnOnce(&mut Inventory),
    edit: impl FnOnce(&mut CloudstackClusterSpec),
) -> Result<ResourceChange, ProviderError> {
    let mut inventory = inventory();
    adjust(&mut inventory);
    let prior = spec();
    let mut desired = spec();
    edit(&mut desired);
    plan_with(&inventory, Some(&desired), Some(&prior), false, false)
}

/// A change to a spec, for tables of cases.
type Edit = Box<dyn Fn(&mut CloudstackClusterSpec)>;

fn error_of(result: Result<ResourceChange, ProviderError>) -> String {
    result.expect_err("a plan error").message
}

fn on_hypervisor(inventory: &mut Inventory, hypervisor: &str) {
    for vm in &mut inventory.vms {
        vm.hypervisor = hypervisor.into();
    }
}

fn live_state(inventory: &mut Inventory, state: &str) {
    inventory.clusters[0].state = state.into();
}

fn attribute<'a>(change: &'a ResourceChange, path: &str) -> &'a AttributeChange {
    change
        .attributes
        .iter()
        .find(|a| a.path == path)
        .unwrap_or_else(|| panic!("no change of `{path}` in {:#?}", change.attributes))
}

fn ops(change: &ResourceChange) -> Vec<String> {
    change.operations.iter().map(ToString::to_string).collect()
}

fn assert_reason(attribute: &AttributeChange, words: &[&str]) {
    for word in words {
        assert!(
            attribute.reason.contains(word),
            "`{word}` not in the reason: {}",
            attribute.reason
        );
    }
}

#[test]
fn the_applied_spec_plans_nothing() {
    let change = change(|_| {});
    assert_eq!(change.action, Action::NoOp);
    assert!(change.attributes.is_empty() && change.operations.is_empty());
}

#[test]
fn a_cluster_added_is_created_with_no_impact() {
    let mut inventory = inventory();
    inventory.clusters.clear();
    let change = plan_with(&inventory, Some(&spec()), None, false, false).unwrap();
    assert_eq!(change.action, Action::Create);
    assert_eq!(change.impact(), Impact::None);
    assert_eq!(
        ops(&change),
        ["create cluster lab (Kubernetes 1.29.3, 1 control + 3 workers, Medium Instance)"]
    );
    assert_eq!(change.record, Some(skyplan_core::plan::Record::of(&spec())));
}

#[test]
fn a_new_cluster_gets_autoscaling_and_its_stopped_state_after_the_create() {
    let mut inventory = inventory();
    inventory.clusters.clear();
    let mut desired = spec();
    desired.autoscaling = Some(Autoscaling { min: 2, max: 5 });
    desired.state = ClusterRunState::Stopped;
    let change = plan_with(&inventory, Some(&desired), None, false, false).unwrap();
    assert_eq!(change.impact(), Impact::None);
    assert_eq!(
        ops(&change)[1..],
        [
            "set autoscaling of cluster lab to 2-5 workers",
            "stop cluster lab"
        ]
    );
}

#[test]
fn a_cluster_of_that_name_is_adopted_instead_of_created_again() {
    let change = plan_with(&inventory(), Some(&spec()), None, false, false).unwrap();
    assert_eq!(change.action, Action::NoOp);
}

#[test]
fn a_destroyed_cluster_of_that_name_is_not_adopted() {
    let mut inventory = inventory();
    live_state(&mut inventory, "Destroyed");
    let change = plan_with(&inventory, Some(&spec()), None, false, false).unwrap();
    assert_eq!(change.action, Action::Create);
}

#[test]
fn description_cannot_be_applied_and_is_said_once() {
    let change = change(|s| s.description = Some("the lab".into()));
    assert_eq!(change.action, Action::Update);
    let description = attribute(&change, "description");
    assert_eq!(description.impact, Impact::None);
    assert_reason(description, &["no API", "cannot be applied"]);
    assert!(change.operations.is_empty());
    // Once recorded, the same config plans nothing more.
    let mut recorded = spec();
    recorded.description = Some("the lab".into());
    let again = plan_with(&inventory(), Some(&recorded), Some(&recorded), false, false).unwrap();
    assert_eq!(again.action, Action::NoOp);
}

#[test]
fn worker_count_up_is_minimal_with_no_downtime() {
    let change = change(|s| s.workers = 5);
    let workers = attribute(&change, "workers");
    assert_eq!(workers.impact, Impact::Minimal);
    assert_eq!(
        (workers.before.clone(), workers.after.clone()),
        (3.into(), 5.into())
    );
    assert!(workers.downtime.is_zero());
    assert_reason(workers, &["scaleKubernetesCluster size"]);
    assert_eq!(ops(&change), ["scale cluster lab to 5 workers"]);
}

#[test]
fn worker_count_down_is_minimal_and_drains() {
    let change = change(|s| s.workers = 1);
    let workers = attribute(&change, "workers");
    assert_eq!(workers.impact, Impact::Minimal);
    assert!(workers.downtime.max > 0);
    assert_reason(workers, &["drained"]);
    assert_eq!(ops(&change), ["scale cluster lab to 1 workers"]);
}

#[test]
fn worker_count_of_a_stopped_cluster_is_forbidden() {
    let mut stopped = spec();
    stopped.state = ClusterRunState::Stopped;
    let mut inventory = inventory();
    live_state(&mut inventory, "Stopped");
    let mut desired = stopped.clone();
    desired.workers = 4;
    let change = plan_with(&inventory, Some(&desired), Some(&stopped), false, false).unwrap();
    let workers = attribute(&change, "workers");
    assert_eq!(workers.impact, Impact::Forbidden);
    assert_reason(workers, &["Stopped", "start"]);
    assert!(change.is_refused());
    assert!(change.operations.is_empty());
}

#[test]
fn worker_count_of_a_cluster_that_is_started_runs_after_the_start() {
    let change = change_in(|i| live_state(i, "Stopped"), |s| s.workers = 4).unwrap();
    assert_eq!(attribute(&change, "state").impact, Impact::PoolRecreate);
    assert_eq!(attribute(&change, "workers").impact, Impact::Minimal);
    assert_eq!(
        ops(&change),
        ["start cluster lab", "scale cluster lab to 4 workers"]
    );
}

#[test]
fn autoscaling_on_is_none_and_the_worker_count_is_the_autoscalers() {
    let change = change(|s| {
        s.autoscaling = Some(Autoscaling { min: 2, max: 6 });
        s.workers = 5;
    });
    let autoscaling = attribute(&change, "autoscaling");
    assert_eq!(autoscaling.impact, Impact::None);
    assert_eq!(autoscaling.after, serde_json::json!({"min": 2, "max": 6}));
    let workers = attribute(&change, "workers");
    assert_eq!(workers.impact, Impact::None);
    assert_reason(workers, &["autoscaler"]);
    assert_eq!(
        ops(&change),
        ["set autoscaling of cluster lab to 2-6 workers"]
    );
}

#[test]
fn autoscaling_off_and_a_size_are_two_calls() {
    let mut autoscaled = spec();
    autoscaled.autoscaling = Some(Autoscaling { min: 2, max: 6 });
    let mut inventory = inventory();
    inventory.clusters[0] = live_cluster(&autoscaled, &inventory);
    inventory.clusters[0].size = 6;
    let change = plan_with(&inventory, Some(&spec()), Some(&autoscaled), false, false).unwrap();
    assert_eq!(attribute(&change, "autoscaling").impact, Impact::None);
    assert_eq!(attribute(&change, "workers").impact, Impact::Minimal);
    assert_eq!(
        ops(&change),
        [
            "turn off autoscaling of cluster lab",
            "scale cluster lab to 3 workers"
        ]
    );
}

#[test]
fn autoscaling_bounds_are_checked_at_plan_time() {
    let error = error_of(change_in(
        |_| {},
        |s| s.autoscaling = Some(Autoscaling { min: 4, max: 4 }),
    ));
    assert!(
        error.contains("must be greater than autoscaling.min"),
        "{error}"
    );
    let error = error_of(change_in(
        |_| {},
        |s| s.autoscaling = Some(Autoscaling { min: 2, max: 10 }),
    ));
    assert!(error.contains("maximum cluster size 10"), "{error}");
}

#[test]
fn a_patch_or_the_next_minor_is_a_minimal_upgrade() {
    for target in ["1.29.5", "1.30.1"] {
        let change = change(|s| s.kubernetes_version = target.into());
        let version = attribute(&change, "kubernetes-version");
        assert_eq!(version.impact, Impact::Minimal, "{target}");
        assert_eq!(version.after, serde_json::json!(target));
        assert_reason(version, &["upgradeKubernetesCluster", "one at a time"]);
        assert_eq!(
            ops(&change),
            [format!("upgrade cluster lab to Kubernetes {target}")]
        );
    }
}

#[test]
fn the_same_version_by_uuid_plans_nothing() {
    let change = change(|s| s.kubernetes_version = "v1293".into());
    assert_eq!(change.action, Action::NoOp);
}

#[test]
fn skipping_a_minor_downgrading_or_another_major_is_forbidden() {
    for (target, words) in [
        ("1.31.0", vec!["next minor", "1.30.x first"]),
        ("1.28.5", vec!["downgraded"]),
        ("2.0.0", vec!["major"]),
    ] {
        let change = change(|s| s.kubernetes_version = target.into());
        let version = attribute(&change, "kubernetes-version");
        assert_eq!(version.impact, Impact::Forbidden, "{target}");
        assert_reason(version, &words);
        assert!(change.operations.is_empty(), "{target}");
    }
}

#[test]
fn an_upgrade_needs_an_enabled_version_with_a_ready_iso() {
    let error = error_of(change_in(
        |_| {},
        |s| s.kubernetes_version = "1.30.9".into(),
    ));
    assert!(error.contains("1.30.9 is Disabled"), "{error}");
    let error = error_of(change_in(
        |i| {
            let v = i
                .versions
                .iter_mut()
                .find(|v| v.semanticversion == "1.30.1");
            v.unwrap().isostate = "Creating".into();
        },
        |s| s.kubernetes_version = "1.30.1".into(),
    ));
    assert!(
        error.contains("ISO") && error.contains("not Ready"),
        "{error}"
    );
}

#[test]
fn an_upgrade_checks_the_clusters_offering_against_the_new_minimums() {
    let error = error_of(change_in(
        |i| {
            let v = i
                .versions
                .iter_mut()
                .find(|v| v.semanticversion == "1.30.1");
            v.unwrap().minmemory = 8192;
        },
        |s| s.kubernetes_version = "1.30.1".into(),
    ));
    assert!(
        error.contains("Medium Instance") && error.contains("8192"),
        "{error}"
    );
}

#[test]
fn an_upgrade_needs_the_cluster_running() {
    let mut stopped = spec();
    stopped.state = ClusterRunState::Stopped;
    let mut inventory = inventory();
    live_state(&mut inventory, "Stopped");
    let mut desired = stopped.clone();
    desired.kubernetes_version = "1.29.5".into();
    let change = plan_with(&inventory, Some(&desired), Some(&stopped), false, false).unwrap();
    let version = attribute(&change, "kubernetes-version");
    assert_eq!(version.impact, Impact::Forbidden);
    assert_reason(version, &["Stopped", "Running"]);
    // Asking for it to run starts it first.
    let change = change_in(
        |i| live_state(i, "Stopped"),
        |s| s.kubernetes_version = "1.29.5".into(),
    )
    .unwrap();
    assert_eq!(
        ops(&change),
        [
            "start cluster lab",
            "upgrade cluster lab to Kubernetes 1.29.5"
        ]
    );
}

#[test]
fn an_offering_up_on_xenserver_vmware_or_the_simulator_is_scaled_in_place() {
    for hypervisor in ["XenServer", "VMware", "Simulator"] {
        let change = change_in(
            |i| on_hypervisor(i, hypervisor),
            |s| s.service_offering = "Large Instance".into(),
        )
        .unwrap();
        let offering = attribute(&change, "service-offering");
        assert_eq!(offering.impact, Impact::Minimal, "{hypervisor}");
        assert_eq!(offering.before, serde_json::json!("Medium Instance"));
        assert_eq!(
            ops(&change),
            ["scale cluster lab to offering Large Instance"]
        );
    }
}

#[test]
fn an_offering_change_on_kvm_stops_the_whole_cluster() {
    let change = change(|s| s.service_offering = "Large Instance".into());
    let offering = attribute(&change, "service-offering");
    assert_eq!(offering.impact, Impact::PoolRecreate);
    assert_reason(offering, &["KVM", "stops the cluster"]);
    assert!(offering.downtime.min >= 180);
    assert_eq!(
        ops(&change),
        [
            "stop cluster lab",
            "scale cluster lab to offering Large Instance",
            "start cluster lab"
        ]
    );
}

#[test]
fn a_vm_of_unknown_hypervisor_counts_as_one_that_cannot_scale() {
    let change = change_in(
        |i| {
            on_hypervisor(i, "XenServer");
            i.vms.pop();
        },
        |s| s.service_offering = "Large Instance".into(),
    )
    .unwrap();
    let offering = attribute(&change, "service-offering");
    assert_eq!(offering.impact, Impact::PoolRecreate);
    assert_reason(offering, &["unknown hypervisor"]);
}

#[test]
fn an_offering_down_while_running_is_forbidden() {
    let change = change_in(
        |i| on_hypervisor(i, "XenServer"),
        |s| s.service_offering = "Small Instance".into(),
    )
    .unwrap();
    let offering = attribute(&change, "service-offering");
    assert_eq!(offering.impact, Impact::Forbidden);
    assert_reason(offering, &["scaled down", "stopped"]);
    assert!(change.is_refused());
}

#[test]
fn an_offering_down_while_stopped_is_minimal() {
    let mut stopped = spec();
    stopped.state = ClusterRunState::Stopped;
    let mut inventory = inventory();
    live_state(&mut inventory, "Stopped");
    let mut desired = stopped.clone();
    desired.service_offering = "Small Instance".into();
    let change = plan_with(&inventory, Some(&desired), Some(&stopped), false, false).unwrap();
    let offering = attribute(&change, "service-offering");
    assert_eq!(offering.impact, Impact::Minimal);
    assert_reason(offering, &["smaller offering is accepted"]);
    assert_eq!(
        ops(&change),
        ["scale cluster lab to offering Small Instance"]
    );
}

#[test]
fn an_offering_down_with_a_stop_is_done_after_the_stop() {
    let change = change(|s| {
        s.service_offering = "Small Instance".into();
        s.state = ClusterRunState::Stopped;
    });
    assert_eq!(attribute(&change, "state").impact, Impact::PoolRecreate);
    assert_eq!(
        attribute(&change, "service-offering").impact,
        Impact::Minimal
    );
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(
        ops(&change),
        [
            "stop cluster lab",
            "scale cluster lab to offering Small Instance"
        ]
    );
}

#[test]
fn an_offering_of_a_stopped_cluster_is_changed_before_it_starts() {
    let change = change_in(
        |i| live_state(i, "Stopped"),
        |s| s.service_offering = "Large Instance".into(),
    )
    .unwrap();
    assert_eq!(
        attribute(&change, "service-offering").impact,
        Impact::Minimal
    );
    assert_eq!(
        ops(&change),
        [
            "scale cluster lab to offering Large Instance",
            "start cluster lab"
        ]
    );
}

#[test]
fn offerings_below_the_minimums_are_plan_errors() {
    let error = error_of(change_in(
        |_| {},
        |s| s.service_offering = "Tiny Instance".into(),
    ));
    assert!(error.contains("at least 2 vCPU and 2048 MB"), "{error}");
    let error = error_of(change_in(|_| {}, |s| s.service_offering = "Custom".into()));
    assert!(error.contains("custom"), "{error}");
    let error = error_of(change_in(
        |i| i.versions.iter_mut().for_each(|v| v.mincpunumber = 8),
        |s| s.service_offering = "Small Instance".into(),
    ));
    assert!(error.contains("needs at least 8 vCPU"), "{error}");
}

#[test]
fn worker_scale_down_with_an_offering_change_is_split_offering_first() {
    let in_place = change_in(
        |i| on_hypervisor(i, "VMware"),
        |s| {
            s.service_offering = "Large Instance".into();
            s.workers = 2;
        },
    )
    .unwrap();
    assert_eq!(in_place.impact(), Impact::Minimal);
    assert_reason(attribute(&in_place, "workers"), &["separate call", "Alert"]);
    assert_eq!(
        ops(&in_place),
        [
            "scale cluster lab to offering Large Instance",
            "scale cluster lab to 2 workers"
        ]
    );
    // On KVM the class is the higher of the two: the stop → scale → start.
    let change = change(|s| {
        s.service_offering = "Large Instance".into();
        s.workers = 2;
    });
    assert_eq!(change.impact(), Impact::PoolRecreate);
    assert_eq!(
        ops(&change),
        [
            "stop cluster lab",
            "scale cluster lab to offering Large Instance",
            "start cluster lab",
            "scale cluster lab to 2 workers"
        ]
    );
}

#[test]
fn create_only_attributes_are_forbidden_and_name_a_new_cluster() {
    let cases: Vec<(&str, Edit)> = vec![
        ("control-nodes", Box::new(|s| s.control_nodes = 3)),
        ("etcd-nodes", Box::new(|s| s.etcd_nodes = 3)),
        ("zone", Box::new(|s| s.zone = "zone2".into())),
        ("network", Box::new(|s| s.network = Some("k8s-net".into()))),
        ("keypair", Box::new(|s| s.keypair = Some("ops".into()))),
    ];
    for (path, edit) in cases {
        let change = change_in(
            |i| {
                let mut zone2 = i.zones[0].clone();
                zone2.id = "z2".into();
                zone2.name = "zone2".into();
                i.zones.push(zone2);
                i.versions.iter_mut().for_each(|v| v.zoneid = None);
            },
            |s| edit(s),
        )
        .unwrap();
        let attribute = attribute(&change, path);
        assert_eq!(attribute.impact, Impact::Forbidden, "{path}");
        assert_reason(attribute, &["new cluster", "--replace"]);
        assert!(change.operations.is_empty(), "{path}");
        assert!(change.is_refused(), "{path}");
    }
}

#[test]
fn dropping_a_supplied_network_from_the_config_is_forbidden() {
    let mut supplied = spec();
    supplied.network = Some("k8s-net".into());
    let mut inventory = inventory();
    inventory.clusters[0] = live_cluster(&supplied, &inventory);
    let change = plan_with(&inventory, Some(&spec()), Some(&supplied), false, false).unwrap();
    assert_eq!(attribute(&change, "network").impact, Impact::Forbidden);
}

#[test]
fn running_to_stopped_and_back_stops_the_whole_cluster() {
    let change = change(|s| s.state = ClusterRunState::Stopped);
    let state = attribute(&change, "state");
    assert_eq!(state.impact, Impact::PoolRecreate);
    assert_eq!(state.after, serde_json::json!("stopped"));
    assert_reason(state, &["stopKubernetesCluster"]);
    assert_eq!(ops(&change), ["stop cluster lab"]);

    let change = change_in(|i| live_state(i, "Stopped"), |_| {}).unwrap();
    let state = attribute(&change, "state");
    assert_eq!(state.impact, Impact::PoolRecreate);
    assert_reason(state, &["startKubernetesCluster"]);
    assert_eq!(ops(&change), ["start cluster lab"]);
}

#[test]
fn a_cluster_in_alert_is_started_and_one_in_a_transient_state_is_left_alone() {
    let change = change_in(|i| live_state(i, "Alert"), |_| {}).unwrap();
    assert_reason(attribute(&change, "state"), &["Alert"]);
    assert_eq!(ops(&change), ["start cluster lab"]);

    for busy in ["Scaling", "Upgrading", "Starting"] {
        let change = change_in(|i| live_state(i, busy), |s| s.workers = 4).unwrap();
        let workers = attribute(&change, "workers");
        assert_eq!(workers.impact, Impact::Forbidden, "{busy}");
        assert_reason(workers, &[busy, "Created, Running or Stopped"]);
        assert!(change.operations.is_empty(), "{busy}");
    }
    // Scaling heads to Running: with nothing else to change there is nothing to do.
    let change = change_in(|i| live_state(i, "Scaling"), |_| {}).unwrap();
    assert_eq!(change.action, Action::NoOp);
    // An errored cluster cannot be started: replace it.
    let change = change_in(|i| live_state(i, "Error"), |_| {}).unwrap();
    assert_eq!(attribute(&change, "state").impact, Impact::Forbidden);
}

#[test]
fn a_removed_cluster_is_a_forbidden_delete_unless_named() {
    let inventory = inventory();
    let change = plan_with(&inventory, None, Some(&spec()), false, false).unwrap();
    assert_eq!(change.action, Action::Delete);
    assert!(change.is_refused());
    assert!(change.operations.is_empty());
    assert_reason(&change.attributes[0], &["--allow-delete"]);

    let change = plan_with(&inventory, None, Some(&spec()), false, true).unwrap();
    assert!(!change.is_refused() && change.requested);
    assert_eq!(change.impact(), Impact::Forbidden);
    assert_reason(&change.attributes[0], &["workloads", "CKS made network"]);
    assert_eq!(ops(&change), ["delete cluster lab"]);
    assert_eq!(change.record, None);
}

#[test]
fn deleting_a_cluster_on_a_supplied_network_leaves_the_ccms_rules() {
    let mut supplied = spec();
    supplied.network = Some("k8s-net".into());
    let mut inventory = inventory();
    inventory.clusters[0] = live_cluster(&supplied, &inventory);
    let change = plan_with(&inventory, None, Some(&supplied), false, true).unwrap();
    assert_reason(&change.attributes[0], &["not removed", "k8s-net"]);
}

#[test]
fn a_cluster_in_a_state_that_cannot_be_deleted_is_refused_even_when_named() {
    let mut inventory = inventory();
    live_state(&mut inventory, "Scaling");
    let change = plan_with(&inventory, None, Some(&spec()), false, true).unwrap();
    assert!(change.is_refused());
    assert_reason(&change.attributes[0], &["Scaling"]);
    assert!(change.operations.is_empty());
}

#[test]
fn replace_deletes_and_creates_with_its_real_consequence() {
    let mut desired = spec();
    desired.control_nodes = 3;
    let change = plan_with(&inventory(), Some(&desired), Some(&spec()), true, false).unwrap();
    assert_eq!(change.action, Action::Replace);
    assert_eq!(change.impact(), Impact::Forbidden);
    assert!(change.requested && !change.is_refused());
    assert_reason(&change.attributes[0], &["workloads are gone"]);
    assert_eq!(
        ops(&change),
        [
            "delete cluster lab",
            "create cluster lab (Kubernetes 1.29.3, 3 control + 3 workers, Medium Instance)"
        ]
    );
}

#[test]
fn create_checks_the_limits() {
    let mut inventory = inventory();
    inventory.clusters.clear();
    let plan = |edit: fn(&mut CloudstackClusterSpec)| {
        let mut desired = spec();
        edit(&mut desired);
        error_of(plan_with(&inventory, Some(&desired), None, false, false))
    };
    assert!(plan(|s| s.workers = 10).contains("maximum cluster size 10"));
    assert!(plan(|s| s.workers = 0).contains("workers must be at least 1"));
    let error = plan(|s| {
        s.control_nodes = 3;
        s.kubernetes_version = "1.14.0".into();
    });
    assert!(error.contains("HA") && error.contains("1.16.0"), "{error}");
    assert!(plan(|s| s.zone = "zz9".into()).contains("zone `zz9` does not exist; zones: zone1"));
    assert!(plan(|s| s.kubernetes_version = "1.30.9".into()).contains("Disabled"));
}

#[test]
fn node_offerings_need_cloudstack_4_21() {
    let error = error_of(change_in(
        |i| i.capabilities.as_mut().unwrap().cloudstackversion = "4.20.1.0".into(),
        |s| {
            s.node_offerings
                .insert(NodeType::Worker, "Large Instance".into());
        },
    ));
    assert!(
        error.contains("node-offerings need CloudStack 4.21"),
        "{error}"
    );
    assert!(error.contains("4.20.1"), "{error}");
}

#[test]
fn a_worker_offering_of_its_own_is_sent_per_node_type() {
    let change = change_in(
        |i| on_hypervisor(i, "XenServer"),
        |s| {
            s.node_offerings
                .insert(NodeType::Worker, "Large Instance".into());
        },
    )
    .unwrap();
    let offering = attribute(&change, "node-offerings.worker");
    assert_eq!(offering.impact, Impact::Minimal);
    assert_eq!(offering.after, serde_json::json!("Large Instance"));
    assert_eq!(
        ops(&change),
        ["scale cluster lab to offering Medium Instance, control Medium Instance, worker Large Instance"]
    );
}

#[test]
fn a_size_change_keeps_the_per_type_offerings_the_nodes_have() {
    let mut own = spec();
    own.node_offerings
        .insert(NodeType::Worker, "Large Instance".into());
    let mut inventory = inventory();
    inventory.clusters[0].workerofferingid = Some("o-large".into());
    let mut desired = own.clone();
    desired.workers = 4;
    let change = plan_with(&inventory, Some(&desired), Some(&own), false, false).unwrap();
    assert_eq!(ops(&change), ["scale cluster lab to 4 workers"]);
    let Some(crate::ops::Op::Cluster(crate::cluster::ClusterOp::ScaleSize { pinned, .. })) =
        crate::ops::Op::of(&change.operations[0])
    else {
        panic!("a size change");
    };
    assert_eq!(pinned.len(), 2);
    assert!(pinned
        .iter()
        .any(|p| p.node == NodeType::Worker && p.offering.id == "o-large"));
}

#[test]
fn drift_is_the_change_that_restores_the_applied_spec() {
    let address = address();
    let prior = state_entry(&spec());
    let mut inventory = inventory();
    inventory.clusters[0].size = 5;
    let mut empty = inventory.clone();
    empty.clusters.clear();
    let input = PlanInput {
        address: &address,
        desired: Some(&spec()),
        prior: Some(&prior),
        live: &inventory,
        replace: false,
        allow_delete: false,
    };
    let DriftCheck::Compared(changes) = super::super::drift(&input).unwrap() else {
        panic!("compared");
    };
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].path, "workers");
    assert_eq!(changes[0].impact, Impact::Minimal);

    let input = PlanInput {
        live: &empty,
        ..input
    };
    assert_eq!(super::super::drift(&input).unwrap(), DriftCheck::Missing);
    let input = PlanInput {
        prior: None,
        ..input
    };
    assert_eq!(super::super::drift(&input).unwrap(), DriftCheck::NotApplied);
}

/// No plan under-predicts: whatever operation a plan contains, the class it shows is at
/// least what that operation does (a stop or start is the whole cluster).
#[test]
fn a_plan_with_a_stop_or_start_is_never_below_pool_recreate() {
    let edits: Vec<Edit> = vec![
        Box::new(|s| s.state = ClusterRunState::Stopped),
        Box::new(|s| s.service_offering = "Large Instance".into()),
        Box::new(|s| {
            s.service_offering = "Small Instance".into();
            s.state = ClusterRunState::Stopped;
        }),
        Box::new(|s| s.workers = 5),
        Box::new(|s| s.kubernetes_version = "1.30.1".into()),
    ];
    for edit in edits {
        let change = change(|s| edit(s));
        let stops = change.operations.iter().any(|op| {
            ["stop", "start"]
                .iter()
                .any(|w| op.to_string().starts_with(w))
        });
        if stops {
            assert!(
                change.impact() >= Impact::PoolRecreate,
                "{:?}",
                ops(&change)
            );
        }
        if !change.operations.is_empty() && !stops {
            assert!(change.impact() >= Impact::Minimal, "{:?}", ops(&change));
        }
    }
}

#[test]
fn autoscaling_bounds_that_exclude_the_worker_count_move_workers() {
    let change = change(|s| s.autoscaling = Some(Autoscaling { min: 4, max: 6 }));
    let autoscaling = attribute(&change, "autoscaling");
    assert_eq!(autoscaling.impact, Impact::Minimal);
    assert_reason(autoscaling, &["3 workers, outside 4-6"]);
    assert_eq!(
        ops(&change),
        ["set autoscaling of cluster lab to 4-6 workers"]
    );
}

#[test]
fn autoscaling_of_a_stopped_cluster_waits_until_it_runs() {
    let mut stopped = spec();
    stopped.state = ClusterRunState::Stopped;
    let mut inventory = inventory();
    live_state(&mut inventory, "Stopped");
    let mut desired = stopped.clone();
    desired.autoscaling = Some(Autoscaling { min: 2, max: 5 });
    let change = plan_with(&inventory, Some(&desired), Some(&stopped), false, false).unwrap();
    let autoscaling = attribute(&change, "autoscaling");
    assert_eq!(autoscaling.impact, Impact::Forbidden);
    assert_reason(autoscaling, &["Stopped", "start it first"]);
}

#[test]
fn an_upgrade_of_a_cluster_whose_offering_left_the_catalog_is_an_error() {
    let error = error_of(change_in(
        |i| i.clusters[0].serviceofferingid = "o-gone".into(),
        |s| s.kubernetes_version = "1.29.5".into(),
    ));
    assert!(error.contains("o-gone is not in the catalog"), "{error}");
}

#[test]
fn a_cluster_whose_own_network_has_other_vms_cannot_be_deleted() {
    use crate::api::Nic;
    let mut inventory = inventory();
    let mut stranger = inventory.vms[0].clone();
    stranger.id = "vm-x".into();
    stranger.name = "stranger".into();
    stranger.nic = vec![Nic {
        id: "nic-x".into(),
        networkid: "n-auto".into(),
        ipaddress: None,
        isdefault: true,
    }];
    inventory.vms.push(stranger);
    let change = plan_with(&inventory, None, Some(&spec()), false, true).unwrap();
    assert!(change.is_refused());
    assert_reason(
        &change.attributes[0],
        &["stranger", "not part of the Kubernetes cluster"],
    );
    let change = plan_with(&inventory, Some(&spec()), Some(&spec()), true, false).unwrap();
    assert!(change.is_refused());
    assert!(change.operations.is_empty());
}
