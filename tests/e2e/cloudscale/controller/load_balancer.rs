//! More controller-mode rows of impact.md on the embedded default (see k8s_ccm_rows.rs for the
//! frame): the load balancer's own fields, floating IPs, monitors, ports and pools. Each checks
//! the predicted class and controller actions, then applies and checks which UUIDs stayed.

use crate::cloudscale::controller::{row, HTTP};

const TWO_PORTS: &str = "[[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n\n\
                         [[load-balancer.shop.ports]]\nname = \"https\"\nport = 443\n";

#[test]
fn a_rename_with_the_uuid_annotation_is_in_place() {
    let row = row(("", HTTP), ("name = \"shop-2\"", HTTP));
    row.assert_class("none").assert_not_predicted("delete");
    let lb = row.before.uuid("load_balancers", "shop");
    let after = row.apply();
    assert_eq!(
        after.uuid("load_balancers", "shop-2"),
        lb,
        "renamed in place"
    );
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
fn ip_mode_and_force_hostname_touch_no_cloud_object() {
    let after_config = "ip-mode = \"VIP\"\nforce-hostname = \"shop.example.com\"";
    let row = row(("", HTTP), (after_config, HTTP));
    row.assert_class("none")
        .assert_not_predicted("create")
        .assert_not_predicted("delete")
        .assert_not_predicted("update");
    let (pools, members) = (row.before.all("pools"), row.before.member_uuids());
    let after = row.apply();
    assert_eq!(after.all("pools"), pools);
    assert_eq!(after.member_uuids(), members);
}

#[test]
fn a_floating_ip_added_is_minimal_and_removing_it_leaves_it_assigned() {
    let fip = "floating-ips = [\"5.102.150.123/32\"]";
    let row = row(("", HTTP), (fip, HTTP));
    row.assert_class("minimal");
    let lb = row.before.uuid("load_balancers", "shop");
    let after = row.apply();
    let assigned = |world: &crate::support::World| {
        let fips = world.all("floating_ips");
        let fip = fips
            .iter()
            .find(|f| f["network"] == "5.102.150.123/32")
            .unwrap();
        fip["load_balancer"].clone()
    };
    assert_eq!(
        assigned(&after),
        serde_json::json!(lb),
        "the CCM assigned it"
    );
    // Removing it from the annotation: the CCM never unassigns.
    row.project
        .config(&crate::cloudscale::controller::config("", HTTP));
    let plan = row.project.plan(&[]);
    let change = crate::cloudscale::controller::shop(&plan);
    assert_eq!(change["impact"], "none", "{change:#}");
    assert!(change.to_string().contains("stays"), "{change:#}");
    row.project.apply_ok();
    assert_eq!(assigned(&row.project.world()), serde_json::json!(lb));
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
fn a_node_selector_matching_fewer_nodes_removes_their_members() {
    let selector = "node-selector = \"kubernetes.io/hostname in (node-1,node-2)\"";
    let row = row(("", HTTP), (selector, HTTP));
    row.assert_class("minimal")
        .assert_predicts("delete member 10.0.0.3:30000")
        .assert_not_predicted("pool");
    let after = row.apply();
    assert_eq!(after.all("members").len(), 2);
}

#[test]
fn a_zone_change_is_forbidden_and_refused() {
    let row = row(("", HTTP), ("zone = \"rma1\"", HTTP));
    row.assert_class("forbidden");
    let out = row.project.apply(&[]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let lb = row.project.world().named("load_balancers", "shop").unwrap();
    assert_eq!(lb["zone"], "lpg1");
}

fn vips(address: Option<&str>) -> String {
    let subnet = skyplan::sim::cloudscale::DEFAULT_SUBNET_UUID;
    match address {
        Some(address) => {
            format!("vip-addresses = [{{ subnet = \"{subnet}\", address = \"{address}\" }}]")
        }
        None => format!("vip-addresses = [{{ subnet = \"{subnet}\" }}]"),
    }
}

#[test]
fn other_vip_addresses_are_forbidden_and_clearing_them_is_accepted_silently() {
    let row = row((&vips(None), HTTP), (&vips(Some("10.0.0.200")), HTTP));
    row.assert_class("forbidden");
    let lb = row.before.named("load_balancers", "shop").unwrap();
    assert_ne!(row.project.apply(&[]).code, 0, "apply refuses");
    // Clearing the annotation: the CCM accepts it and keeps the VIP.
    row.project
        .config(&crate::cloudscale::controller::config("", HTTP));
    let change = crate::cloudscale::controller::shop(&row.project.plan(&[]));
    assert_eq!(change["impact"], "none", "{change:#}");
    row.project.apply_ok();
    let after = row.project.world().named("load_balancers", "shop").unwrap();
    assert_eq!(after["uuid"], lb["uuid"]);
    assert_eq!(after["vip_addresses"], lb["vip_addresses"], "VIP kept");
}

/// Someone removed the uuid annotation. Without it the CCM finds its load balancer by name only,
/// so a rename planned then would build a second one (forbidden, unit-tested in
/// `ccm::plan_tests`). But removing the annotation is itself a Service change: the controller's
/// next Ensure finds the load balancer by name and writes the uuid back — which the embedded
/// controller does as it starts — so by the time skyplan reads the Service the rename is safe
/// again, and skyplan plans it from what the Service shows.
#[test]
fn a_uuid_annotation_removed_behind_skyplans_back_is_restored_before_a_rename() {
    let row = row(("", HTTP), ("", HTTP));
    let world = row
        .project
        .path()
        .join("state/embedded/kubernetes/prod.json");
    let mut cluster: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&world).unwrap()).unwrap();
    let services = cluster["services"].as_object_mut().unwrap();
    let shop = services
        .values_mut()
        .find(|s| s["metadata"]["name"] == "shop")
        .unwrap();
    let annotations = shop["metadata"]["annotations"].as_object_mut().unwrap();
    assert!(annotations
        .remove("k8s.cloudscale.ch/loadbalancer-uuid")
        .is_some());
    std::fs::write(&world, serde_json::to_string(&cluster).unwrap()).unwrap();
    row.project.config(&crate::cloudscale::controller::config(
        "name = \"shop-2\"",
        HTTP,
    ));
    let change = crate::cloudscale::controller::shop(&row.project.plan(&[]));
    assert_eq!(change["impact"], "none", "{change:#}");
    let lb = row.before.uuid("load_balancers", "shop");
    row.project.apply_ok();
    let after = row.project.world();
    assert_eq!(
        after.uuid("load_balancers", "shop-2"),
        lb,
        "renamed in place"
    );
    assert_eq!(
        after.all("load_balancers").len(),
        1,
        "no second load balancer"
    );
}

#[test]
fn one_floating_ip_claimed_by_two_load_balancers_is_refused_before_any_change() {
    let fip = "floating-ips = [\"5.102.150.123/32\"]";
    let project = crate::support::Project::new();
    let second = "\n[load-balancer.other]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                  members = [\"10.0.0.9\"]\nfloating-ips = [\"5.102.150.123/32\"]\n\
                  [[load-balancer.other.ports]]\nport = 81\nnode-port = 30081\n";
    project.config(&(crate::cloudscale::controller::config(fip, HTTP) + second));
    let out = project.run(&["plan"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("5.102.150.123"), "{out:?}");
}
