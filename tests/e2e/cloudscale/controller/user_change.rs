//! A controller-mode plan names what the user changed — the config key of the Service field
//! (`traffic-policy: Cluster → Local`) — with what the CCM is predicted to do to the cloud
//! objects under it as its effects, values the apiserver has yet to allocate shown as such,
//! and the controller's actions in the order it performs them (see `super` for the frame).

use serde_json::{json, Value};

use crate::cloudscale::controller::{operations, row, HTTP};

const LOCAL: &str = "traffic-policy = \"Local\"";

fn attribute<'a>(change: &'a Value, path: &str) -> &'a Value {
    change["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == path)
        .unwrap_or_else(|| panic!("no attribute {path} in {change:#}"))
}

/// Where `action` is among the controller's operations.
fn position(operations: &[String], action: &str) -> usize {
    operations
        .iter()
        .position(|o| o == &format!("controller: {action}"))
        .unwrap_or_else(|| panic!("no `controller: {action}` in {operations:#?}"))
}

#[test]
fn the_json_plan_names_the_traffic_policy_with_the_ccms_effects_under_it() {
    let row = row(("", HTTP), (LOCAL, HTTP));
    let change = &row.change;
    let attributes = change["attributes"].as_array().unwrap();
    assert_eq!(attributes.len(), 1, "only the user's change: {change:#}");
    let policy = attribute(change, "traffic-policy");
    assert_eq!(
        (&policy["before"], &policy["after"]),
        (&json!("Cluster"), &json!("Local"))
    );
    assert_eq!(policy["impact"], "minimal", "the highest of its effects");
    let effects = policy["effects"].as_array().expect("effects");
    let monitor_port = effects
        .iter()
        .find(|e| e["path"] == "ports.http.monitor-port")
        .unwrap_or_else(|| panic!("no monitor-port effect in {effects:#?}"));
    // The health-check node port is allocated when the Service is written: unknown, not 0.
    assert_eq!(
        monitor_port["after"],
        json!([{"unknown": "allocated by the apiserver"}])
    );
    assert!(!monitor_port["after"].to_string().contains(":0"));
    let monitor = effects
        .iter()
        .find(|e| e["path"] == "health-monitor.type")
        .unwrap_or_else(|| panic!("no monitor type effect in {effects:#?}"));
    assert_eq!(
        (&monitor["before"], &monitor["after"]),
        (&json!("tcp"), &json!("http"))
    );
    for effect in effects {
        assert_eq!(effect["impact"], "minimal", "{effect:#}");
        assert!(effect["reason"].as_str().is_some_and(|r| !r.is_empty()));
    }

    // The CCM's order: in the kept pool its members (deletes, then creates), then its monitor.
    let ops = operations(change);
    assert_eq!(ops[0], "patch service default/shop");
    let deleted = position(&ops, "delete member 10.0.0.1:30000");
    let created = ops
        .iter()
        .position(|o| o.starts_with("controller: create member"))
        .expect("members created");
    let monitor_deleted = position(&ops, "delete health monitor of pool tcp/http");
    let monitor_created = position(&ops, "create health monitor http of pool tcp/http");
    assert!(deleted < created, "{ops:#?}");
    assert!(created < monitor_deleted, "{ops:#?}");
    assert!(monitor_deleted < monitor_created, "{ops:#?}");
    row.apply();
}

#[test]
fn the_text_plan_shows_the_traffic_policy_its_effects_and_no_port_zero() {
    let row = row(("", HTTP), (LOCAL, HTTP));
    let out = row.project.run(&["plan"]);
    assert_eq!(out.code, 0, "{out:?}");
    let text = &out.stdout;
    assert!(
        text.contains("~ traffic-policy: \"Cluster\" → \"Local\"  [minimal"),
        "{text}"
    );
    assert!(
        text.contains(
            "↳ ports.http.monitor-port: [30000] → [(allocated by the apiserver)]  [minimal]"
        ),
        "{text}"
    );
    assert!(
        text.contains("↳ health-monitor.type: \"tcp\" → \"http\"  [minimal]"),
        "{text}"
    );
    assert!(!text.contains("→ [0]"), "{text}");
    // Listed in the CCM's order, not alphabetically (creates before deletes).
    let first_member = text
        .find("controller: delete member")
        .expect("member deleted");
    let first_create = text
        .find("controller: create member")
        .expect("member created");
    let monitor = text
        .find("controller: delete health monitor")
        .expect("monitor deleted");
    assert!(
        first_member < first_create && first_create < monitor,
        "{text}"
    );
}

/// A port renamed: the attribute is the key the user edited (`ports.web.name`), the pool
/// recreated under its new name and the members' node port the apiserver allocates are its
/// effects. The CCM deletes the old pool's members and the pool before it builds the new pool;
/// the old pool's listener and monitor go with it, never deleted on their own.
#[test]
fn a_renamed_port_deletes_the_old_pool_before_building_the_new_one() {
    let web = HTTP.replace("\"http\"", "\"web\"");
    let row = row(("", HTTP), ("", &web));
    let renamed = attribute(&row.change, "ports.web.name");
    assert_eq!(renamed["impact"], "pool-recreate");
    assert_eq!(
        (&renamed["before"], &renamed["after"]),
        (&json!("http"), &json!("web"))
    );
    let effects = renamed["effects"].as_array().unwrap();
    let effect = |path: &str| {
        effects
            .iter()
            .find(|e| e["path"] == path)
            .unwrap_or_else(|| panic!("no effect {path}: {renamed:#}"))
    };
    let pool = effect("ports.web.pool");
    assert_eq!(
        (&pool["before"], &pool["after"]),
        (&json!("tcp/http"), &json!("tcp/web"))
    );
    assert_eq!(pool["impact"], "pool-recreate");
    assert_eq!(
        effect("ports.web.node-port")["after"],
        json!([{"unknown": "allocated by the apiserver"}])
    );
    assert!(
        !row.change["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["path"] == "ports"),
        "{:#}",
        row.change
    );
    let ops = operations(&row.change);
    let pool_deleted = position(&ops, "delete pool tcp/http");
    let pool_created = position(&ops, "create pool tcp/web");
    let members_deleted = position(&ops, "delete member 10.0.0.1:30000");
    assert!(
        members_deleted < pool_deleted && pool_deleted < pool_created,
        "{ops:#?}"
    );
    assert!(
        !ops.iter()
            .any(|o| o == "controller: delete listener tcp/80"),
        "{ops:#?}"
    );
}
