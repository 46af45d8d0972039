//! Apply the rest: a refused change — forbidden and not named, excluded with `--exclude`, or
//! outside the window — holds back itself and what must follow it, apply does everything else
//! and exits 4, listing what it held back and why. The plan shows the same beforehand.

use std::path::Path;

use serde_json::Value;

use crate::support::{quickstart, run, Output, Project};

const SATURDAY_0230: &str = "2026-11-28T02:30:00+01:00";

fn in_quickstart(project: &Project, example: &Path, args: &[&str]) -> Output {
    run(&mut project.command_with_config(example, args))
}

/// The addresses the plan still changes.
fn changed(plan: &Value) -> Vec<String> {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] != "no-op")
        .map(|c| c["address"].as_str().unwrap().to_string())
        .collect()
}

fn flavor_of(project: &Project, name: &str) -> Value {
    project.world().named("load_balancers", name).unwrap()["flavor"].clone()
}

/// The closing demonstration of issue 21: inside its window, the quickstart is applied but for
/// its forbidden flavor change; the next plan has only that change left.
#[test]
fn the_quickstart_is_applied_but_for_its_forbidden_change() {
    let (project, example) = quickstart();
    let apply = ["apply", "--auto-approve", "--now", SATURDAY_0230];
    let out = in_quickstart(&project, &example, &apply);
    assert_eq!(out.code, 4, "applied, one change held back: {out:?}");
    assert!(
        out.stderr.contains(
            "held back: load-balancer.shop (forbidden): forbidden: flavor; name it with --replace load-balancer.shop to do it anyway"
        ),
        "{out:?}"
    );
    assert_eq!(out.stderr.matches("held back:").count(), 1, "{out:?}");
    assert_eq!(flavor_of(&project, "shop"), "lb-standard", "shop untouched");
    assert!(
        project.world().named("load_balancers", "api").is_some(),
        "the new load balancer was created"
    );
    let plan = in_quickstart(
        &project,
        &example,
        &["plan", "--json", "--now", SATURDAY_0230],
    );
    assert_eq!(plan.code, 0, "{plan:?}");
    assert_eq!(changed(&plan.json()), ["load-balancer.shop"]);
}

/// The controller-mode load balancer follows the node policy of its cluster: excluding the
/// policy holds it back as well, and nothing else.
#[test]
fn excluding_a_node_policy_holds_back_the_load_balancer_that_follows_it() {
    let (project, example) = quickstart();
    let args = [
        "plan",
        "--json",
        "--now",
        SATURDAY_0230,
        "--exclude",
        "nodes.web",
    ];
    let plan = in_quickstart(&project, &example, &args).json();
    let held: Vec<(String, String)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            let reason = c.get("held_back")?.as_str()?;
            Some((c["address"].as_str()?.to_string(), reason.to_string()))
        })
        .collect();
    let reason = |address: &str| {
        held.iter()
            .find(|(a, _)| a == address)
            .map(|(_, r)| r.as_str())
    };
    assert_eq!(held.len(), 3, "{held:?}");
    assert_eq!(reason("nodes.web"), Some("excluded with --exclude"));
    assert_eq!(
        reason("load-balancer.store"),
        Some("depends on nodes.web, held back")
    );
    assert!(reason("load-balancer.shop")
        .unwrap()
        .starts_with("forbidden: flavor"));

    let mut apply = vec!["apply", "--auto-approve"];
    apply.extend_from_slice(&args[2..]);
    let out = in_quickstart(&project, &example, &apply);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr.contains(
            "held back: load-balancer.store (pool-recreate): depends on nodes.web, held back"
        ),
        "{out:?}"
    );
    let after = in_quickstart(
        &project,
        &example,
        &["plan", "--json", "--now", SATURDAY_0230],
    );
    assert_eq!(
        changed(&after.json()),
        ["load-balancer.shop", "load-balancer.store", "nodes.web"]
    );
}

fn config(web_zone: &str, api_members: &str) -> String {
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"{web_zone}\"\nmembers = [\"10.0.0.11\"]\n\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
         [load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [{api_members}]\n\n\
         [[load-balancer.api.ports]]\nname = \"grpc\"\nport = 443\nnode-port = 30443\n"
    )
}

/// Two load balancers applied, then: web moved to another zone (forbidden), a member added to
/// api (minimal).
fn zone_and_member_changed() -> Project {
    let project = Project::new();
    project.config(&config("lpg1", "\"10.0.0.21\""));
    project.apply_ok();
    project.config(&config("rma1", "\"10.0.0.21\", \"10.0.0.22\""));
    project
}

fn api_grew(project: &Project) -> bool {
    project
        .world()
        .named("members", "10.0.0.22:30443")
        .is_some()
}

#[test]
fn apply_json_lists_what_it_held_back_and_why() {
    let project = zone_and_member_changed();
    let out = project.apply(&["--json"]);
    assert_eq!(out.code, 4, "{out:?}");
    let report = out.json();
    assert_eq!(report["applied"], serde_json::json!(["load-balancer.api"]));
    assert_eq!(
        report["held_back"],
        serde_json::json!([{
            "address": "load-balancer.web",
            "impact": "forbidden",
            "reason": "forbidden: zone; name it with --replace load-balancer.web to do it anyway",
        }])
    );
    assert!(api_grew(&project));
    assert_eq!(
        project.world().named("load_balancers", "web").unwrap()["zone"],
        "lpg1"
    );
}

#[test]
fn an_excluded_change_waits_and_is_applied_once_no_longer_excluded() {
    let project = Project::new();
    project.config(&config("lpg1", "\"10.0.0.21\""));
    project.apply_ok();
    project.config(&config("lpg1", "\"10.0.0.21\", \"10.0.0.22\""));
    let out = project.apply(&["--exclude", "load-balancer.api"]);
    assert_eq!(
        out.code, 1,
        "the only change excluded: nothing done: {out:?}"
    );
    assert!(
        out.stderr
            .contains("held back: load-balancer.api (minimal): excluded with --exclude"),
        "{out:?}"
    );
    assert!(out.stderr.contains("nothing was applied"), "{out:?}");
    assert!(!api_grew(&project));
    project.apply_ok();
    assert!(api_grew(&project));
}

#[test]
fn exclude_names_a_known_address_and_never_goes_with_target() {
    let project = zone_and_member_changed();
    let out = project.run(&["plan", "--exclude", "load-balancer.nope"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("load-balancer.nope is neither in the config nor in the state"),
        "{out:?}"
    );
    for command in ["plan", "apply"] {
        let out = project.run(&[
            command,
            "--exclude",
            "load-balancer.web",
            "--target",
            "load-balancer.api",
        ]);
        assert_eq!(out.code, 1, "a usage error: {out:?}");
        assert!(out.stderr.contains("cannot be used with"), "{out:?}");
    }
    assert!(!api_grew(&project), "nothing was applied");
}

/// A saved plan keeps its exclusions: `apply FILE` holds back the same changes.
#[test]
fn a_saved_plan_holds_back_what_it_excluded() {
    let project = zone_and_member_changed();
    // web stays where it is, api grows, and a third load balancer to be created is excluded.
    let mut text = config("lpg1", "\"10.0.0.21\", \"10.0.0.22\"");
    text.push_str(
        "\n[load-balancer.new]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.31\"]\n\n\
         [[load-balancer.new.ports]]\nport = 8080\nnode-port = 30880\n",
    );
    project.config(&text);
    let file = project.path().join("plan.json");
    let file = file.to_str().unwrap();
    let out = project.run(&["plan", "--out", file, "--exclude", "load-balancer.new"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("    ! held back: excluded with --exclude"),
        "{out:?}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(
        saved["request"]["exclude"],
        serde_json::json!(["load-balancer.new"])
    );

    let refused = project.run(&["apply", file, "--exclude", "load-balancer.api"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("a saved plan already says what to do"),
        "{refused:?}"
    );

    let out = project.run(&["apply", file]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr
            .contains("held back: load-balancer.new (none): excluded with --exclude"),
        "{out:?}"
    );
    assert!(api_grew(&project));
    assert!(project.world().named("load_balancers", "new").is_none());
}

/// Excluding a resource whose plan has nothing to do holds nothing back, and says so.
#[test]
fn excluding_a_resource_without_a_change_is_said() {
    let project = Project::new();
    project.config(&config("lpg1", "\"10.0.0.21\""));
    project.apply_ok();
    project.config(&config("lpg1", "\"10.0.0.21\", \"10.0.0.22\""));
    let out = project.run(&["plan", "--exclude", "load-balancer.web"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "note: load-balancer.web is excluded with --exclude, but its plan has no change: nothing is held back for it"
        ),
        "{out:?}"
    );
    let apply = project.run(&["apply", "--auto-approve", "--exclude", "load-balancer.web"]);
    assert_eq!(apply.code, 0, "nothing held back: {apply:?}");
    assert!(api_grew(&project), "the rest is applied");
}
