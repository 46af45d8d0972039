//! Plans you can trust, part two: apply holds the cloud to the plan. After a change settles,
//! the UUIDs the cloud shows are compared with the prediction; a cloud that recreates a pool
//! on a PATCH it should apply in place (the simulator's `recreate-on-patch=pool` fault) makes
//! apply report the difference, record it, and exit non-zero once it has finished.

use crate::support::{run, Output, Project};

const CONFIG: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
    members = [\"10.0.0.11\", \"10.0.0.12\"]\n{extra}\n\
    [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

fn config(project: &Project, extra: &str) {
    project.config(&CONFIG.replace("{extra}", extra));
}

/// `apply --auto-approve` in a cloud with the given faults.
fn apply(project: &Project, faults: &str, extra: &[&str]) -> Output {
    let mut args = vec!["apply", "--auto-approve"];
    args.extend_from_slice(extra);
    run(project.command(&args).env("SKYPLAN_SIM_FAULTS", faults))
}

/// A load balancer applied in a well-behaved cloud, whose next change (allowed CIDRs) is a
/// minimal one: a PATCH of the listener.
fn applied_then_changed() -> Project {
    let project = Project::new();
    config(&project, "");
    let out = apply(&project, "none", &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("Verified against the plan:\n  load-balancer.web: as predicted"),
        "a create is verified too: {out:?}"
    );
    config(&project, "allowed-cidrs = [\"10.1.0.0/16\"]");
    project
}

#[test]
fn an_in_place_change_the_cloud_applies_in_place_is_as_predicted() {
    let project = applied_then_changed();
    let out = apply(&project, "none", &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("load-balancer.web: as predicted"),
        "{out:?}"
    );
    let shown = project.run(&["show"]);
    assert!(
        shown
            .stdout
            .starts_with("load-balancer.web\n\nMeasured operation durations"),
        "no mismatch recorded: {shown:?}"
    );
    assert!(
        shown
            .stdout
            .contains("  cloudscale/update-listener: typically "),
        "{shown:?}"
    );
}

#[test]
fn a_pool_recreated_on_a_patch_is_reported_recorded_and_fails_the_apply() {
    let project = applied_then_changed();
    let pool_before = project.world().uuid("pools", "tcp/http");
    let out = apply(&project, "recreate-on-patch=pool", &[]);
    assert_eq!(out.code, 1, "{out:?}");
    let difference = "load-balancer.web: predicted minimal, but pool tcp/http was recreated";
    assert!(out.stdout.contains("Apply complete: 1 change,"), "{out:?}");
    assert!(out.stdout.contains(difference), "{out:?}");
    assert!(
        out.stderr.contains("the cloud did more than the plan said"),
        "{out:?}"
    );
    assert_ne!(
        project.world().uuid("pools", "tcp/http"),
        pool_before,
        "the simulator did recreate it"
    );
    let listener = &project.world().all("listeners")[0];
    assert_eq!(
        listener["allowed_cidrs"],
        serde_json::json!(["10.1.0.0/16"]),
        "the change itself was made: apply finished"
    );
    let shown = project.run(&["show"]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert!(shown.stdout.contains("(under-predicted)"), "{shown:?}");
    assert!(shown.stdout.contains(difference), "{shown:?}");
    let state = project.run(&["show", "--json"]).json();
    let recorded = &state["mismatches"][0];
    assert_eq!(recorded["address"], "load-balancer.web");
    assert_eq!(recorded["predicted"], "minimal");
    assert_eq!(recorded["observed"], "pool-recreate");
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "the cloud matches the config: {out:?}");
}

#[test]
fn apply_json_carries_the_verification() {
    let project = applied_then_changed();
    let out = apply(&project, "recreate-on-patch=pool", &["--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = out.json();
    let verified = &report["verification"][0];
    assert_eq!(verified["address"], "load-balancer.web");
    assert_eq!(verified["as_predicted"], false);
    assert_eq!(verified["under_predicted"], true);
    assert_eq!(verified["predicted"], "minimal");
    assert_eq!(verified["observed"], "pool-recreate");
    assert_eq!(
        verified["differences"],
        serde_json::json!(["pool tcp/http was recreated"])
    );
    assert_eq!(report["applied"], serde_json::json!(["load-balancer.web"]));
    assert_eq!(report["plan"]["impact"], "minimal");
}

/// CloudStack's direct-mode load balancers are verified too: the rules on the IP under the
/// IDs apply kept and created.
#[test]
fn a_cloudstack_load_balancer_is_verified_by_its_rule_ids() {
    let project = crate::cloudstack::support::CsProject::new();
    let lb = |port: u16| {
        format!(
            "[load-balancer.web]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\nmembers = [\"web-1\", \"web-2\"]\n\n\
             [[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n\n\
             [[load-balancer.web.ports]]\nport = {port}\nnode-port = 30443\n"
        )
    };
    project.config(&lb(443));
    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("Verified against the plan:\n  load-balancer.web: as predicted"),
        "{out:?}"
    );
    project.config(&lb(8443));
    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("  load-balancer.web: as predicted"),
        "a public port moved: a new rule, as the plan said: {out:?}"
    );
}

/// A CKS cluster is held to its ID, its run state and its worker count after apply.
#[test]
fn a_cloudstack_cluster_is_verified_by_id_state_and_size() {
    let project = crate::cloudstack::support::CsProject::new();
    let cluster = |workers: u32| {
        format!(
            "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\nkubernetes-version = \"1.29.3\"\n\
             workers = {workers}\nservice-offering = \"Medium Instance\"\nnetwork = \"k8s-net\"\n"
        )
    };
    for workers in [2, 3] {
        project.config(&cluster(workers));
        let out = project.apply(&[]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(
            out.stdout
                .contains("Verified against the plan:\n  cluster.lab: as predicted"),
            "{out:?}"
        );
    }
}
