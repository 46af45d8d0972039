//! Members' `monitor_status` over HTTP: changing, then down until the monitor's checks pass,
//! then up; down while their server is stopped; kept down by `unhealthy-after-change`.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{uuid, Harness};
use crate::cloudscale::{Faults, DEFAULT_NETWORK_UUID, DEFAULT_SUBNET_UUID};

/// A load balancer named `name` with a pool and a TCP monitor; returns the pool.
async fn monitored_pool(h: &Harness, name: &str) -> Value {
    let lb = h.create_lb(name, json!({})).await;
    let pool = h.create_pool(&lb).await;
    let monitor = json!({"pool": pool["uuid"], "type": "tcp"});
    let (status, body) = h.post("/load-balancers/health-monitors", monitor).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    pool
}

async fn add_member(h: &Harness, pool: &Value, address: &str) -> Value {
    let body = json!({"name": address, "protocol_port": 30080, "address": address, "subnet": DEFAULT_SUBNET_UUID});
    let path = format!("/load-balancers/pools/{}/members", uuid(pool));
    let (status, member) = h.post(&path, body).await;
    assert_eq!(status, StatusCode::CREATED, "{member}");
    member
}

#[tokio::test]
async fn a_new_member_is_changing_then_up_once_the_checks_pass() {
    let h = Harness::start().await;
    let pool = monitored_pool(&h, "web").await;
    let member = add_member(&h, &pool, "10.0.0.50").await;
    assert_eq!(member["monitor_status"], "changing");
    let seen = h.wait_members(uuid(&pool), "up").await;
    assert_eq!(seen[0], ["changing"], "{seen:?}");
    let unexpected = seen
        .iter()
        .flatten()
        .filter(|s| !["changing", "down", "up"].contains(&s.as_str()));
    assert_eq!(unexpected.count(), 0, "{seen:?}");
}

#[tokio::test]
async fn a_pool_without_monitor_reports_no_monitor() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    let pool = h.create_pool(&lb).await;
    let member = add_member(&h, &pool, "10.0.0.50").await;
    assert_eq!(member["monitor_status"], "no_monitor");
    h.wait_running(&lb).await;
    assert_eq!(h.member_statuses(uuid(&pool)).await, ["no_monitor"]);
}

#[tokio::test]
async fn a_member_on_a_stopped_server_is_down_until_it_runs_again() {
    let h = Harness::start().await;
    let body = json!({"name": "node-1", "flavor": "flex-4-2", "image": "debian-12",
        "interfaces": [{"network": DEFAULT_NETWORK_UUID}]});
    let (status, server) = h.post("/servers", body).await;
    assert_eq!(status, StatusCode::CREATED, "{server}");
    let address = server["interfaces"][0]["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    let pool = monitored_pool(&h, "web").await;
    add_member(&h, &pool, &address).await;
    add_member(&h, &pool, "10.0.0.99").await; // no server of this account: reachable
    h.wait_members(uuid(&pool), "up").await;
    let server_path = format!("/servers/{}", uuid(&server));
    assert_eq!(
        h.post(&format!("{server_path}/stop"), json!({})).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(h.member_statuses(uuid(&pool)).await, ["down", "up"]);
    h.post(&format!("{server_path}/start"), json!({})).await;
    assert_eq!(h.member_statuses(uuid(&pool)).await, ["up", "up"]);
}

#[tokio::test]
async fn unhealthy_after_change_keeps_the_named_load_balancers_members_down_until_restart() {
    let faults: Faults = "unhealthy-after-change=web".parse().unwrap();
    let h = Harness::start_with_faults(faults).await;
    let web = monitored_pool(&h, "web").await;
    let api = monitored_pool(&h, "api").await;
    for pool in [&web, &api] {
        add_member(&h, pool, "10.0.0.50").await;
        add_member(&h, pool, "10.0.0.51").await;
    }
    h.wait_members(uuid(&api), "up").await;
    // Long past the time the checks take: the fault keeps them down.
    tokio::time::sleep(super::SETTLE * 3).await;
    assert_eq!(h.member_statuses(uuid(&web)).await, ["down", "down"]);
    // Started again without the fault, the members report by reachability.
    let h = h.restart().await;
    assert_eq!(h.member_statuses(uuid(&web)).await, ["up", "up"]);
    assert_eq!(h.member_statuses(uuid(&api)).await, ["up", "up"]);
}

#[tokio::test]
async fn unhealthy_after_change_follows_a_recreated_pool_and_a_certain_or_null_share() {
    let spec = "recreate-on-patch=pool,unhealthy-after-change=web";
    let h = Harness::start_with_faults(spec.parse().unwrap()).await;
    let pool = monitored_pool(&h, "web").await;
    add_member(&h, &pool, "10.0.0.50").await;
    let (_, monitors) = h.get("/load-balancers/health-monitors").await;
    let monitor = format!("/load-balancers/health-monitors/{}", uuid(&monitors[0]));
    h.wait_running(&pool["load_balancer"]).await;
    assert_eq!(
        h.patch(&monitor, json!({"delay_s": 3})).await.0,
        StatusCode::NO_CONTENT
    );
    let (_, pools) = h.get("/load-balancers/pools").await;
    let recreated = uuid(&pools[0]);
    assert_ne!(recreated, uuid(&pool));
    h.wait_running(&pool["load_balancer"]).await;
    tokio::time::sleep(super::SETTLE * 3).await;
    assert_eq!(h.member_statuses(recreated).await, ["down"]);

    for (share, expected) in [("1", "down"), ("0", "up")] {
        let spec = format!("unhealthy-after-change={share}");
        let h = Harness::start_with_faults(spec.parse().unwrap()).await;
        let pool = monitored_pool(&h, "any").await;
        add_member(&h, &pool, "10.0.0.50").await;
        h.wait_running(&pool["load_balancer"]).await;
        tokio::time::sleep(super::SETTLE * 3).await;
        assert_eq!(h.member_statuses(uuid(&pool)).await, [expected], "{share}");
    }
}
