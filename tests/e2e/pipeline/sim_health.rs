//! `skyplan sim serve --provider cloudscale`: what the simulated cloud reports about its pool
//! members' health, and the request log of `/_sim/requests` — what rollout gates and their
//! tests read. Objects are made over HTTP as any client of the API would.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{http, SimServer, SIM_TOKEN};

const SETTLE_MS: u64 = 20;

fn post(sim: &SimServer, path: &str, body: Value) -> Value {
    let answer = http::request("POST", &format!("{}{path}", sim.base_url))
        .bearer(SIM_TOKEN)
        .json(&body)
        .ok()
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    serde_json::from_str(&answer).expect("JSON")
}

/// A load balancer `name` with a pool, a TCP health monitor and two members; returns the
/// pool's UUID.
fn load_balancer_with_members(sim: &SimServer, name: &str) -> String {
    let subnet = sim.list("/subnets")[0]["uuid"].clone();
    let lb = post(
        sim,
        "/load-balancers",
        json!({"name": name, "flavor": "lb-standard", "zone": "lpg1",
               "vip_addresses": [{"subnet": subnet}]}),
    );
    let pool = post(
        sim,
        "/load-balancers/pools",
        json!({"name": "tcp", "load_balancer": lb["uuid"],
               "algorithm": "round_robin", "protocol": "tcp"}),
    );
    let pool = pool["uuid"].as_str().expect("pool uuid").to_owned();
    post(
        sim,
        "/load-balancers/health-monitors",
        json!({"pool": pool, "type": "tcp", "delay_s": 2, "up_threshold": 2}),
    );
    for address in ["10.0.0.50", "10.0.0.51"] {
        let member = post(
            sim,
            &format!("/load-balancers/pools/{pool}/members"),
            json!({"name": address, "protocol_port": 30080, "address": address, "subnet": subnet}),
        );
        assert_eq!(member["monitor_status"], "changing", "{member}");
    }
    pool
}

fn statuses(sim: &SimServer, pool: &str) -> Vec<String> {
    sim.list(&format!("/load-balancers/pools/{pool}/members"))
        .iter()
        .map(|m| {
            m["monitor_status"]
                .as_str()
                .expect("monitor_status")
                .to_owned()
        })
        .collect()
}

/// Waits (at most ten seconds) until every member of `pool` is `expected`.
fn wait_for(sim: &SimServer, pool: &str, expected: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = statuses(sim, pool);
        if now.iter().all(|s| s == expected) {
            return;
        }
        assert!(Instant::now() < deadline, "never all {expected}: {now:?}");
        std::thread::sleep(Duration::from_millis(SETTLE_MS / 2));
    }
}

#[test]
fn unhealthy_after_change_keeps_one_load_balancers_members_down_while_the_fault_is_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("cloudscale.json");
    let sim = SimServer::start_with(&world, SETTLE_MS, "unhealthy-after-change=web");
    let web = load_balancer_with_members(&sim, "web");
    let api = load_balancer_with_members(&sim, "api");
    wait_for(&sim, &api, "up");
    // Well past the checks' time (settle + 2 x 2 monitor seconds of SETTLE_MS / 10).
    std::thread::sleep(Duration::from_millis(SETTLE_MS * 10));
    assert_eq!(statuses(&sim, &web), ["down", "down"]);
    sim.terminate();

    // The fault's effect is not kept in the world: without it, the members report by
    // reachability (no server of the account holds their addresses: they answer).
    let sim = SimServer::start_with(&world, SETTLE_MS, "none");
    assert_eq!(statuses(&sim, &web), ["up", "up"]);
    assert_eq!(statuses(&sim, &api), ["up", "up"]);
}

#[test]
fn the_request_log_times_every_request_since_the_simulator_started() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sim = SimServer::start_with(&dir.path().join("cloudscale.json"), SETTLE_MS, "none");
    let started = Instant::now();
    let pool = load_balancer_with_members(&sim, "web");
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let requests = sim.requests();
    let log = requests["log"].as_array().expect("log");
    assert_eq!(log.len() as u64, requests["total"].as_u64().unwrap());
    let routes: Vec<String> = log
        .iter()
        .map(|r| r["route"].as_str().unwrap().to_owned())
        .collect();
    let members = "POST /v1/load-balancers/pools/{pool}/members";
    let expected = [
        "GET /v1/subnets",
        "POST /v1/load-balancers",
        "POST /v1/load-balancers/pools",
        "POST /v1/load-balancers/health-monitors",
        members,
        members,
    ];
    assert_eq!(routes, expected);
    assert_eq!(
        log[4]["path"],
        format!("/v1/load-balancers/pools/{pool}/members")
    );
    assert!(log.iter().all(|r| r["status"].as_u64().unwrap() < 300));
    let times: Vec<(f64, f64)> = log
        .iter()
        .map(|r| {
            (
                r["started_ms"].as_f64().unwrap(),
                r["ended_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    // One client, one request at a time: each ends before the next starts, and together they
    // take no longer than the test waited for them.
    for pair in times.windows(2) {
        assert!(
            pair[0].0 <= pair[0].1 && pair[0].1 <= pair[1].0,
            "{times:?}"
        );
    }
    let (first, last) = (times[0].0, times[times.len() - 1].1);
    assert!(last - first <= elapsed_ms, "{times:?} in {elapsed_ms} ms");
    sim.reset_requests();
    assert_eq!(sim.requests()["log"], json!([]));
}
