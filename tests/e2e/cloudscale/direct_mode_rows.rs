//! One test per row of impact.md's cloudscale table: apply a config, change it, check the
//! class the plan gives, then apply and check the cloud did exactly that.

use serde_json::Value;

use crate::support::{Project, World};

const PORT_HTTP: &str =
    "[[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

/// A load balancer in lpg1 with two members; `extra` goes into its table (and may override
/// the zone or the members), `ports` after it.
fn config(extra: &str, ports: &str) -> String {
    let mut table = String::new();
    if !extra.contains("zone =") {
        table.push_str("zone = \"lpg1\"\n");
    }
    if !extra.contains("members =") {
        table.push_str("members = [\"10.0.0.11\", \"10.0.0.12\"]\n");
    }
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [load-balancer.web]\nprovider = \"cloudscale\"\n{table}{extra}\n{ports}"
    )
}

struct Row {
    project: Project,
    plan: Value,
    before: World,
}

/// Applies `(before_extra, before_ports)`, then plans `(after_extra, after_ports)`.
fn row(before: (&str, &str), after: (&str, &str)) -> Row {
    let project = Project::new();
    project.config(&config(before.0, before.1));
    project.apply_ok();
    let first = project.plan(&[]);
    assert_eq!(
        first["summary"]["no_op"], 1,
        "nothing to do right after apply: {first:#}"
    );
    project.config(&config(after.0, after.1));
    let plan = project.plan(&[]);
    let before = project.world();
    Row {
        project,
        plan,
        before,
    }
}

impl Row {
    fn assert_class(&self, impact: &str, path: &str) -> &Self {
        let change = &self.plan["changes"][0];
        assert_eq!(change["impact"], impact, "{:#}", self.plan);
        let paths: Vec<&str> = change["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["path"].as_str().unwrap())
            .collect();
        assert!(paths.contains(&path), "no change at {path} in {paths:?}");
        self
    }

    /// Applies and returns the world after; the next plan must be empty.
    fn apply(&self) -> World {
        self.project.apply_ok();
        let again = self.project.plan(&[]);
        assert_eq!(
            again["summary"]["no_op"], 1,
            "apply then plan is empty: {again:#}"
        );
        self.project.world()
    }
}

fn lb_uuid(world: &World) -> String {
    world.uuid("load_balancers", "web")
}

#[test]
fn lb_name_is_none_and_patched() {
    let row = row(("", PORT_HTTP), ("name = \"web-renamed\"", PORT_HTTP));
    row.assert_class("none", "name");
    let lb = row.before.all("load_balancers")[0]["uuid"].clone();
    let after = row.apply();
    assert_eq!(after.all("load_balancers")[0]["uuid"], lb);
    assert_eq!(after.all("load_balancers")[0]["name"], "web-renamed");
}

#[test]
fn listener_timeouts_are_none_and_patched() {
    let row = row(
        ("", PORT_HTTP),
        ("timeouts = { member-connect-ms = 2000 }", PORT_HTTP),
    );
    row.assert_class("none", "timeouts.member-connect-ms");
    let listener = row.before.uuid("listeners", "tcp/80");
    let after = row.apply();
    assert_eq!(after.uuid("listeners", "tcp/80"), listener);
    assert_eq!(
        after.named("listeners", "tcp/80").unwrap()["timeout_member_connect_ms"],
        2000
    );
}

#[test]
fn status_only_fields_are_none_without_cloud_calls() {
    let row = row(
        ("", PORT_HTTP),
        (
            "force-hostname = \"lb.example.com\"\nip-mode = \"VIP\"",
            PORT_HTTP,
        ),
    );
    row.assert_class("none", "ip-mode")
        .assert_class("none", "force-hostname");
    assert_eq!(row.plan["changes"][0]["operations"], serde_json::json!([]));
    let after = row.apply();
    assert_eq!(after.0, row.before.0, "no cloud change");
}

#[test]
fn allowed_cidrs_are_minimal_and_patched() {
    let row = row(
        ("", PORT_HTTP),
        ("allowed-cidrs = [\"192.0.2.0/24\"]", PORT_HTTP),
    );
    row.assert_class("minimal", "allowed-cidrs");
    let listener = row.before.uuid("listeners", "tcp/80");
    let after = row.apply();
    assert_eq!(after.uuid("listeners", "tcp/80"), listener);
    assert_eq!(
        after.named("listeners", "tcp/80").unwrap()["allowed_cidrs"],
        serde_json::json!(["192.0.2.0/24"])
    );
}

fn floating_ip_holder(world: &World, network: &str) -> Value {
    let ip = world
        .all("floating_ips")
        .into_iter()
        .find(|f| f["network"] == network)
        .expect("floating IP exists");
    ip["load_balancer"].clone()
}

#[test]
fn floating_ip_added_is_minimal_and_assigned() {
    let row = row(
        ("", PORT_HTTP),
        ("floating-ips = [\"5.102.150.123/32\"]", PORT_HTTP),
    );
    row.assert_class("minimal", "floating-ips");
    let after = row.apply();
    assert_eq!(
        floating_ip_holder(&after, "5.102.150.123/32").as_str(),
        Some(lb_uuid(&after).as_str())
    );
}

#[test]
fn floating_ip_removed_is_none_and_stays() {
    let row = row(
        ("floating-ips = [\"5.102.150.123/32\"]", PORT_HTTP),
        ("", PORT_HTTP),
    );
    row.assert_class("none", "floating-ips");
    let reason = row.plan["changes"][0]["attributes"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("stays assigned"), "{reason}");
    let after = row.apply();
    assert_eq!(
        floating_ip_holder(&after, "5.102.150.123/32").as_str(),
        Some(lb_uuid(&after).as_str())
    );
}

#[test]
fn monitor_numbers_are_minimal_and_patched() {
    let row = row(
        ("", PORT_HTTP),
        (
            "health-monitor = { delay-s = 5, down-threshold = 5 }",
            PORT_HTTP,
        ),
    );
    row.assert_class("minimal", "health-monitor.delay-s");
    let monitor = row.before.monitor_uuid();
    let after = row.apply();
    assert_eq!(after.monitor_uuid(), monitor);
    assert_eq!(after.all("health_monitors")[0]["delay_s"], 5);
}

#[test]
fn monitor_http_fields_are_minimal_and_patched() {
    let http = "health-monitor = { type = \"http\", http = { url-path = \"/\" } }";
    let row = row(
        (http, PORT_HTTP),
        (
            "health-monitor = { type = \"http\", http = { url-path = \"/healthz\" } }",
            PORT_HTTP,
        ),
    );
    row.assert_class("minimal", "health-monitor.http.url-path");
    let monitor = row.before.monitor_uuid();
    let after = row.apply();
    assert_eq!(after.monitor_uuid(), monitor);
}

#[test]
fn monitor_type_is_minimal_and_recreates_only_the_monitor() {
    let row = row(
        ("", PORT_HTTP),
        ("health-monitor = { type = \"ping\" }", PORT_HTTP),
    );
    row.assert_class("minimal", "health-monitor.type");
    let (monitor, pool) = (
        row.before.monitor_uuid(),
        row.before.uuid("pools", "tcp/http"),
    );
    let after = row.apply();
    assert_ne!(after.monitor_uuid(), monitor);
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
}

#[test]
fn monitor_http_version_is_minimal_and_recreates_the_monitor() {
    let v11 = "health-monitor = { type = \"http\", http = { version = \"1.1\" } }";
    let row = row(
        (v11, PORT_HTTP),
        (
            "health-monitor = { type = \"http\", http = { version = \"1.0\" } }",
            PORT_HTTP,
        ),
    );
    row.assert_class("minimal", "health-monitor.http.version");
    let monitor = row.before.monitor_uuid();
    assert_ne!(row.apply().monitor_uuid(), monitor);
}

#[test]
fn listener_protocol_is_minimal_and_recreates_the_listener() {
    let row = row(("", PORT_HTTP), ("listener-protocol = \"udp\"", PORT_HTTP));
    row.assert_class("minimal", "ports.http.listener-protocol");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert!(after.named("listeners", "tcp/80").is_none());
    assert!(after.named("listeners", "udp/80").is_some());
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
}

#[test]
fn port_number_with_same_name_is_minimal_up_to_15_s() {
    let row = row(
        ("", PORT_HTTP),
        ("", &PORT_HTTP.replace("port = 80", "port = 8080")),
    );
    row.assert_class("minimal", "ports.http.port");
    assert_eq!(
        row.plan["changes"][0]["estimated_downtime_s"],
        serde_json::json!({"min": 0, "max": 15})
    );
    let (pool, members) = (
        row.before.uuid("pools", "tcp/http"),
        row.before.member_uuids(),
    );
    let after = row.apply();
    assert!(after.named("listeners", "tcp/8080").is_some());
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
    assert_eq!(after.member_uuids(), members);
}

const PORT_HTTPS: &str =
    "[[load-balancer.web.ports]]\nname = \"https\"\nport = 443\nnode-port = 30443\n";

#[test]
fn port_added_is_none_and_leaves_other_ports_alone() {
    let two = format!("{PORT_HTTP}{PORT_HTTPS}");
    let row = row(("", PORT_HTTP), ("", &two));
    row.assert_class("none", "ports.https");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
    assert!(after.named("listeners", "tcp/443").is_some());
}

#[test]
fn port_removed_is_pool_recreate_for_that_port() {
    let two = format!("{PORT_HTTP}{PORT_HTTPS}");
    let row = row(("", &two), ("", PORT_HTTP));
    row.assert_class("pool-recreate", "ports.https");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert!(after.named("pools", "tcp/https").is_none());
    assert!(after.named("listeners", "tcp/443").is_none());
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
}

#[test]
fn port_name_change_is_pool_recreate() {
    let unnamed = "[[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n";
    let row = row(("", unnamed), ("", PORT_HTTP));
    row.assert_class("pool-recreate", "ports.http.name");
    assert_eq!(
        row.plan["changes"][0]["estimated_downtime_s"],
        serde_json::json!({"min": 60, "max": 120})
    );
    let after = row.apply();
    assert!(after.named("pools", "tcp").is_none());
    assert!(after.named("pools", "tcp/http").is_some());
}

#[test]
fn port_protocol_tcp_to_udp_is_pool_recreate() {
    let udp = PORT_HTTP.replace("node-port", "protocol = \"udp\"\nnode-port");
    let row = row(("", PORT_HTTP), ("", &udp));
    row.assert_class("pool-recreate", "ports.http.protocol");
    let after = row.apply();
    assert_eq!(after.named("pools", "udp/http").unwrap()["protocol"], "udp");
    assert!(after.named("pools", "tcp/http").is_none());
}

#[test]
fn pool_algorithm_is_pool_recreate() {
    let row = row(("", PORT_HTTP), ("algorithm = \"source_ip\"", PORT_HTTP));
    row.assert_class("pool-recreate", "ports.http.algorithm");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_ne!(after.uuid("pools", "tcp/http"), pool);
    assert_eq!(
        after.named("pools", "tcp/http").unwrap()["algorithm"],
        "source_ip"
    );
}

#[test]
fn pool_protocol_is_pool_recreate() {
    let row = row(("", PORT_HTTP), ("pool-protocol = \"proxyv2\"", PORT_HTTP));
    row.assert_class("pool-recreate", "ports.http.pool-protocol");
    let pool = row.before.uuid("pools", "tcp/http");
    assert_ne!(row.apply().uuid("pools", "tcp/http"), pool);
}

#[test]
fn node_port_is_minimal_and_recreates_members_only() {
    let row = row(("", PORT_HTTP), ("", &PORT_HTTP.replace("30080", "31080")));
    row.assert_class("minimal", "ports.http.node-port");
    let (pool, members) = (
        row.before.uuid("pools", "tcp/http"),
        row.before.member_uuids(),
    );
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
    assert!(after.member_uuids().iter().all(|m| !members.contains(m)));
    assert!(after.named("members", "10.0.0.11:31080").is_some());
}

#[test]
fn members_added_and_removed_are_minimal() {
    let row = row(
        ("", PORT_HTTP),
        ("members = [\"10.0.0.12\", \"10.0.0.13\"]", PORT_HTTP),
    );
    row.assert_class("minimal", "ports.http.members");
    let kept = row.before.uuid("members", "10.0.0.12:30080");
    let after = row.apply();
    assert_eq!(after.uuid("members", "10.0.0.12:30080"), kept);
    assert!(after.named("members", "10.0.0.11:30080").is_none());
    assert!(after.named("members", "10.0.0.13:30080").is_some());
}

#[test]
fn traffic_policy_is_minimal_members_and_monitor_recreated_pool_kept() {
    let row = row(
        ("", PORT_HTTP),
        (
            "traffic-policy = \"Local\"\nhealth-check-node-port = 32000",
            PORT_HTTP,
        ),
    );
    row.assert_class("minimal", "ports.http.monitor-port");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
    let monitor = &after.all("health_monitors")[0];
    assert_eq!(monitor["type"], "http");
    assert_eq!(monitor["http"]["url_path"], "/livez");
    assert!(after
        .all("members")
        .iter()
        .all(|m| m["monitor_port"] == 32000));
}

#[test]
fn allowed_subnets_are_minimal_and_only_filter_members() {
    // A subnet the members are not in: every member goes, the pool stays.
    let other = "allowed-subnets = [\"00000000-0000-4000-8000-00000000abcd\"]";
    let row = row(("", PORT_HTTP), (other, PORT_HTTP));
    row.assert_class("minimal", "ports.http.members");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool);
    assert!(after.all("members").is_empty());
}

fn assert_refused(extra: &str, path: &str) {
    let row = row(("", PORT_HTTP), (extra, PORT_HTTP));
    row.assert_class("forbidden", path);
    let out = row.project.apply(&[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("forbidden") && out.stderr.contains("load-balancer.web"),
        "{out:?}"
    );
    assert_eq!(row.project.world().0, row.before.0, "nothing was changed");
}

#[test]
fn flavor_is_forbidden_and_refused() {
    assert_refused("flavor = \"lb-large\"", "flavor");
}

#[test]
fn zone_is_forbidden_and_refused() {
    assert_refused("zone = \"rma1\"", "zone");
}

#[test]
fn vip_addresses_are_forbidden_and_refused() {
    let vip = "vip-addresses = [{ subnet = \"70d282ab-2a01-4abb-a03e-5c1d0ba29ef2\", address = \"10.0.0.5\" }]";
    assert_refused(vip, "vip-addresses");
}
