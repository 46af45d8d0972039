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
    assert_eq!(
        config_key("service.ports.http.nodePort"),
        "ports.http.node-port"
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

#[test]
fn the_class_is_the_highest_effect_and_a_field_without_effects_is_none() {
    let out = attributes(
        &[
            written(
                "service.ports",
                json!(["http:80/TCP→80"]),
                json!(["web:80/TCP→80"]),
            ),
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
                "members of pool tcp/web",
            ),
            predicted(
                Change::PortRenamed,
                "ports.web.name",
                json!("http"),
                json!("web"),
                "pool tcp/http",
            ),
        ],
        "default/store",
    );
    let ports = &out[0];
    assert_eq!(ports.path, "ports");
    assert_eq!(ports.impact, Impact::PoolRecreate);
    assert!(
        ports.reason.contains("deletes the pool"),
        "{}",
        ports.reason
    );
    assert_eq!(ports.effects.len(), 2);
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

/// A node port's own key wins over the port list; an effect no Service field causes (a node
/// joined) stays an attribute of its own; an effect on the field's own path (the members'
/// node port, a VIP list cleared) is the field itself: its row is folded in, not listed again.
#[test]
fn effects_go_to_the_most_specific_cause_or_stand_alone() {
    let out = attributes(
        &[
            written("service.ports", json!(["a"]), json!(["b"])),
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
