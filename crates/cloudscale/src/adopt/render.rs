//! A spec as the `[load-balancer.NAME]` table a user would write for it: only the keys whose
//! value differs from what the config resolves without them (the CCM's defaults, the table key
//! as the name, the `Local` traffic policy's http check of `/livez`), in the order the
//! contract's example lists them, small tables inline as the examples write them, then one
//! `[[load-balancer.NAME.ports]]` per port.

use std::fmt::Write;

use crate::spec::{
    CloudscaleLoadBalancerSpec, HealthMonitorSpec, HttpCheck, MonitorType, Timeouts, TrafficPolicy,
};
use skyplan_core::model::Address;
use skyplan_kubernetes::spec::LbMode;

/// The tables of `spec` adopted as `address`.
pub(super) fn table(address: &Address, spec: &CloudscaleLoadBalancerSpec) -> String {
    let defaults = CloudscaleLoadBalancerSpec::with_defaults(&address.name, &spec.zone);
    let header = format!("load-balancer.{}", key(&address.name));
    let mut lines = Lines::default();
    lines.put("provider", string(crate::diff::PROVIDER));
    if spec.name != defaults.name {
        lines.put("name", string(&spec.name));
    }
    if spec.flavor != defaults.flavor {
        lines.put("flavor", string(&spec.flavor));
    }
    lines.put("zone", string(&spec.zone));
    if let Some(binding) = &spec.binding {
        lines.put("cluster", string(&binding.cluster.name));
        lines.put("service", string(&binding.service_ref()));
        if binding.mode != LbMode::Direct {
            lines.put("mode", string(binding.mode.as_str()));
        }
    }
    if spec.traffic_policy != defaults.traffic_policy {
        lines.put("traffic-policy", string(spec.traffic_policy.as_str()));
    }
    if let Some(port) = spec.health_check_node_port {
        lines.put("health-check-node-port", port.to_string());
    }
    if !spec.vip_addresses.is_empty() {
        let vips = spec.vip_addresses.iter().map(|vip| {
            let mut fields = vec![("subnet", string(&vip.subnet))];
            fields.extend(vip.address.as_deref().map(|a| ("address", string(a))));
            inline(&fields)
        });
        lines.put("vip-addresses", array(vips));
    }
    if !spec.floating_ips.is_empty() {
        lines.put("floating-ips", strings(&spec.floating_ips));
    }
    if spec.algorithm != defaults.algorithm {
        lines.put("algorithm", string(spec.algorithm.as_str()));
    }
    if spec.pool_protocol != defaults.pool_protocol {
        lines.put("pool-protocol", string(spec.pool_protocol.as_str()));
    }
    if spec.listener_protocol != defaults.listener_protocol {
        lines.put("listener-protocol", string(spec.listener_protocol.as_str()));
    }
    if !spec.allowed_cidrs.is_empty() {
        lines.put("allowed-cidrs", strings(&spec.allowed_cidrs));
    }
    if !spec.allowed_subnets.is_empty() {
        lines.put("allowed-subnets", strings(&spec.allowed_subnets));
    }
    let timeouts = timeouts(&spec.timeouts);
    if !timeouts.is_empty() {
        lines.put("timeouts", inline(&timeouts));
    }
    let monitor = health_monitor(&spec.health_monitor, spec.traffic_policy);
    if !monitor.is_empty() {
        lines.put("health-monitor", inline(&monitor));
    }
    if let Some(hostname) = &spec.force_hostname {
        lines.put("force-hostname", string(hostname));
    }
    if spec.ip_mode != defaults.ip_mode {
        lines.put("ip-mode", string(spec.ip_mode.as_str()));
    }
    if let Some(selector) = &spec.node_selector {
        lines.put("node-selector", string(selector));
    }
    if !spec.members.is_empty() {
        lines.put("members", strings(&spec.members));
    }
    let mut text = format!("[{header}]\n{}", lines.0);
    for port in &spec.ports {
        let mut lines = Lines::default();
        if !port.name.is_empty() {
            lines.put("name", string(&port.name));
        }
        lines.put("port", port.port.to_string());
        if port.protocol != crate::spec::PortProtocol::Tcp {
            lines.put("protocol", string(port.protocol.as_str()));
        }
        if port.node_port != 0 {
            lines.put("node-port", port.node_port.to_string());
        }
        let _ = write!(text, "\n[[{header}.ports]]\n{}", lines.0);
    }
    text
}

#[derive(Default)]
struct Lines(String);

impl Lines {
    fn put(&mut self, key: &str, value: String) {
        let _ = writeln!(self.0, "{key} = {value}");
    }
}

fn timeouts(timeouts: &Timeouts) -> Vec<(&'static str, String)> {
    let defaults = Timeouts::default();
    let numbers = [
        (
            "client-data-ms",
            timeouts.client_data_ms,
            defaults.client_data_ms,
        ),
        (
            "member-connect-ms",
            timeouts.member_connect_ms,
            defaults.member_connect_ms,
        ),
        (
            "member-data-ms",
            timeouts.member_data_ms,
            defaults.member_data_ms,
        ),
    ];
    numbers
        .into_iter()
        .filter(|(_, value, default)| value != default)
        .map(|(key, value, _)| (key, value.to_string()))
        .collect()
}

/// The monitor's keys that differ from what the config resolves for the traffic policy.
fn health_monitor(
    monitor: &HealthMonitorSpec,
    policy: TrafficPolicy,
) -> Vec<(&'static str, String)> {
    let local = policy == TrafficPolicy::Local;
    let defaults = HealthMonitorSpec::default();
    let default_kind = if local {
        MonitorType::Http
    } else {
        defaults.kind
    };
    let mut fields = Vec::new();
    if monitor.kind != default_kind {
        fields.push(("type", string(monitor.kind.as_str())));
    }
    let numbers = [
        ("delay-s", monitor.delay_s, defaults.delay_s),
        ("timeout-s", monitor.timeout_s, defaults.timeout_s),
        ("up-threshold", monitor.up_threshold, defaults.up_threshold),
        (
            "down-threshold",
            monitor.down_threshold,
            defaults.down_threshold,
        ),
    ];
    for (key, value, default) in numbers {
        if value != default {
            fields.push((key, value.to_string()));
        }
    }
    if let Some(http) = &monitor.http {
        let base = if local {
            HttpCheck::livez()
        } else {
            HttpCheck::default()
        };
        let mut check = Vec::new();
        if http.method != base.method {
            check.push(("method", string(&http.method)));
        }
        if http.url_path != base.url_path {
            check.push(("url-path", string(&http.url_path)));
        }
        if http.expected_codes != base.expected_codes {
            check.push(("expected-codes", strings(&http.expected_codes)));
        }
        if http.version != base.version {
            check.push(("version", string(http.version.as_str())));
        }
        if let Some(host) = &http.host {
            check.push(("host", string(host)));
        }
        if !check.is_empty() {
            fields.push(("http", inline(&check)));
        }
    }
    fields
}

/// A TOML basic string.
fn string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

fn strings(texts: &[String]) -> String {
    array(texts.iter().map(|t| string(t)))
}

fn array(values: impl Iterator<Item = String>) -> String {
    format!("[{}]", values.collect::<Vec<_>>().join(", "))
}

fn inline(fields: &[(&str, String)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{{ {} }}", fields.join(", "))
}

/// A table key: bare where TOML allows it, quoted otherwise.
fn key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match bare {
        true => name.to_string(),
        false => string(name),
    }
}
