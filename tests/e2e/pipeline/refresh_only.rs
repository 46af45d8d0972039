//! `plan --refresh-only` and `apply --refresh-only` after someone changed the cloud behind
//! skyplan's back through `skyplan sim serve`: the plan shows the drift with every change a
//! no-op, apply records it in the state with nothing but GETs, and a normal plan still proposes
//! restoring the config's values.

use serde_json::Value;

use crate::support::served::ServedCloud;
use crate::support::SIM_TOKEN;

/// web's listener opened to the world, behind skyplan's back.
fn open_web_to_the_world(cloud: &ServedCloud) {
    let listener = cloud.uuid_of("/load-balancers/listeners", "tcp/80");
    cloud.call(
        "PATCH",
        &format!("/load-balancers/listeners/{listener}"),
        Some(r#"{"allowed_cidrs": ["0.0.0.0/0"]}"#),
    );
}

fn drift_entry<'p>(plan: &'p Value, address: &str) -> &'p Value {
    (plan["drift"].as_array().unwrap().iter())
        .find(|d| d["address"] == address)
        .unwrap_or_else(|| panic!("{address} not in the drift: {plan}"))
}

#[test]
fn refresh_only_plans_no_change_and_lists_the_drift() {
    let cloud = ServedCloud::two_applied();
    open_web_to_the_world(&cloud);

    let out = cloud.skyplan(&["plan", "--refresh-only", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let plan = out.json();
    let actions: Vec<&Value> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["action"])
        .collect();
    assert_eq!(actions, ["no-op", "no-op"], "{plan}");
    assert_eq!(plan["summary"]["no_op"], 2);
    assert_eq!(plan["summary"]["update"], 0);
    let web = drift_entry(&plan, "load-balancer.web");
    assert_eq!(web["provider"], "cloudscale");
    assert_eq!(web["status"], "drifted");
    assert_eq!(web["accepted"], true);
    assert_eq!(
        web["attributes"],
        serde_json::json!([{ "path": "allowed-cidrs", "before": [], "after": ["0.0.0.0/0"] }])
    );
    assert_eq!(
        plan["drift"].as_array().unwrap().len(),
        1,
        "api is in sync: {plan}"
    );

    let text = cloud.skyplan(&["plan", "--refresh-only", "--detailed-exitcode"]);
    assert_eq!(text.code, 2, "something to record: {text:?}");
    assert!(
        text.stdout.contains("~ load-balancer.web"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("Drift: 1 drifted, 0 missing, 0 not applied, 1 in sync;"),
        "counted as `skyplan drift` counts: {}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("allowed-cidrs: expected [], actual [\"0.0.0.0/0\"]"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("load-balancer.web: recorded as the cloud has it"),
        "{}",
        text.stdout
    );
}

#[test]
fn apply_refresh_only_records_the_cloud_with_reads_alone() {
    let cloud = ServedCloud::two_applied();
    open_web_to_the_world(&cloud);
    cloud.sim.reset_requests();

    let out = cloud.skyplan(&["apply", "--refresh-only", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("Recorded in the state as the cloud has it: load-balancer.web."),
        "{}",
        out.stdout
    );
    let requests = cloud.sim.requests();
    let routes = requests["by_route"].as_object().unwrap();
    assert!(!routes.is_empty());
    for route in routes.keys() {
        assert!(route.starts_with("GET "), "only reads: {requests}");
    }

    let drift = cloud.skyplan(&["drift"]);
    assert_eq!(
        drift.code, 0,
        "the state now says what the cloud has: {drift:?}"
    );
    let state = std::fs::read_to_string(cloud.project.path().join("state/skyplan.state.json"))
        .expect("the state");
    assert!(state.contains("0.0.0.0/0"), "recorded: {state}");
    assert!(!state.contains(SIM_TOKEN), "no secret in the state");

    let plan = cloud.skyplan(&["plan", "--json", "--detailed-exitcode"]);
    assert_eq!(plan.code, 2, "the config still says otherwise: {plan:?}");
    let plan = plan.json();
    let web = (plan["changes"].as_array().unwrap().iter())
        .find(|c| c["address"] == "load-balancer.web")
        .unwrap();
    assert_eq!(web["action"], "update");
    assert_eq!(web["attributes"][0]["path"], "allowed-cidrs");
    assert_eq!(web["attributes"][0]["after"], serde_json::json!([]));
}

#[test]
fn a_resource_gone_from_the_cloud_is_said_so_and_left() {
    let cloud = ServedCloud::two_applied();
    let api = cloud.uuid_of("/load-balancers", "api");
    cloud.call("DELETE", &format!("/load-balancers/{api}"), None);

    let plan = cloud.skyplan(&["plan", "--refresh-only", "--json"]).json();
    let entry = drift_entry(&plan, "load-balancer.api");
    assert_eq!(entry["status"], "missing");
    assert_eq!(entry["accepted"], false);

    let out = cloud.skyplan(&["apply", "--refresh-only", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("load-balancer.api: left in the state"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Nothing to record"), "{}", out.stdout);
    let drift = cloud.skyplan(&["drift"]);
    assert_eq!(drift.code, 2, "still missing: {drift:?}");
}

/// `drift` and `plan --refresh-only` show the same difference, and name its place in the config
/// the same way: one spelling of a path in every message.
#[test]
fn drift_and_refresh_only_name_the_config_place_alike() {
    let cloud = ServedCloud::two_applied();
    open_web_to_the_world(&cloud);
    // Run where the config is, with no -c, as a user does: the config is `./skyplan.toml`.
    let heading = |args: &[&str]| {
        let mut command = std::process::Command::new(crate::support::binary());
        command
            .current_dir(cloud.project.path())
            .args(args)
            .env("NO_COLOR", "1")
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN);
        let out = crate::support::run(&mut command);
        (out.stdout.lines())
            .find(|line| line.starts_with("~ load-balancer.web"))
            .unwrap_or_else(|| panic!("no load-balancer.web in {out:?}"))
            .to_string()
    };
    let drift = heading(&["drift"]);
    assert!(drift.contains("skyplan.toml:"), "{drift}");
    assert_eq!(heading(&["plan", "--refresh-only"]), drift);
}
