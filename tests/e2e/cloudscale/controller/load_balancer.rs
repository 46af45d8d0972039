//! Controller-mode rows that change the load balancer itself: its name (in place, through the
//! uuid annotation, even after someone removed it), zone and flavor (forbidden), the
//! annotations that touch no cloud object, its floating IPs and VIP addresses (see `super` for
//! the frame).

use crate::cloudscale::controller::{row, HTTP};

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
fn a_zone_change_is_forbidden_and_refused() {
    let row = row(("", HTTP), ("zone = \"rma1\"", HTTP));
    row.assert_class("forbidden");
    let out = row.project.apply(&[]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let lb = row.project.world().named("load_balancers", "shop").unwrap();
    assert_eq!(lb["zone"], "lpg1");
}

#[test]
fn a_flavor_change_is_forbidden_and_refused() {
    let row = row(("", HTTP), ("flavor = \"lb-large\"", HTTP));
    row.assert_class("forbidden");
    let out = row.project.apply(&[]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let after = row.project.world();
    let lb = after.named("load_balancers", "shop").unwrap();
    assert_eq!(
        lb["uuid"],
        row.before.uuid("load_balancers", "shop").as_str()
    );
    assert_eq!(
        lb["flavor"],
        row.before.named("load_balancers", "shop").unwrap()["flavor"]
    );
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

fn vips(address: Option<&str>) -> String {
    let subnet = skyplan_sim::cloudscale::DEFAULT_SUBNET_UUID;
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
