//! The last controller-mode rows of impact.md's cloudscale table on the embedded default (see
//! k8s_ccm_rows.rs for the frame): a node port set in the config, listener allowed subnets
//! (with a second private subnet added to the simulated cloud) and the health-monitor HTTP
//! version. Each checks the predicted class and controller actions, applies, and checks which
//! UUIDs stayed and which changed.

use serde_json::{json, Value};

use crate::cloudscale::controller::{config, row, shop, Row, HTTP};
use crate::support::Project;

fn http_on(node_port: u16) -> String {
    format!("{HTTP}node-port = {node_port}\n")
}

fn member_ports(world: &crate::support::World) -> Vec<u64> {
    let members = world.all("members");
    members
        .iter()
        .map(|m| m["protocol_port"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_node_port_set_in_the_config_recreates_every_member_and_keeps_the_pool() {
    let row = row(("", HTTP), ("", &http_on(32000)));
    // The apiserver gave the only port the lowest free node port.
    assert_eq!(member_ports(&row.before), [30000, 30000, 30000]);
    row.assert_class("minimal")
        .assert_predicts("delete member 10.0.0.1:30000")
        .assert_predicts("create member 10.0.0.1:32000")
        .assert_not_predicted("pool")
        .assert_not_predicted("listener");
    let reasons = row.change["attributes"].to_string();
    assert!(reasons.contains("member key"), "{reasons}");
    let pool = row.before.uuid("pools", "tcp/http");
    let (members, listener) = (
        row.before.member_uuids(),
        row.before.uuid("listeners", "tcp/80"),
    );
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
    assert_eq!(after.uuid("listeners", "tcp/80"), listener, "listener kept");
    assert_eq!(member_ports(&after), [32000, 32000, 32000]);
    let recreated = after.member_uuids();
    assert!(
        recreated.iter().all(|m| !members.contains(m)),
        "members recreated"
    );

    // Dropping node-port from the config leaves the port where it is: the apiserver keeps a
    // port's node port by name, so there is nothing to write.
    row.project.config(&config("", HTTP));
    let change = shop(&row.project.plan(&[]));
    assert_eq!(change["action"], "no-op", "{change:#}");
}

#[test]
fn a_node_port_outside_the_apiservers_range_is_a_config_error_at_its_key() {
    let project = Project::new();
    project.config(&config("", &http_on(8080)));
    let out = project.run(&["plan"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("skyplan.toml:18:13"), "{out:?}");
    assert!(out.stderr.contains("node-port 8080 is outside"), "{out:?}");
}

/// The apiserver refuses a node port another Service holds (422, unit-tested in the
/// simulator): the plan reads the cluster's Services and says so before anything is written.
#[test]
fn a_node_port_another_service_holds_fails_the_plan_and_nothing_is_written() {
    let project = Project::new();
    project.config(&config("", HTTP));
    project.apply_ok();
    let cart = "\n[load-balancer.cart]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                cluster = \"prod\"\nservice = \"default/cart\"\nmode = \"ccm\"\n\
                [[load-balancer.cart.ports]]\nname = \"http\"\nport = 81\nnode-port = 30000\n";
    project.config(&(config("", HTTP) + cart));
    let before = project.world();
    let out = project.run(&["plan"]);
    assert_ne!(out.code, 0, "{out:?}");
    // miette wraps the message: compare it as words.
    let words: Vec<&str> = out
        .stderr
        .split_whitespace()
        .filter(|w| *w != "│")
        .collect();
    let words = words.join(" ");
    let held = "node-port 30000 of port http is held by Service default/shop";
    assert!(words.contains(held), "{out:?}");
    assert_ne!(project.apply(&[]).code, 0);
    let after = project.world();
    assert_eq!(after.all("load_balancers"), before.all("load_balancers"));
    assert_eq!(after.member_uuids(), before.member_uuids());
    // A free one goes through: the apiserver takes the requested port, the CCM builds on it.
    project.config(&(config("", HTTP) + &cart.replace("30000", "31000")));
    project.apply_ok();
    let world = project.world();
    let lb = world.uuid("load_balancers", "cart");
    let pools = world.all("pools");
    let pool = pools
        .iter()
        .find(|p| p["load_balancer"] == lb.as_str())
        .unwrap();
    let members = world.all("members");
    let ports: Vec<&Value> = members
        .iter()
        .filter(|m| m["pool"] == pool["uuid"])
        .map(|m| &m["protocol_port"])
        .collect();
    assert_eq!(ports, [&json!(31000); 3]);
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
