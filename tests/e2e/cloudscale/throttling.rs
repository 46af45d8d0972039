//! A throttled cloud: with a good share of API calls answered `429 Too Many Requests`
//! (`Retry-After: 1`), a plan slows down instead of failing, and plans exactly what it plans
//! against an API that never throttles.

use serde_json::Value;

use crate::support::{run, Project, SimServer, SIM_TOKEN};

const THROTTLED: &str = "429=0.25,seed=5";

fn config(endpoint: &str, members: &str) -> String {
    let mut config = format!(
        "[provider.cloudscale]\nendpoint = \"{endpoint}\"\nmax-concurrent-requests = 4\n\n"
    );
    for i in 0..6 {
        config += &format!(
            "[load-balancer.lb{i}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [{members}]\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"https\"\nport = 443\nnode-port = 30443\n\n"
        );
    }
    config
}

#[test]
fn a_plan_under_429s_succeeds_with_the_same_result() {
    let project = Project::new();
    let world = project.path().join("world.json");
    let skyplan = |args: &[&str]| {
        run(project
            .command(args)
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
            .env("SKYPLAN_LOG", "skyplan=debug"))
    };
    let plan = || {
        let out = skyplan(&["plan", "--json"]);
        assert_eq!(out.code, 0, "{out:?}");
        (out.json(), out.stderr)
    };

    let sim = SimServer::start_settling(&world, 0);
    project.config(&config(&sim.base_url, "\"10.0.0.11\", \"10.0.0.12\""));
    let out = skyplan(&["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    // A member more for every load balancer: a plan with changes to compare.
    project.config(&config(
        &sim.base_url,
        "\"10.0.0.11\", \"10.0.0.12\", \"10.0.0.13\"",
    ));
    let (calm, _) = plan();
    sim.terminate();

    let sim = SimServer::start_with(&world, 0, THROTTLED);
    project.config(&config(
        &sim.base_url,
        "\"10.0.0.11\", \"10.0.0.12\", \"10.0.0.13\"",
    ));
    let (throttled, log) = plan();
    let requests = sim.requests();
    let refused = requests["faults"]["429"].as_u64().unwrap();
    assert!(refused > 0, "429s were injected: {requests:#}");
    assert!(
        log.contains("retrying"),
        "the client waited and retried: {log}"
    );
    assert_eq!(
        without_endpoint(throttled),
        without_endpoint(calm),
        "the same plan with and without 429s"
    );
}

/// The plan with the simulator's URL (a new port per server) taken out of every string.
fn without_endpoint(plan: Value) -> Value {
    let text = plan.to_string();
    let text = regex_free_replace(&text, "http://127.0.0.1:", "/v1");
    serde_json::from_str(&text).expect("plan JSON")
}

/// Replaces every `start…end` span (the port in between) by `<endpoint>`.
fn regex_free_replace(text: &str, start: &str, end: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(start) {
        out.push_str(&rest[..at]);
        let after = &rest[at + start.len()..];
        let stop = after.find(end).map_or(after.len(), |i| i + end.len());
        out.push_str("<endpoint>");
        rest = &after[stop..];
    }
    out.push_str(rest);
    out
}
