//! The cloudscale CCM's Service annotations (`k8s.cloudscale.ch/loadbalancer-*`) with the
//! defaults of its `serviceInfo.annotation` (research §1.2). A value present but unparsable is
//! an error that aborts the Service's reconcile, as `annotationInt`, `annotationList` and
//! `annotationMarshal` do; a missing annotation takes its default.

use serde::Deserialize;

use super::objects::Service;
use super::selector::Selector;

pub const PREFIX: &str = "k8s.cloudscale.ch/loadbalancer-";
pub const UUID: &str = "k8s.cloudscale.ch/loadbalancer-uuid";
pub const CONFIG_VERSION: &str = "k8s.cloudscale.ch/loadbalancer-config-version";
pub const ZONE: &str = "k8s.cloudscale.ch/loadbalancer-zone";
pub const FLOATING_IPS: &str = "k8s.cloudscale.ch/loadbalancer-floating-ips";

/// A requested VIP: `{"subnet": uuid, "address"?: ip}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct VipRequest {
    pub subnet: String,
    #[serde(default)]
    pub address: Option<String>,
}

/// The `health-monitor-http` annotation, defaults filled as `healthMonitorForPort` fills them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default)]
pub struct HttpOptions {
    pub expected_codes: Vec<String>,
    pub method: String,
    pub url_path: String,
    pub version: String,
    pub host: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LbConfig {
    pub uuid: String,
    pub name: String,
    pub flavor: String,
    pub zone: String,
    pub vip_addresses: Vec<VipRequest>,
    pub floating_ips: Vec<String>,
    pub pool_algorithm: String,
    pub pool_protocol: String,
    pub force_hostname: String,
    pub ip_mode: String,
    pub monitor_delay_s: i64,
    pub monitor_timeout_s: i64,
    pub monitor_up_threshold: i64,
    pub monitor_down_threshold: i64,
    pub monitor_type: String,
    /// `None` when the annotation is absent or `{}` (the CCM's "unset").
    pub monitor_http: Option<HttpOptions>,
    pub listener_protocol: String,
    pub allowed_cidrs: Vec<String>,
    pub timeout_client_data_ms: i64,
    pub timeout_member_connect_ms: i64,
    pub timeout_member_data_ms: i64,
    pub allowed_subnets: Vec<String>,
    pub node_selector: Selector,
}

impl LbConfig {
    pub fn from_service(service: &Service) -> Result<LbConfig, String> {
        let get = |suffix: &str, default: &str| -> String {
            service
                .metadata
                .annotations
                .get(&format!("{PREFIX}{suffix}"))
                .cloned()
                .unwrap_or_else(|| default.to_owned())
        };
        let int = |suffix: &str, default: &str| annotation_int(suffix, &get(suffix, default));
        let list = |suffix: &str| annotation_list(suffix, &get(suffix, "[]"));
        let uid = service.metadata.uid.clone().unwrap_or_default();
        let ip_mode = get("ip-mode", "Proxy");
        if ip_mode != "Proxy" && ip_mode != "VIP" {
            return Err(format!(
                "unsupported {PREFIX}ip-mode {ip_mode:?}: use Proxy or VIP"
            ));
        }
        let vip_text = get("vip-addresses", "[]");
        let vip_addresses = serde_json::from_str(&vip_text)
            .map_err(|e| format!("failed to parse {PREFIX}vip-addresses: {e}"))?;
        let floating_ips = annotation_list("floating-ips", &get("floating-ips", "[]"))
            .map_err(|_| format!("could not parse {FLOATING_IPS}"))?;
        Ok(LbConfig {
            uuid: get("uuid", ""),
            name: get("name", &format!("k8s-service-{uid}")),
            flavor: get("flavor", "lb-standard"),
            zone: get("zone", ""),
            vip_addresses,
            floating_ips,
            pool_algorithm: get("pool-algorithm", "round_robin"),
            pool_protocol: get("pool-protocol", "tcp"),
            force_hostname: get("force-hostname", ""),
            ip_mode,
            monitor_delay_s: int("health-monitor-delay-s", "2")?,
            monitor_timeout_s: int("health-monitor-timeout-s", "1")?,
            monitor_up_threshold: int("health-monitor-up-threshold", "2")?,
            monitor_down_threshold: int("health-monitor-down-threshold", "3")?,
            monitor_type: get("health-monitor-type", "tcp"),
            monitor_http: http_options(&get("health-monitor-http", "{}"))?,
            listener_protocol: get("listener-protocol", "tcp"),
            allowed_cidrs: list("listener-allowed-cidrs")?,
            timeout_client_data_ms: int("timeout-client-data-ms", "50000")?,
            timeout_member_connect_ms: int("timeout-member-connect-ms", "5000")?,
            timeout_member_data_ms: int("timeout-member-data-ms", "50000")?,
            allowed_subnets: list("listener-allowed-subnets")?,
            node_selector: Selector::parse(&get("node-selector", ""))?,
        })
    }
}

/// `strconv.Atoi`: decimal, optional sign, nothing else.
fn annotation_int(suffix: &str, value: &str) -> Result<i64, String> {
    value
        .parse::<i64>()
        .map_err(|_| format!("cannot convert {value:?} to int ({PREFIX}{suffix})"))
}

/// A JSON string list; blank means empty.
fn annotation_list(suffix: &str, value: &str) -> Result<Vec<String>, String> {
    if value.trim().is_empty() {
        return Ok(vec![]);
    }
    serde_json::from_str(value)
        .map_err(|e| format!("not a valid JSON string list: {value} ({PREFIX}{suffix}): {e}"))
}

/// `"{}"` (the default) means unset; anything else is decoded and its blanks filled.
fn http_options(value: &str) -> Result<Option<HttpOptions>, String> {
    if value == "{}" {
        return Ok(None);
    }
    let mut http: HttpOptions = serde_json::from_str(value)
        .map_err(|e| format!("invalid json in {PREFIX}health-monitor-http: {e}"))?;
    if http.method.is_empty() {
        http.method = "GET".into();
    }
    if http.url_path.is_empty() {
        http.url_path = "/".into();
    }
    if http.expected_codes.is_empty() {
        http.expected_codes = vec!["200".into()];
    }
    if http.version.is_empty() {
        http.version = "1.1".into();
    }
    Ok(Some(http))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(annotations: &[(&str, &str)]) -> Service {
        let mut service = Service::default();
        service.metadata.uid = Some("u-1".into());
        for (k, v) in annotations {
            service
                .metadata
                .annotations
                .insert(format!("{PREFIX}{k}"), v.to_string());
        }
        service
    }

    #[test]
    fn defaults_are_the_ccms() {
        let config = LbConfig::from_service(&service(&[])).unwrap();
        assert_eq!(config.name, "k8s-service-u-1");
        assert_eq!(config.flavor, "lb-standard");
        assert_eq!(config.pool_algorithm, "round_robin");
        assert_eq!(config.monitor_type, "tcp");
        assert_eq!((config.monitor_delay_s, config.monitor_timeout_s), (2, 1));
        assert_eq!(
            (config.monitor_up_threshold, config.monitor_down_threshold),
            (2, 3)
        );
        assert_eq!(config.timeout_member_connect_ms, 5000);
        assert_eq!(config.monitor_http, None);
        assert!(config.allowed_cidrs.is_empty());
    }

    #[test]
    fn http_options_get_their_defaults_filled() {
        let config =
            LbConfig::from_service(&service(&[("health-monitor-http", r#"{"url_path":"/h"}"#)]))
                .unwrap();
        let http = config.monitor_http.unwrap();
        assert_eq!(http.url_path, "/h");
        assert_eq!(http.method, "GET");
        assert_eq!(http.version, "1.1");
        assert_eq!(http.expected_codes, vec!["200"]);
    }

    #[test]
    fn unparsable_values_abort() {
        for (key, value) in [
            ("health-monitor-delay-s", "2s"),
            ("listener-allowed-cidrs", "10.0.0.0/8"),
            ("vip-addresses", "nope"),
            ("ip-mode", "Direct"),
            ("node-selector", "a in b"),
        ] {
            assert!(
                LbConfig::from_service(&service(&[(key, value)])).is_err(),
                "{key}={value}"
            );
        }
    }

    #[test]
    fn a_blank_list_is_empty() {
        let config = LbConfig::from_service(&service(&[("listener-allowed-cidrs", " ")])).unwrap();
        assert!(config.allowed_cidrs.is_empty());
    }
}
