//! The user's change named as the attribute, with the CCM's predictions under it.

use serde_json::json;

use super::*;
use skyplan_core::model::Impact;

fn written(path: &str, before: Value, after: Value) -> ServiceChange {
    ServiceChange {
        path: path.into(),
        before,
        after,
    }
}

fn predicted(change: Change, path: &str, before: Value, after: Value, object: &str) -> Predicted {
    let row = rule(change);
    Predicted {
        change,
        attribute: AttributeChange {
            path: path.into(),
            before,
            after,
            impact: row.impact,
            reason: format!("{object}: {}", row.happens),
            downtime: row.downtime,
            group: object.into(),
            effects: vec![],
        },
        note: None,
    }
}

#[test]
fn service_fields_are_named_by_the_config_keys_that_set_them() {
    let annotation = |suffix: &str| config_key(&format!("service.annotations.{PREFIX}{suffix}"));
    assert_eq!(annotation("pool-algorithm"), "algorithm");
    assert_eq!(annotation("listener-allowed-cidrs"), "allowed-cidrs");
    assert_eq!(
        annotation("health-monitor-delay-s"),
        "health-monitor.delay-s"
    );
    assert_eq!(
        annotation("timeout-member-connect-ms"),
        "timeouts.member-connect-ms"
    );
    assert_eq!(annotation("flavor"), "flavor");
    assert_eq!(annotation("node-selector"), "node-selector");
    assert_eq!(
        config_key("service.externalTrafficPolicy"),
        "traffic-policy"
    );
    assert_eq!(config_key("service.ports"), "ports");
    assert_eq!(config_key("service.ports.web"), "ports.web");
    assert_eq!(config_key("service.ports.web.name"), "ports.web.name");
    assert_eq!(config_key("service.ports.web.port"), "ports.web.port");
    assert_eq!(
        config_key("service.ports.http.nodePort"),
        "ports.http.node-port"
    );
    assert_eq!(
        config_key("service.ports.http.targetPort"),
        "ports.http.target-port"
    );
    assert_eq!(config_key("service.type"), "service.type");
}

/// Every managed annotation's config key is one the config language has (a typo here would
/// name an attribute the user cannot find, and ignore-changes could not name it).
#[test]
fn every_managed_annotation_maps_to_a_config_key() {
    let keys = [
        "name",
        "flavor",
        "vip-addresses",
        "floating-ips",
        "algorithm",
        "pool-protocol",
        "force-hostname",
        "ip-mode",
        "health-monitor.delay-s",
        "health-monitor.timeout-s",
        "health-monitor.up-threshold",
        "health-monitor.down-threshold",
        "health-monitor.type",
        "health-monitor.http",
        "listener-protocol",
        "allowed-cidrs",
        "timeouts.client-data-ms",
        "timeouts.member-connect-ms",
        "timeouts.member-data-ms",
        "allowed-subnets",
        "node-selector",
    ];
    let mapped: Vec<String> = super::super::annotations::MANAGED
        .iter()
        .map(|suffix| annotation_key(suffix).to_string())
        .collect();
    assert_eq!(mapped, keys);
}

/// The quickstart's case: traffic-policy Cluster → Local is the attribute; the members'
/// monitor port (not known until the apiserver allocates the health-check node port) and the
/// monitor type are its effects; its class is theirs and its downtime both objects' in turn.
#[test]
fn the_traffic_policy_is_the_attribute_and_the_cloud_changes_its_effects() {
    let out = attributes(
        &[written(
            "service.externalTrafficPolicy",
            json!("Cluster"),
            json!("Local"),
        )],
        vec![
            predicted(
                Change::TrafficPolicy,
                "ports.http.monitor-port",
                json!([30000]),
                json!([UNKNOWN_PORT]),
                "members of pool tcp/http",
            ),
            predicted(
                Change::TrafficPolicy,
                "health-monitor.type",
                json!("tcp"),
                json!("http"),
                "health monitor of pool tcp/http",
            ),
        ],
        "default/store",
    );
    assert_eq!(out.len(), 1, "{out:#?}");
    let policy = &out[0];
    assert_eq!(policy.path, "traffic-policy");
    assert_eq!(
        (&policy.before, &policy.after),
        (&json!("Cluster"), &json!("Local"))
    );
    assert_eq!(policy.impact, Impact::Minimal);
    assert_eq!(policy.downtime, Downtime::new(0, 20));
    let paths: Vec<&str> = policy.effects.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["ports.http.monitor-port", "health-monitor.type"]);
    assert_eq!(
        policy.effects[0].after,
        json!([{"unknown": "allocated by the apiserver"}])
    );
}

/// The quickstart's port rename: the attribute is the key the user edited (`ports.web.name`),
/// the pool recreated under its new name and the members' new node port its effects, its class
/// the pool's; a field the CCM finds nothing to change for is none.
#[test]
fn the_class_is_the_highest_effect_and_a_field_without_effects_is_none() {
    let out = attributes(
        &[
            written("service.ports.web.name", json!("http"), json!("web")),
            written(
                &format!("service.annotations.{PREFIX}timeout-client-data-ms"),
                json!(null),
                json!("60000"),
            ),
        ],
        vec![
            predicted(
                Change::NewNodePort,
                "ports.web.node-port",
                json!([30000]),
                json!([UNKNOWN_PORT]),
                "pool tcp/http",
            ),
            predicted(
                Change::PortRenamed,
                "ports.web.pool",
                json!("tcp/http"),
                json!("tcp/web"),
                "pool tcp/http",
            ),
        ],
        "default/store",
    );
    let ports = &out[0];
    assert_eq!(ports.path, "ports.web.name");
    assert_eq!(
        (&ports.before, &ports.after),
        (&json!("http"), &json!("web"))
    );
    assert_eq!(ports.impact, Impact::PoolRecreate);
    assert_eq!(ports.downtime, Downtime::new(60, 120), "one disruption");
    assert!(
        ports.reason.contains("deletes the pool"),
        "{}",
        ports.reason
    );
    let effects: Vec<&str> = ports.effects.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(effects, ["ports.web.node-port", "ports.web.pool"]);
    assert_eq!(
        ports.effects[0].after,
        json!([{"unknown": "allocated by the apiserver"}])
    );
    // The timeout annotation changes, but the CCM finds nothing to change for it here.
    let timeout = &out[1];
    assert_eq!(timeout.path, "timeouts.client-data-ms");
    assert_eq!(timeout.impact, Impact::None);
    assert!(timeout.effects.is_empty());
    assert!(
        timeout.reason.contains("finds nothing to change"),
        "{}",
        timeout.reason
    );
}

/// A port's rows go to that port's attributes — the key the row names first — never to
/// another port's; with no key of their port, to the port list.
#[test]
fn a_ports_effects_go_to_that_ports_keys() {
    let out = attributes(
        &[
            written("service.ports.http.port", json!(80), json!(8080)),
            written("service.ports.web.name", json!("old"), json!("web")),
            written("service.ports.web.nodePort", json!(31000), json!(32000)),
        ],
        vec![
            predicted(
                Change::PortRenamed,
                "ports.web.pool",
                json!("tcp/old"),
                json!("tcp/web"),
                "pool tcp/old",
            ),
            predicted(
                Change::ListenerPort,
                "ports.http.listener",
                json!("tcp/80"),
                json!("tcp/8080"),
                "listener tcp/80",
            ),
            predicted(
                Change::NodePort,
                "ports.web.node-port",
                json!([31000]),
                json!([32000]),
                "pool tcp/old",
            ),
        ],
        "default/store",
    );
    let paths =
        |i: usize| -> Vec<&str> { out[i].effects.iter().map(|e| e.path.as_str()).collect() };
    assert_eq!(out[0].path, "ports.http.port");
    assert_eq!(paths(0), ["ports.http.listener"]);
    assert_eq!(out[0].impact, Impact::Minimal);
    assert_eq!(paths(1), ["ports.web.pool"]);
    assert_eq!(out[1].impact, Impact::PoolRecreate);
    assert_eq!(out[2].path, "ports.web.node-port");
    assert!(out[2].effects.is_empty(), "folded into the field");
    assert_eq!(out[2].impact, Impact::Minimal);
    assert_eq!(out.len(), 3);
}

/// A node port's own key wins over the port list; an effect no Service field causes (a node
/// joined) stays an attribute of its own; an effect on the field's own path (the members'
/// node port, a VIP list cleared) is the field itself: its row is folded in, not listed again.
#[test]
fn effects_go_to_the_most_specific_cause_or_stand_alone() {
    let out = attributes(
        &[
            written("service.ports", json!(["a", "http"]), json!(["http", "a"])),
            written("service.ports.http.nodePort", json!(31080), json!(32000)),
            written(
                &format!("service.annotations.{PREFIX}vip-addresses"),
                json!("[{\"subnet\":\"s\"}]"),
                json!(null),
            ),
        ],
        vec![
            predicted(
                Change::NodePort,
                "ports.http.node-port",
                json!([31080]),
                json!([32000]),
                "members of pool tcp/http",
            ),
            predicted(
                Change::MembersChanged,
                "ports.http.members",
                json!(["a"]),
                json!(["a", "b"]),
                "members of pool tcp/http",
            ),
            predicted(
                Change::VipCleared,
                "vip-addresses",
                json!([{"subnet": "s"}]),
                json!([]),
                "load balancer",
            ),
        ],
        "default/store",
    );
    let paths: Vec<&str> = out.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "ports",
            "ports.http.node-port",
            "vip-addresses",
            "ports.http.members"
        ]
    );
    assert!(out[0].effects.is_empty());
    assert!(out[1].effects.is_empty(), "folded into the field");
    assert_eq!(out[1].impact, Impact::Minimal);
    assert!(out[1].reason.contains("member key"), "{}", out[1].reason);
    assert!(out[2].effects.is_empty(), "folded into the field");
    assert!(out[2].reason.contains("silently"), "{}", out[2].reason);
    assert_eq!(out[3].impact, Impact::Minimal);
}

#[test]
fn only_port_values_of_zero_are_unknown() {
    let marker = json!({"unknown": ALLOCATED});
    assert_eq!(known("ports.http.node-port", json!(0)), marker);
    assert_eq!(
        known("ports.http.node-port", json!([0, 31000])),
        json!([marker, 31000])
    );
    assert_eq!(
        known("ports.http.monitor-port", json!([30000])),
        json!([30000])
    );
    assert_eq!(known("health-monitor.delay-s", json!(0)), json!(0));
}
