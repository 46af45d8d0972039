//! `plan --out FILE` then `apply FILE`: exactly that plan, or nothing.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::Project;

fn config(algorithm: &str) -> String {
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\nalgorithm = \"{algorithm}\"\n\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n"
    )
}

/// A project with `web` applied, and a plan to change its algorithm saved as plan.json.
fn planned() -> Project {
    let project = Project::new();
    project.config(&config("round_robin"));
    project.apply_ok();
    project.config(&config("source_ip"));
    let file = project.path().join("plan.json");
    let out = project.run(&["plan", "--out", file.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    project
}

fn apply_saved(project: &Project) -> crate::support::Output {
    let file = project.path().join("plan.json");
    project.run(&["apply", file.to_str().unwrap()])
}

fn algorithm(project: &Project) -> Value {
    project.world().all("pools")[0]["algorithm"].clone()
}

fn assert_refused(project: &Project, why: &str) {
    let out = apply_saved(project);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains(why), "expected `{why}`: {out:?}");
    assert_eq!(algorithm(project), "round_robin", "nothing was applied");
}

#[test]
fn a_saved_plan_is_applied_without_asking() {
    let project = planned();
    let shown = project.run(&[
        "show",
        project.path().join("plan.json").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(shown.json()["changes"][0]["impact"], "pool-recreate");
    let out = apply_saved(&project);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(algorithm(&project), "source_ip");
}

#[test]
fn a_stale_plan_is_refused() {
    let project = planned();
    project.config(&config("least_connections"));
    assert_refused(&project, "plan again");
}

#[test]
fn a_plan_for_an_older_serial_is_refused() {
    let project = planned();
    project.config(&config("round_robin"));
    project.write(
        "skyplan.toml",
        &config("round_robin").replace(
            "members = [\"10.0.0.11\"]",
            "members = [\"10.0.0.11\", \"10.0.0.12\"]",
        ),
    );
    project.apply_ok();
    assert_refused(&project, "serial");
}

#[test]
fn a_plan_for_another_state_is_refused() {
    let project = planned();
    let other = Project::new();
    other.config(&config("round_robin"));
    other.apply_ok();
    other.config(&config("source_ip"));
    std::fs::copy(
        project.path().join("plan.json"),
        other.path().join("plan.json"),
    )
    .unwrap();
    assert_refused(&other, "another state");
}

fn edit_plan(project: &Project, edit: impl FnOnce(&mut Value), reseal: bool) {
    let path = project.path().join("plan.json");
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut file);
    if reseal {
        // The documented checksum: SHA-256 of the canonical JSON with `checksum` empty.
        file["checksum"] = Value::String(String::new());
        let sum = hex::encode(Sha256::digest(serde_json::to_vec(&file).unwrap()));
        file["checksum"] = Value::String(sum);
    }
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

#[test]
fn a_tampered_plan_is_refused() {
    let project = planned();
    edit_plan(
        &project,
        |f| {
            f["plan"]["changes"][0]["operations"]
                .as_array_mut()
                .unwrap()
                .clear()
        },
        false,
    );
    assert_refused(&project, "checksum");
}

#[test]
fn a_plan_of_another_skyplan_or_format_is_refused() {
    let project = planned();
    edit_plan(&project, |f| f["skyplan_version"] = "0.0.1".into(), true);
    assert_refused(&project, "skyplan 0.0.1");
    let project = planned();
    edit_plan(&project, |f| f["format_version"] = 99.into(), true);
    assert_refused(&project, "format version 99");
}
