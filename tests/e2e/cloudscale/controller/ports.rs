//! Controller-mode rows that change a port: its name, number and protocol, the pool's
//! algorithm and protocol, the listener's timeouts and allowed CIDRs, a port added or removed,
//! and a node port set in the config (see `super` for the frame).

use serde_json::{json, Value};

use crate::cloudscale::controller::{config, row, shop, HTTP};
use crate::support::Project;

const TWO_PORTS: &str = "[[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n\n\
                         [[load-balancer.shop.ports]]\nname = \"https\"\nport = 443\n";

#[test]
fn a_port_name_change_recreates_the_pool() {
    let renamed = "[[load-balancer.shop.ports]]\nname = \"web\"\nport = 80\n";
    let row = row(("", HTTP), ("", renamed));
    row.assert_class("pool-recreate")
        .assert_predicts("delete pool tcp/http")
        .assert_predicts("create pool tcp/web");
    let lb = row.before.uuid("load_balancers", "shop");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_eq!(
        after.uuid("load_balancers", "shop"),
        lb,
        "same load balancer"
    );
    assert!(after.named("pools", "tcp/http").is_none());
    assert_ne!(after.uuid("pools", "tcp/web"), pool, "a new pool");
}

#[test]
fn a_renumbered_port_keeps_its_node_port_and_pool_and_recreates_the_listener() {
    let renumbered = "[[load-balancer.shop.ports]]\nname = \"http\"\nport = 8080\n";
    let row = row(("", HTTP), ("", renumbered));
    row.assert_class("minimal")
        .assert_predicts("delete listener tcp/80")
        .assert_predicts("create listener tcp/8080")
        .assert_not_predicted("pool")
        .assert_not_predicted("member");
    let pool = row.before.uuid("pools", "tcp/http");
    let members = row.before.member_uuids();
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
    assert_eq!(
        after.member_uuids(),
        members,
        "members kept: same node port"
    );
    assert!(after.named("listeners", "tcp/80").is_none());
    assert!(after.named("listeners", "tcp/8080").is_some());
}

#[test]
fn a_port_added_is_none_and_leaves_the_other_port_alone() {
    let row = row(("", HTTP), ("", TWO_PORTS));
    row.assert_class("none")
        .assert_predicts("create pool tcp/https")
        .assert_not_predicted("delete");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
    assert!(after.named("pools", "tcp/https").is_some());
}

#[test]
fn a_port_removed_is_pool_recreate_for_that_port_only() {
    let row = row(("", TWO_PORTS), ("", HTTP));
    row.assert_class("pool-recreate")
        .assert_predicts("delete pool tcp/https");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "the other port kept");
    assert!(after.named("pools", "tcp/https").is_none());
}

#[test]
fn a_port_protocol_change_to_udp_recreates_the_pool() {
    let udp = "[[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\nprotocol = \"udp\"\n";
    let row = row(("", HTTP), ("", udp));
    row.assert_class("pool-recreate")
        .assert_predicts("delete pool tcp/http")
        .assert_predicts("create pool udp/http");
    let after = row.apply();
    assert!(after.named("pools", "tcp/http").is_none());
    assert_eq!(after.named("pools", "udp/http").unwrap()["protocol"], "udp");
}

#[test]
fn a_pool_algorithm_change_recreates_the_pool() {
    let row = row(("", HTTP), ("algorithm = \"source_ip\"", HTTP));
    row.assert_class("pool-recreate")
        .assert_predicts("delete pool tcp/http");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    let live = after.named("pools", "tcp/http").unwrap();
    assert_ne!(live["uuid"], pool.as_str(), "a new pool");
    assert_eq!(live["algorithm"], "source_ip");
}

#[test]
fn a_pool_protocol_change_recreates_the_pool() {
    let row = row(("", HTTP), ("pool-protocol = \"proxy\"", HTTP));
    row.assert_class("pool-recreate")
        .assert_predicts("delete pool tcp/http");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    let live = after.named("pools", "tcp/http").unwrap();
    assert_ne!(live["uuid"], pool.as_str(), "a new pool");
    assert_eq!(live["protocol"], "proxy");
}

#[test]
fn listener_timeouts_are_none_and_patched_in_place() {
    let row = row(
        ("", HTTP),
        ("timeouts = { member-connect-ms = 3000 }", HTTP),
    );
    row.assert_class("none").assert_not_predicted("delete");
    let listener = row.before.uuid("listeners", "tcp/80");
    let after = row.apply();
    let live = after.named("listeners", "tcp/80").unwrap();
    assert_eq!(live["uuid"], listener.as_str());
    assert_eq!(live["timeout_member_connect_ms"], 3000);
}

#[test]
fn allowed_cidrs_are_minimal_and_keep_the_listener() {
    let row = row(("", HTTP), ("allowed-cidrs = [\"192.0.2.0/24\"]", HTTP));
    row.assert_class("minimal")
        .assert_predicts("update listener tcp/80")
        .assert_not_predicted("delete");
    let listener = row.before.uuid("listeners", "tcp/80");
    let after = row.apply();
    assert_eq!(after.uuid("listeners", "tcp/80"), listener);
    assert_eq!(
        after.named("listeners", "tcp/80").unwrap()["allowed_cidrs"],
        serde_json::json!(["192.0.2.0/24"])
    );
}

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
    assert!(
        reasons.contains("port 80 serves nothing for about 6 s"),
        "the CCM breaks before it makes, and the plan says for how long: {reasons}"
    );
    assert_eq!(
        row.change["estimated_downtime_s"]["min"], 5,
        "{:#}",
        row.change
    );
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
