//! One test per row of impact.md's CKS table: apply a cluster, change its config, check the
//! class the plan gives, then apply (unless apply must refuse) and check what the simulated
//! CloudStack did, and that planning again finds nothing to do.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cloudstack::support::{change, operations, paths, reasons, text, CsProject};

/// `[cluster.lab]` with the defaults below, `overrides` replacing or adding keys.
fn cluster(overrides: &[(&str, &str)]) -> String {
    let mut keys: BTreeMap<&str, &str> = [
        ("provider", "\"cloudstack\""),
        ("zone", "\"zone1\""),
        ("kubernetes-version", "\"1.29.3\""),
        ("workers", "2"),
        ("service-offering", "\"Medium Instance\""),
        ("network", "\"k8s-net\""),
    ]
    .into_iter()
    .collect();
    keys.extend(overrides.iter().copied());
    let mut text = String::from("[cluster.lab]\n");
    for (key, value) in keys {
        text += &format!("{key} = {value}\n");
    }
    text
}

struct Row {
    project: CsProject,
    plan: Value,
    id_before: String,
}

/// Applies `before`, checks the plan after it is empty, then plans `after`.
fn row_in(project: CsProject, before: &[(&str, &str)], after: &[(&str, &str)]) -> Row {
    project.config(&cluster(before));
    project.apply_converges();
    let id_before = text(project.account().cluster("lab"), "id");
    project.config(&cluster(after));
    let plan = project.plan(&[]);
    Row {
        project,
        plan,
        id_before,
    }
}

fn row(before: &[(&str, &str)], after: &[(&str, &str)]) -> Row {
    row_in(CsProject::new(), before, after)
}

impl Row {
    fn change(&self) -> &Value {
        change(&self.plan, "cluster.lab")
    }

    /// The cluster's class, and an attribute whose path contains `path`.
    fn assert_class(&self, impact: &str, path: &str) -> &Self {
        let change = self.change();
        assert_eq!(change["impact"], impact, "{:#}", self.plan);
        assert!(
            paths(change).iter().any(|p| p.contains(path)),
            "an attribute at {path}: {:#}",
            self.plan
        );
        self
    }

    fn assert_reason_mentions(&self, words: &str) -> &Self {
        let reasons = reasons(self.change()).to_lowercase();
        assert!(reasons.contains(&words.to_lowercase()), "{reasons}");
        self
    }

    /// Applies, checks the cluster kept its ID, and returns it as the API lists it.
    fn apply_in_place(&self) -> Value {
        self.project.apply_converges();
        let account = self.project.account();
        let cluster = account.cluster("lab").clone();
        assert_eq!(text(&cluster, "id"), self.id_before, "the same cluster");
        assert_eq!(account.clusters.len(), 1, "no second cluster");
        cluster
    }

    /// Apply refuses the forbidden change and leaves the cluster as it was.
    fn assert_refused(&self) {
        let out = self.project.apply(&[]);
        assert_eq!(out.code, 1, "{out:?}");
        assert!(out.stderr.contains("forbidden"), "{out:?}");
    }
}

#[test]
fn cs_description_has_no_update_api() {
    let row = row(&[], &[("description", "\"the lab\"")]);
    row.assert_class("none", "description");
    row.assert_reason_mentions("cannot");
}

#[test]
fn cs_worker_count_up_is_minimal() {
    let row = row(&[], &[("workers", "3")]);
    row.assert_class("minimal", "workers");
    let cluster = row.apply_in_place();
    assert_eq!(text(&cluster, "size"), "3");
    assert_eq!(text(&cluster, "state"), "Running");
}

#[test]
fn cs_worker_count_down_is_minimal() {
    let row = row(&[("workers", "3")], &[("workers", "2")]);
    row.assert_class("minimal", "workers");
    let cluster = row.apply_in_place();
    assert_eq!(text(&cluster, "size"), "2");
}

#[test]
fn cs_worker_count_of_a_stopped_cluster_is_forbidden() {
    let row = row(
        &[("state", "\"stopped\"")],
        &[("state", "\"stopped\""), ("workers", "3")],
    );
    row.assert_class("forbidden", "workers");
    row.assert_reason_mentions("stopped");
    row.assert_refused();
}

#[test]
fn cs_autoscaling_is_none() {
    let row = row(&[], &[("autoscaling", "{ min = 1, max = 4 }")]);
    row.assert_class("none", "autoscaling");
    let cluster = row.apply_in_place();
    assert_eq!(cluster["autoscalingenabled"], true, "{cluster:#}");
    assert_eq!(text(&cluster, "maxsize"), "4");
}

#[test]
fn cs_patch_upgrade_is_minimal() {
    let row = row(&[], &[("kubernetes-version", "\"1.29.10\"")]);
    row.assert_class("minimal", "kubernetes-version");
    let cluster = row.apply_in_place();
    assert!(
        text(&cluster, "kubernetesversionname").contains("1.29.10"),
        "{cluster:#}"
    );
}

#[test]
fn cs_next_minor_upgrade_is_minimal() {
    let row = row(&[], &[("kubernetes-version", "\"1.30.5\"")]);
    row.assert_class("minimal", "kubernetes-version");
    let cluster = row.apply_in_place();
    assert!(
        text(&cluster, "kubernetesversionname").contains("1.30.5"),
        "{cluster:#}"
    );
}

#[test]
fn cs_skipping_a_minor_or_downgrading_is_forbidden() {
    let skip = row(
        &[("kubernetes-version", "\"1.28.15\"")],
        &[("kubernetes-version", "\"1.30.5\"")],
    );
    skip.assert_class("forbidden", "kubernetes-version");
    skip.assert_refused();
    let down = row(
        &[("kubernetes-version", "\"1.29.10\"")],
        &[("kubernetes-version", "\"1.29.3\"")],
    );
    down.assert_class("forbidden", "kubernetes-version");
    down.assert_reason_mentions("downgrade");
}

#[test]
fn cs_offering_change_on_kvm_stops_the_whole_cluster() {
    let row = row(&[], &[("service-offering", "\"Large Instance\"")]);
    row.assert_class("pool-recreate", "service-offering");
    let ops = operations(row.change()).join("\n").to_lowercase();
    let (stop, start) = (ops.find("stop"), ops.rfind("start"));
    assert!(stop.is_some() && start > stop, "stop, scale, start: {ops}");
    let cluster = row.apply_in_place();
    assert_eq!(text(&cluster, "serviceofferingname"), "Large Instance");
    assert_eq!(text(&cluster, "state"), "Running");
}

#[test]
fn cs_offering_up_on_xenserver_scales_in_place() {
    let project = CsProject::new().with_env("SKYPLAN_SIM_CLOUDSTACK_HYPERVISOR", "XenServer");
    let row = row_in(project, &[], &[("service-offering", "\"Large Instance\"")]);
    row.assert_class("minimal", "service-offering");
    let cluster = row.apply_in_place();
    assert_eq!(text(&cluster, "serviceofferingname"), "Large Instance");
}

#[test]
fn cs_offering_down_while_running_is_forbidden() {
    let row = row(&[], &[("service-offering", "\"Small Instance\"")]);
    row.assert_class("forbidden", "service-offering");
    row.assert_refused();
}

#[test]
fn cs_offering_down_while_stopped_is_minimal() {
    let row = row(
        &[("state", "\"stopped\"")],
        &[
            ("state", "\"stopped\""),
            ("service-offering", "\"Small Instance\""),
        ],
    );
    row.assert_class("minimal", "service-offering");
    let cluster = row.apply_in_place();
    assert_eq!(text(&cluster, "serviceofferingname"), "Small Instance");
    assert_eq!(text(&cluster, "state"), "Stopped");
}

#[test]
fn cs_worker_scale_down_with_an_offering_change_is_split_offering_first() {
    let project = CsProject::new().with_env("SKYPLAN_SIM_CLOUDSTACK_HYPERVISOR", "XenServer");
    let row = row_in(
        project,
        &[("workers", "3")],
        &[("workers", "2"), ("service-offering", "\"Large Instance\"")],
    );
    row.assert_class("minimal", "workers");
    let ops = operations(row.change());
    assert_eq!(ops.len(), 2, "two calls: {ops:?}");
    assert!(
        ops[0].to_lowercase().contains("offering"),
        "offering first: {ops:?}"
    );
    let cluster = row.apply_in_place();
    assert_eq!(text(&cluster, "size"), "2");
    assert_eq!(text(&cluster, "serviceofferingname"), "Large Instance");
    assert_eq!(text(&cluster, "state"), "Running", "not left in Alert");
}

#[test]
fn cs_control_nodes_etcd_nodes_and_keypair_need_a_new_cluster() {
    let row = row(
        &[],
        &[
            ("control-nodes", "3"),
            ("etcd-nodes", "1"),
            ("keypair", "\"ops\""),
        ],
    );
    row.assert_class("forbidden", "control-nodes");
    for path in ["etcd-nodes", "keypair"] {
        assert!(
            paths(row.change()).iter().any(|p| p.contains(path)),
            "{path}"
        );
    }
    row.assert_refused();
    let cluster = row.project.account().cluster("lab").clone();
    assert_eq!(text(&cluster, "controlnodes"), "1", "nothing was changed");
}

#[test]
fn cs_stopping_and_starting_stop_the_whole_cluster() {
    let stop = row(&[], &[("state", "\"stopped\"")]);
    stop.assert_class("pool-recreate", "state");
    assert_eq!(text(&stop.apply_in_place(), "state"), "Stopped");
    stop.project.config(&cluster(&[]));
    let plan = stop.project.plan(&[]);
    assert_eq!(change(&plan, "cluster.lab")["impact"], "pool-recreate");
    stop.project.apply_converges();
    assert_eq!(
        text(stop.project.account().cluster("lab"), "state"),
        "Running"
    );
}

#[test]
fn cs_a_removed_cluster_is_deleted_only_when_named() {
    let project = CsProject::new();
    project.config(&cluster(&[]));
    project.apply_converges();
    project.config("");
    let plan = project.plan(&[]);
    assert_eq!(change(&plan, "cluster.lab")["impact"], "forbidden");
    assert_eq!(project.apply(&[]).code, 1);
    assert_eq!(project.account().clusters.len(), 1);
    let out = project.apply(&["--allow-delete", "cluster.lab"]);
    assert_eq!(out.code, 0, "{out:?}");
    let account = project.account();
    assert!(account.clusters.is_empty(), "{:#?}", account.clusters);
    assert!(
        !account
            .vms
            .iter()
            .any(|vm| text(vm, "name").starts_with("lab-")),
        "its VMs are gone"
    );
}

#[test]
fn cs_impossible_clusters_are_plan_errors_naming_the_limit() {
    let project = CsProject::new();
    for (overrides, expected) in [
        (&[("zone", "\"zz9\"")][..], "zones: zone1"),
        (
            &[("service-offering", "\"Tiny Instance\"")][..],
            "at least 2 vCPU and 2048 MB",
        ),
        (&[("workers", "10")][..], "maximum cluster size 10"),
        (
            &[("kubernetes-version", "\"1.31.1\"")][..],
            "1.31.1 is Disabled",
        ),
    ] {
        project.config(&cluster(overrides));
        let out = project.run(&["plan"]);
        // miette wraps long lines behind `│`: read the words only.
        let said = out
            .stderr
            .split_whitespace()
            .filter(|w| *w != "│")
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(out.code, 1, "{overrides:?}: {out:?}");
        assert!(said.contains(expected), "{overrides:?}: {said}");
        assert!(project.account().clusters.is_empty(), "nothing was created");
    }
}

#[test]
fn cs_kubeconfig_is_written_to_a_private_file_never_printed() {
    let project = CsProject::new();
    project.config(&cluster(&[]));
    project.apply_converges();
    let path = project.project.path().join("lab.kubeconfig");
    let out = project.run(&["kubeconfig", "lab", "-o", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    let written = std::fs::read_to_string(&path).expect("kubeconfig file");
    assert!(
        written.contains("apiVersion") || written.contains("clusters"),
        "{written}"
    );
    assert!(!out.stdout.contains(written.trim()), "not printed");
    assert!(
        out.stderr.contains(
            "note: cluster.lab is on an embedded cloud, whose cluster API servers run only while a skyplan command does"
        ),
        "the embedded cluster's kubeconfig works only while skyplan runs, and the user is told: {out:?}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}
