//! The cloudscale CCM's Service annotations (`k8s.cloudscale.ch/loadbalancer-…`) derived from a
//! spec. skyplan writes only values that differ from the CCM's defaults and removes a managed
//! annotation whose value went back to the default, so the Service says exactly what the
//! config changes and a default the CCM applies stays the CCM's. Integers are decimal strings,
//! lists JSON arrays (impact.md). The name is always written: the config's default name (the
//! table key) is not the CCM's (`k8s-service-<uid>`). uuid, config-version and zone are the
//! CCM's own: never written, kept when patching.

use std::collections::BTreeMap;

use serde_json::json;

use crate::spec::{
    CloudscaleLoadBalancerSpec, HealthMonitorSpec, HttpCheck, MonitorType, Timeouts, TrafficPolicy,
};

pub const PREFIX: &str = "k8s.cloudscale.ch/loadbalancer-";

/// Written by the CCM; skyplan reads them and never writes them.
pub const UUID: &str = "k8s.cloudscale.ch/loadbalancer-uuid";
pub const NAME: &str = "k8s.cloudscale.ch/loadbalancer-name";
pub const CCM_OWNED: [&str; 3] = [
    UUID,
    "k8s.cloudscale.ch/loadbalancer-config-version",
    "k8s.cloudscale.ch/loadbalancer-zone",
];

/// Every annotation skyplan manages, by suffix.
pub const MANAGED: [&str; 21] = [
    "name",
    "flavor",
    "vip-addresses",
    "floating-ips",
    "pool-algorithm",
    "pool-protocol",
    "force-hostname",
    "ip-mode",
    "health-monitor-delay-s",
    "health-monitor-timeout-s",
    "health-monitor-up-threshold",
    "health-monitor-down-threshold",
    "health-monitor-type",
    "health-monitor-http",
    "listener-protocol",
    "listener-allowed-cidrs",
    "timeout-client-data-ms",
    "timeout-member-connect-ms",
    "timeout-member-data-ms",
    "listener-allowed-subnets",
    "node-selector",
];

/// The managed annotations and their values; `None` removes one (its value is the default).
pub fn desired_annotations(spec: &CloudscaleLoadBalancerSpec) -> BTreeMap<String, Option<String>> {
    let defaults = CloudscaleLoadBalancerSpec::with_defaults(&spec.name, &spec.zone);
    let mut out = BTreeMap::new();
    let mut put = |suffix: &str, value: Option<String>| {
        out.insert(format!("{PREFIX}{suffix}"), value);
    };
    let unless_default = |value: String, default: String| (value != default).then_some(value);
    put("name", Some(spec.name.clone()));
    put(
        "flavor",
        unless_default(spec.flavor.clone(), defaults.flavor),
    );
    put("vip-addresses", list(&spec.vip_addresses));
    put("floating-ips", list(&spec.floating_ips));
    put(
        "pool-algorithm",
        unless_default(spec.algorithm.to_string(), defaults.algorithm.to_string()),
    );
    put(
        "pool-protocol",
        unless_default(
            spec.pool_protocol.to_string(),
            defaults.pool_protocol.to_string(),
        ),
    );
    put("force-hostname", spec.force_hostname.clone());
    put(
        "ip-mode",
        unless_default(spec.ip_mode.to_string(), defaults.ip_mode.to_string()),
    );
    monitor(&spec.health_monitor, spec.traffic_policy, &mut put);
    put(
        "listener-protocol",
        unless_default(
            spec.listener_protocol.to_string(),
            defaults.listener_protocol.to_string(),
        ),
    );
    put("listener-allowed-cidrs", list(&spec.allowed_cidrs));
    timeouts(&spec.timeouts, &mut put);
    put("listener-allowed-subnets", list(&spec.allowed_subnets));
    put(
        "node-selector",
        spec.node_selector.clone().filter(|s| !s.is_empty()),
    );
    out
}

fn list<T: serde::Serialize>(items: &[T]) -> Option<String> {
    (!items.is_empty()).then(|| serde_json::to_string(items).expect("plain data serializes"))
}

/// A number annotation is written only where it differs from the CCM's default.
fn non_default(value: u32, default: u32) -> Option<String> {
    (value != default).then(|| value.to_string())
}

fn monitor(
    hm: &HealthMonitorSpec,
    policy: TrafficPolicy,
    put: &mut impl FnMut(&str, Option<String>),
) {
    let defaults = HealthMonitorSpec::default();
    let number = non_default;
    put(
        "health-monitor-delay-s",
        number(hm.delay_s, defaults.delay_s),
    );
    put(
        "health-monitor-timeout-s",
        number(hm.timeout_s, defaults.timeout_s),
    );
    put(
        "health-monitor-up-threshold",
        number(hm.up_threshold, defaults.up_threshold),
    );
    put(
        "health-monitor-down-threshold",
        number(hm.down_threshold, defaults.down_threshold),
    );
    // With Local the CCM forces an http monitor of /livez itself: the type and the http check
    // are only written where they differ from what the CCM would choose.
    let local = policy == TrafficPolicy::Local;
    let default_kind = if local {
        MonitorType::Http
    } else {
        MonitorType::Tcp
    };
    put(
        "health-monitor-type",
        (hm.kind != default_kind).then(|| hm.kind.to_string()),
    );
    let default_http = if local {
        HttpCheck::livez()
    } else {
        HttpCheck::default()
    };
    let http = hm.http.as_ref().filter(|h| **h != default_http).map(|h| {
        json!({
            "expected_codes": h.expected_codes,
            "method": h.method,
            "url_path": h.url_path,
            "version": h.version.as_str(),
            "host": h.host,
        })
        .to_string()
    });
    put("health-monitor-http", http);
}

fn timeouts(t: &Timeouts, put: &mut impl FnMut(&str, Option<String>)) {
    let d = Timeouts::default();
    let number = non_default;
    put(
        "timeout-client-data-ms",
        number(t.client_data_ms, d.client_data_ms),
    );
    put(
        "timeout-member-connect-ms",
        number(t.member_connect_ms, d.member_connect_ms),
    );
    put(
        "timeout-member-data-ms",
        number(t.member_data_ms, d.member_data_ms),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Algorithm, VipAddress};

    fn value<'a>(map: &'a BTreeMap<String, Option<String>>, suffix: &str) -> Option<&'a str> {
        map[&format!("{PREFIX}{suffix}")].as_deref()
    }

    #[test]
    fn only_non_default_values_are_written_and_defaults_removed() {
        let spec = CloudscaleLoadBalancerSpec::with_defaults("shop", "lpg1");
        let map = desired_annotations(&spec);
        assert_eq!(value(&map, "name"), Some("shop"));
        assert_eq!(value(&map, "flavor"), None);
        assert_eq!(value(&map, "pool-algorithm"), None);
        assert_eq!(value(&map, "health-monitor-type"), None);
        assert!(map.keys().all(|k| !CCM_OWNED.contains(&k.as_str())));
        let managed: Vec<String> = MANAGED.iter().map(|s| format!("{PREFIX}{s}")).collect();
        assert_eq!(map.keys().cloned().collect::<Vec<_>>().len(), managed.len());
        assert!(map.keys().all(|k| managed.contains(k)));
    }

    #[test]
    fn integers_are_decimal_strings_and_lists_json() {
        let mut spec = CloudscaleLoadBalancerSpec::with_defaults("shop", "lpg1");
        spec.algorithm = Algorithm::SourceIp;
        spec.health_monitor.delay_s = 5;
        spec.allowed_cidrs = vec!["10.0.0.0/8".into()];
        spec.vip_addresses = vec![VipAddress {
            subnet: "s".into(),
            address: Some("10.0.0.5".into()),
        }];
        let map = desired_annotations(&spec);
        assert_eq!(value(&map, "pool-algorithm"), Some("source_ip"));
        assert_eq!(value(&map, "health-monitor-delay-s"), Some("5"));
        assert_eq!(
            value(&map, "listener-allowed-cidrs"),
            Some("[\"10.0.0.0/8\"]")
        );
        assert_eq!(
            value(&map, "vip-addresses"),
            Some("[{\"subnet\":\"s\",\"address\":\"10.0.0.5\"}]")
        );
    }

    #[test]
    fn local_policy_leaves_the_livez_check_to_the_ccm() {
        let mut spec = CloudscaleLoadBalancerSpec::with_defaults("shop", "lpg1");
        spec.traffic_policy = TrafficPolicy::Local;
        spec.health_monitor.kind = MonitorType::Http;
        spec.health_monitor.http = Some(HttpCheck::livez());
        let map = desired_annotations(&spec);
        assert_eq!(value(&map, "health-monitor-type"), None);
        assert_eq!(value(&map, "health-monitor-http"), None);
    }
}
