//! A rollout against a served cloudscale simulator: ten load balancers, each with a pool
//! recreation, `max-disrupted = 2`. The simulator's request log shows no more than two
//! changing at once; a load balancer whose members stay down (the `unhealthy-after-change`
//! fault) stops the rollout after its wave with exit 5, and a later apply, the fault gone,
//! does the rest.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::support::{run, Output, Project, SimServer, SIM_TOKEN};

const LOAD_BALANCERS: usize = 10;
const SETTLE_MS: u64 = 20;

fn config(endpoint: &str, algorithm: &str) -> String {
    let mut text = format!(
        "[provider.cloudscale]\nendpoint = \"{endpoint}\"\n\n\
         [rollout]\nmax-disrupted = 2\nhealth-timeout = \"1s\"\n\n"
    );
    for i in 1..=LOAD_BALANCERS {
        text.push_str(&format!(
            "[load-balancer.lb{i:02}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
             members = [\"10.0.0.1{i:02}\"]\nalgorithm = \"{algorithm}\"\n\n\
             [[load-balancer.lb{i:02}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n"
        ));
    }
    text
}

fn skyplan(project: &Project, args: &[&str]) -> Output {
    run(project.command(args).env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
}

/// The names of the load balancers a plan still changes.
fn still_to_change(project: &Project) -> Vec<String> {
    let out = skyplan(project, &["plan", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let plan = out.json();
    let changes = plan["changes"].as_array().expect("changes");
    (changes.iter())
        .filter(|c| c["action"] != "no-op")
        .map(|c| c["address"].as_str().unwrap().to_string())
        .collect()
}

/// Each load balancer's UUIDs (its own, its pools', old and new) from the world as listed.
fn uuids_by_load_balancer(sim: &SimServer, into: &mut BTreeMap<String, BTreeSet<String>>) {
    let names: BTreeMap<String, String> = (sim.list("/load-balancers").iter())
        .map(|lb| (s(&lb["uuid"]), s(&lb["name"])))
        .collect();
    for (uuid, name) in &names {
        into.entry(name.clone()).or_default().insert(uuid.clone());
    }
    for pool in sim.list("/load-balancers/pools") {
        let name = &names[&s(&pool["load_balancer"]["uuid"])];
        into.entry(name.clone())
            .or_default()
            .insert(s(&pool["uuid"]));
    }
}

fn s(value: &Value) -> String {
    value.as_str().expect("a string").to_string()
}

/// The most load balancers that had a request in flight for them at one time, from the first
/// write on (before it, refresh reads every pool's members at once): each load balancer busy
/// from the first to the last request naming one of its UUIDs.
fn most_in_flight(log: &[Value], uuids: &BTreeMap<String, BTreeSet<String>>) -> usize {
    let first_write = (log.iter())
        .filter(|r| r["method"] != "GET")
        .map(|r| r["started_ms"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    let mut busy: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for request in log {
        let (start, end) = (
            request["started_ms"].as_f64().unwrap(),
            request["ended_ms"].as_f64().unwrap(),
        );
        if start < first_write {
            continue;
        }
        let path = request["path"].as_str().unwrap();
        for (name, ids) in uuids {
            if ids.iter().any(|id| path.contains(id.as_str())) {
                let span = busy.entry(name).or_insert((start, end));
                *span = (span.0.min(start), span.1.max(end));
            }
        }
    }
    let spans: Vec<(f64, f64)> = busy.into_values().collect();
    (spans.iter())
        .map(|(start, _)| {
            spans
                .iter()
                .filter(|(s, e)| s <= start && start <= e)
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn ten_pool_recreations_two_at_a_time_stop_at_an_unhealthy_one_and_finish_later() {
    let project = Project::new();
    let world = project.path().join("world.json");
    let sim = SimServer::start_settling(&world, SETTLE_MS);
    project.config(&config(&sim.base_url, "round_robin"));
    let out = skyplan(&project, &["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    sim.terminate();

    // Every load balancer's algorithm changed: a pool recreation each; the third one's new
    // pool's members stay down.
    let sim = SimServer::start_with(&world, SETTLE_MS, "unhealthy-after-change=lb03");
    project.config(&config(&sim.base_url, "source_ip"));
    let mut uuids = BTreeMap::new();
    uuids_by_load_balancer(&sim, &mut uuids);
    sim.reset_requests();
    let out = skyplan(&project, &["apply", "--auto-approve"]);
    assert_eq!(out.code, 5, "stopped by a health gate: {out:?}");
    assert!(
        out.stderr
            .contains("rollout stopped: load-balancer.lb03 was not healthy in time: member"),
        "{out:?}"
    );
    assert!(out.stderr.contains("monitor_status down"), "{out:?}");
    for i in 5..=LOAD_BALANCERS {
        let line = format!("not started: load-balancer.lb{i:02}: the rollout stopped before it");
        assert!(out.stderr.contains(&line), "{line} in {out:?}");
    }
    uuids_by_load_balancer(&sim, &mut uuids);
    let requests = sim.requests();
    let log = requests["log"].as_array().expect("log");
    assert_eq!(most_in_flight(log, &uuids), 2, "{requests:#}");
    sim.terminate();

    // Waves 1 and 2 (lb01-lb04) were applied, lb03 among them though unhealthy; the rest
    // were not touched. With the fault gone, apply finishes them.
    let later: Vec<String> = (5..=LOAD_BALANCERS)
        .map(|i| format!("load-balancer.lb{i:02}"))
        .collect();
    let sim = SimServer::start_settling(&world, SETTLE_MS);
    project.config(&config(&sim.base_url, "source_ip"));
    assert_eq!(still_to_change(&project), later);
    sim.reset_requests();
    let out = skyplan(&project, &["apply", "--auto-approve", "-v"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("wave 3 of 3: load-balancer.lb09, load-balancer.lb10"),
        "{out:?}"
    );
    uuids_by_load_balancer(&sim, &mut uuids);
    let requests = sim.requests();
    let log = requests["log"].as_array().expect("log");
    assert_eq!(most_in_flight(log, &uuids), 2, "{requests:#}");
    assert_eq!(still_to_change(&project), Vec::<String>::new());
}

#[test]
fn in_flight_counts_load_balancers_whose_requests_overlap_from_the_first_write_on() {
    let request = |method: &str, path: &str, start: f64, end: f64| serde_json::json!({"method": method, "path": path, "started_ms": start, "ended_ms": end});
    let log = [
        // Refresh: every pool read at once, before any write; not counted.
        request("GET", "/v1/load-balancers/pools/uuid-pa/members", 0.0, 5.0),
        request("GET", "/v1/load-balancers/pools/uuid-pb/members", 0.0, 5.0),
        request("GET", "/v1/load-balancers/pools/uuid-pc/members", 0.0, 5.0),
        request("DELETE", "/v1/load-balancers/pools/uuid-pa", 10.0, 11.0),
        request("DELETE", "/v1/load-balancers/pools/uuid-pb", 10.5, 11.0),
        request("GET", "/v1/load-balancers/uuid-a", 12.0, 20.0),
        request("GET", "/v1/load-balancers/uuid-b", 12.0, 21.0),
        request("DELETE", "/v1/load-balancers/pools/uuid-pc", 30.0, 31.0),
    ];
    let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
    let uuids = BTreeMap::from([
        ("a".to_string(), ids(&["uuid-a", "uuid-pa"])),
        ("b".to_string(), ids(&["uuid-b", "uuid-pb"])),
        ("c".to_string(), ids(&["uuid-c", "uuid-pc"])),
    ]);
    assert_eq!(most_in_flight(&log, &uuids), 2);
    let mut overlapping = log.to_vec();
    overlapping.push(request("GET", "/v1/load-balancers/uuid-c", 15.0, 16.0));
    assert_eq!(most_in_flight(&overlapping, &uuids), 3);
}

/// Three load balancers in the embedded cloud, one at a time; `extra` set on each (after
/// they were applied without it).
fn three_changed_one_at_a_time(extra: &str) -> Project {
    let project = Project::new();
    let config = |extra: &str| {
        let mut text = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
             [rollout]\nmax-disrupted = 1\nhealth-timeout = \"1s\"\n\n"
            .to_string();
        for i in 1..=3 {
            text.push_str(&format!(
                "[load-balancer.lb{i:02}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                 members = [\"10.0.0.11\"]\n{extra}\n\
                 [[load-balancer.lb{i:02}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n"
            ));
        }
        text
    };
    project.config(&config(""));
    project.apply_ok();
    project.config(&config(extra));
    project
}

fn apply_with_faults(project: &Project, faults: &str, extra: &[&str]) -> Output {
    let mut args = vec!["apply", "--auto-approve"];
    args.extend_from_slice(extra);
    run(project.command(&args).env("SKYPLAN_SIM_FAULTS", faults))
}

#[test]
fn a_change_that_does_more_than_planned_stops_the_rollout_as_json_reports() {
    // Allowed CIDRs: a minimal change, a PATCH of the listener, which this cloud answers by
    // recreating the pool.
    let project = three_changed_one_at_a_time("allowed-cidrs = [\"10.1.0.0/16\"]");
    let out = apply_with_faults(&project, "recreate-on-patch=pool", &["--json"]);
    assert_eq!(out.code, 5, "{out:?}");
    let report = out.json();
    let stopped = report["rollout_stopped"]
        .as_array()
        .expect("rollout_stopped");
    assert_eq!(stopped.len(), 1, "{report:#}");
    assert_eq!(stopped[0]["address"], "load-balancer.lb01");
    assert_eq!(stopped[0]["cause"], "under-predicted");
    assert!(
        stopped[0]["summary"]
            .as_str()
            .unwrap()
            .contains("pool tcp/http was recreated"),
        "{report:#}"
    );
    assert_eq!(
        report["not_started"],
        serde_json::json!(["load-balancer.lb02", "load-balancer.lb03"])
    );
    assert_eq!(report["applied"], serde_json::json!(["load-balancer.lb01"]));
}

#[test]
fn with_the_gate_off_an_unhealthy_load_balancer_does_not_stop_the_rollout() {
    let project = three_changed_one_at_a_time("algorithm = \"source_ip\"");
    let fault = "unhealthy-after-change=lb02";
    let out = apply_with_faults(&project, fault, &["--json"]);
    assert_eq!(out.code, 5, "{out:?}");
    let report = out.json();
    assert_eq!(
        report["rollout_stopped"][0]["cause"], "unhealthy",
        "{report:#}"
    );
    let problems = report["rollout_stopped"][0]["problems"].as_array().unwrap();
    assert!(
        problems.iter().any(|p| p
            .as_str()
            .unwrap()
            .ends_with("of pool tcp/http: monitor_status down")),
        "{report:#}"
    );
    assert_eq!(
        report["not_started"],
        serde_json::json!(["load-balancer.lb03"])
    );

    // The fault still on, the gate off: the last one is applied, nothing waits on health.
    let out = apply_with_faults(&project, fault, &["--no-health-gate"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Apply complete: 1 change,"), "{out:?}");
}
