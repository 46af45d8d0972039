//! Controller-mode rows that change which members a pool has or how they are checked: the
//! traffic policy, the node selector, listener allowed subnets (with a second private subnet
//! added to the simulated cloud), and the health monitor's numbers, type and HTTP version (see
//! `super` for the frame).

use serde_json::{json, Value};

use crate::cloudscale::controller::{config, row, shop, Row, HTTP};
use crate::support::Project;

#[test]
fn local_traffic_policy_recreates_members_and_monitor_but_keeps_the_pool() {
    let row = row(("", HTTP), ("traffic-policy = \"Local\"", HTTP));
    row.assert_class("minimal")
        .assert_predicts("delete health monitor of pool tcp/http")
        .assert_not_predicted("delete pool");
    let reasons = row.change["attributes"].to_string();
    assert!(reasons.contains("README"), "{reasons}");
    // Every member's key changes: the CCM deletes them all, pauses 5 s, then creates the new
    // ones — the plan says the port serves nothing for that time and its downtime covers it.
    assert!(
        reasons
            .contains("port 80 serves nothing for about 6 s: the CCM deletes all 3 of its members"),
        "{reasons}"
    );
    assert!(
        row.change["estimated_downtime_s"]["min"].as_u64() >= Some(5),
        "{:#}",
        row.change
    );
    let pool = row.before.uuid("pools", "tcp/http");
    let monitor = row.before.monitor_uuid();
    let members = row.before.member_uuids();
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
    assert_ne!(after.monitor_uuid(), monitor, "monitor recreated");
    let monitor = &after.all("health_monitors")[0];
    assert_eq!(monitor["type"], "http");
    assert_eq!(monitor["http"]["url_path"], "/livez");
    let recreated = after.member_uuids();
    assert!(
        recreated.iter().all(|m| !members.contains(m)),
        "members recreated"
    );
}

#[test]
fn a_node_selector_matching_fewer_nodes_removes_their_members() {
    let selector = "node-selector = \"kubernetes.io/hostname in (node-1,node-2)\"";
    let row = row(("", HTTP), (selector, HTTP));
    row.assert_class("minimal")
        .assert_predicts("delete member 10.0.0.3:30000")
        .assert_not_predicted("pool");
    let after = row.apply();
    assert_eq!(after.all("members").len(), 2);
}

/// A second private network, `backend` with subnet 10.1.0.0/24, and an interface on it for
/// node-1 and node-2 — written into the simulated cloud before anything is applied.
const BACKEND_NETWORK: &str = "5b1e0c9a-0000-4000-8000-00000000b0b0";

const BACKEND_SUBNET: &str = "5b1e0c9a-0000-4000-8000-00000000b5b5";

fn add_backend_subnet(project: &Project) {
    let path = project.world_path();
    let mut world: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let template = world["networks"][0].clone();
    let mut network = template.clone();
    network["uuid"] = json!(BACKEND_NETWORK);
    network["name"] = json!("backend");
    world["networks"].as_array_mut().unwrap().push(network);
    let mut subnet = world["subnets"][0].clone();
    subnet["uuid"] = json!(BACKEND_SUBNET);
    subnet["network"] = json!(BACKEND_NETWORK);
    subnet["cidr"] = json!("10.1.0.0/24");
    world["subnets"].as_array_mut().unwrap().push(subnet);
    for (n, server) in world["servers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        if server["name"] == "node-3" {
            continue;
        }
        let interface = json!({"network": BACKEND_NETWORK, "addresses": [
            {"address": format!("10.1.0.{}", n + 1), "subnet": BACKEND_SUBNET}]});
        server["interfaces"].as_array_mut().unwrap().push(interface);
    }
    std::fs::write(&path, serde_json::to_string_pretty(&world).unwrap()).unwrap();
}

fn member_uuids_on(world: &crate::support::World, prefix: &str) -> Vec<String> {
    let mut uuids: Vec<String> = world
        .all("members")
        .iter()
        .filter(|m| m["address"].as_str().unwrap().starts_with(prefix))
        .map(|m| m["uuid"].as_str().unwrap().to_string())
        .collect();
    uuids.sort();
    uuids
}

#[test]
fn allowed_subnets_only_filter_members_and_keep_the_pool() {
    let project = Project::new();
    project.config(&config("", HTTP));
    // A first plan starts the embedded cluster, which creates the nodes' servers.
    project.plan(&[]);
    add_backend_subnet(&project);
    project.apply_ok();
    let before = project.world();
    assert_eq!(
        before.all("members").len(),
        5,
        "three on 10.0.0.0/24, two on 10.1.0.0/24"
    );
    let allowed = format!("allowed-subnets = [\"{BACKEND_SUBNET}\"]");
    project.config(&config(&allowed, HTTP));
    let row = Row {
        change: shop(&project.plan(&[])),
        before,
        project,
    };
    row.assert_class("minimal")
        .assert_predicts("delete member 10.0.0.1:30000")
        .assert_predicts("delete member 10.0.0.3:30000")
        .assert_not_predicted("create")
        .assert_not_predicted("pool");
    let reasons = row.change["attributes"].to_string();
    assert!(
        reasons.contains("README"),
        "the README disagrees: {reasons}"
    );
    let pool = row.before.uuid("pools", "tcp/http");
    let kept = member_uuids_on(&row.before, "10.1.0.");
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
    assert_eq!(after.member_uuids(), kept, "only the backend members stay");
}

#[test]
fn health_monitor_numbers_are_minimal_and_patched_in_place() {
    let row = row(("", HTTP), ("health-monitor = { delay-s = 5 }", HTTP));
    row.assert_class("minimal").assert_not_predicted("delete");
    let monitor = row.before.monitor_uuid();
    let after = row.apply();
    assert_eq!(after.monitor_uuid(), monitor, "monitor kept");
    assert_eq!(after.all("health_monitors")[0]["delay_s"], 5);
}

#[test]
fn a_health_monitor_type_change_recreates_the_monitor_only() {
    let row = row(("", HTTP), ("health-monitor = { type = \"http\" }", HTTP));
    row.assert_class("minimal")
        .assert_predicts("delete health monitor of pool tcp/http")
        .assert_not_predicted("delete pool");
    let (monitor, pool) = (
        row.before.monitor_uuid(),
        row.before.uuid("pools", "tcp/http"),
    );
    let after = row.apply();
    assert_ne!(after.monitor_uuid(), monitor, "monitor recreated");
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
}

#[test]
fn a_health_monitor_http_version_change_recreates_the_monitor_only() {
    let v11 = "health-monitor = { type = \"http\", http = { version = \"1.1\" } }";
    let v10 = "health-monitor = { type = \"http\", http = { version = \"1.0\" } }";
    let row = row((v11, HTTP), (v10, HTTP));
    row.assert_class("minimal")
        .assert_predicts("delete health monitor of pool tcp/http")
        .assert_predicts("create health monitor http of pool tcp/http")
        .assert_not_predicted("delete pool")
        .assert_not_predicted("member");
    let (monitor, pool, members) = (
        row.before.monitor_uuid(),
        row.before.uuid("pools", "tcp/http"),
        row.before.member_uuids(),
    );
    let after = row.apply();
    assert_ne!(after.monitor_uuid(), monitor, "monitor recreated");
    assert_eq!(after.all("health_monitors")[0]["http"]["version"], "1.0");
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
    assert_eq!(after.member_uuids(), members, "members kept");
}
