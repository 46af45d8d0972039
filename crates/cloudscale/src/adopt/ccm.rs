//! A load balancer the cloudscale CCM made for a Service, read back into the controller-mode
//! spec whose Service is the live one: the ports and traffic policy from the Service, each
//! `k8s.cloudscale.ch/loadbalancer-…` annotation skyplan writes turned back into its config key
//! (the inverse of `ccm::annotations`), the zone from the load balancer. The name is the
//! annotation's, else the CCM's own (`k8s-service-<uid>`), which a Service without the
//! annotation is planned as having. Whether the Service then reads exactly as skyplan would
//! write it is `check.rs`'s question.

use serde::Deserialize;

use super::super::ccm::annotations::{NAME, PREFIX};
use super::super::ccm::predict::default_name;
use super::super::objects::LbObjects;
use super::{canonical_cidr, canonical_ip, canonical_uuid, Refusal, ServiceAt};
use crate::spec::{
    Algorithm, CloudscaleLoadBalancerSpec, HttpCheck, HttpVersion, IpMode, ListenerProtocol,
    MonitorType, PoolProtocol, PortProtocol, PortSpec, TrafficPolicy, VipAddress,
};
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

pub(super) fn spec(live: &LbObjects, at: ServiceAt) -> Result<CloudscaleLoadBalancerSpec, Refusal> {
    let service = at.service;
    let read = Annotations { at };
    let name = match at.annotation(NAME) {
        Some(name) => name.to_string(),
        None => default_name(service).unwrap_or_else(|| live.lb.name.clone()),
    };
    let mut spec = CloudscaleLoadBalancerSpec::with_defaults(name, &live.lb.zone);
    let service_spec = service.spec.clone().unwrap_or_default();
    spec.traffic_policy = match service_spec.external_traffic_policy.as_deref() {
        None => TrafficPolicy::Cluster,
        Some(policy) => TrafficPolicy::parse(policy).ok_or_else(|| {
            Refusal::new(
                "traffic-policy",
                format!("externalTrafficPolicy `{policy}` is not one skyplan's config can say"),
            )
        })?,
    };
    spec.ports = ports(&service_spec.ports.unwrap_or_default())?;
    let metadata = &service.metadata;
    spec.binding = Some(ServiceBinding {
        cluster: at.cluster.clone(),
        namespace: metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        name: metadata.name.clone().unwrap_or_default(),
        mode: LbMode::Ccm,
    });
    let local = spec.traffic_policy == TrafficPolicy::Local;
    if let Some(flavor) = read.text("flavor") {
        spec.flavor = flavor.to_string();
    }
    spec.vip_addresses = read
        .json::<Vec<VipAddress>>("vip-addresses")?
        .unwrap_or_default();
    spec.floating_ips = read.json("floating-ips")?.unwrap_or_default();
    spec.algorithm = read
        .choice("pool-algorithm", Algorithm::parse)?
        .unwrap_or(spec.algorithm);
    spec.pool_protocol =
        (read.choice("pool-protocol", PoolProtocol::parse)?).unwrap_or(spec.pool_protocol);
    spec.force_hostname = read.text("force-hostname").map(String::from);
    spec.ip_mode = read
        .choice("ip-mode", IpMode::parse)?
        .unwrap_or(spec.ip_mode);
    let monitor = &mut spec.health_monitor;
    let numbers = [
        ("health-monitor-delay-s", &mut monitor.delay_s),
        ("health-monitor-timeout-s", &mut monitor.timeout_s),
        ("health-monitor-up-threshold", &mut monitor.up_threshold),
        ("health-monitor-down-threshold", &mut monitor.down_threshold),
    ];
    for (suffix, value) in numbers {
        if let Some(number) = read.number(suffix)? {
            *value = number;
        }
    }
    let default_kind = if local {
        MonitorType::Http
    } else {
        monitor.kind
    };
    monitor.kind =
        (read.choice("health-monitor-type", MonitorType::parse)?).unwrap_or(default_kind);
    let base = if local {
        HttpCheck::livez()
    } else {
        HttpCheck::default()
    };
    let http = read.json::<RawHttp>("health-monitor-http")?;
    monitor.http = matches!(monitor.kind, MonitorType::Http | MonitorType::Https)
        .then(|| http_check(http, base))
        .transpose()?;
    spec.listener_protocol = (read.choice("listener-protocol", ListenerProtocol::parse)?)
        .unwrap_or(spec.listener_protocol);
    spec.allowed_cidrs = read.json("listener-allowed-cidrs")?.unwrap_or_default();
    let timeouts = &mut spec.timeouts;
    let numbers = [
        ("timeout-client-data-ms", &mut timeouts.client_data_ms),
        ("timeout-member-connect-ms", &mut timeouts.member_connect_ms),
        ("timeout-member-data-ms", &mut timeouts.member_data_ms),
    ];
    for (suffix, value) in numbers {
        if let Some(number) = read.number(suffix)? {
            *value = number;
        }
    }
    spec.allowed_subnets = read.json("listener-allowed-subnets")?.unwrap_or_default();
    spec.node_selector = read.text("node-selector").map(String::from);
    written_as_the_config_writes(&spec)?;
    Ok(spec)
}

/// The values the config reads in a canonical spelling (UUIDs, addresses, CIDRs) are spelled
/// so in the annotations: otherwise the config would ask for another spelling than the
/// Service has.
fn written_as_the_config_writes(spec: &CloudscaleLoadBalancerSpec) -> Result<(), Refusal> {
    let at = |suffix: &str| format!("service.annotations.{PREFIX}{suffix}");
    for vip in &spec.vip_addresses {
        canonical_uuid(&vip.subnet, &at("vip-addresses"))?;
        if let Some(address) = &vip.address {
            canonical_ip(address, &at("vip-addresses"))?;
        }
    }
    for network in &spec.floating_ips {
        canonical_cidr(network, &at("floating-ips"))?;
    }
    for cidr in &spec.allowed_cidrs {
        canonical_cidr(cidr, &at("listener-allowed-cidrs"))?;
    }
    for subnet in &spec.allowed_subnets {
        canonical_uuid(subnet, &at("listener-allowed-subnets"))?;
    }
    Ok(())
}

/// The Service's ports as `[[ports]]`: name, number and protocol; the node port stays the
/// apiserver's (kept by name when skyplan writes the Service).
fn ports(live: &[k8s_openapi::api::core::v1::ServicePort]) -> Result<Vec<PortSpec>, Refusal> {
    if live.is_empty() {
        return Err(Refusal::new(
            "ports",
            "the Service has no ports: a load balancer of the config has at least one",
        ));
    }
    let mut ports = Vec::new();
    for port in live {
        let name = port.name.clone().unwrap_or_default();
        let key = match name.is_empty() {
            true => port.port.to_string(),
            false => name.clone(),
        };
        let wire = port.protocol.as_deref().unwrap_or("TCP");
        let protocol = PortProtocol::parse(&wire.to_lowercase()).ok_or_else(|| {
            Refusal::new(
                format!("ports.{key}.protocol"),
                format!("the Service's port {key} is {wire}, which the CCM does not balance and the config cannot say"),
            )
        })?;
        let number = u16::try_from(port.port).map_err(|_| {
            Refusal::new(
                format!("ports.{key}.port"),
                format!("{} is not a port", port.port),
            )
        })?;
        ports.push(PortSpec {
            name,
            port: number,
            protocol,
            node_port: 0,
        });
    }
    Ok(ports)
}

/// The CCM's annotations of one Service, each parsed as the CCM reads it.
struct Annotations<'a> {
    at: ServiceAt<'a>,
}

impl Annotations<'_> {
    fn key(suffix: &str) -> String {
        format!("{PREFIX}{suffix}")
    }

    fn text(&self, suffix: &str) -> Option<&str> {
        self.at.annotation(&Self::key(suffix))
    }

    fn unreadable(&self, suffix: &str, value: &str, what: &str) -> Refusal {
        let key = Self::key(suffix);
        Refusal::new(
            format!("service.annotations.{key}"),
            format!(
                "`{value}` is not {what}: the CCM cannot read it, and the config cannot say it"
            ),
        )
    }

    fn choice<T>(&self, suffix: &str, parse: fn(&str) -> Option<T>) -> Result<Option<T>, Refusal> {
        let Some(text) = self.text(suffix) else {
            return Ok(None);
        };
        parse(text)
            .map(Some)
            .ok_or_else(|| self.unreadable(suffix, text, "a value skyplan knows"))
    }

    fn number(&self, suffix: &str) -> Result<Option<u32>, Refusal> {
        let Some(text) = self.text(suffix) else {
            return Ok(None);
        };
        text.parse()
            .map(Some)
            .map_err(|_| self.unreadable(suffix, text, "a whole number"))
    }

    fn json<T: serde::de::DeserializeOwned>(&self, suffix: &str) -> Result<Option<T>, Refusal> {
        let Some(text) = self.text(suffix) else {
            return Ok(None);
        };
        serde_json::from_str(text)
            .map(Some)
            .map_err(|_| self.unreadable(suffix, text, "the JSON the CCM reads there"))
    }
}

/// `health-monitor-http`: the CCM's JSON, each field optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    expected_codes: Option<Vec<String>>,
    method: Option<String>,
    url_path: Option<String>,
    version: Option<String>,
    host: Option<String>,
}

fn http_check(raw: Option<RawHttp>, base: HttpCheck) -> Result<HttpCheck, Refusal> {
    let Some(raw) = raw else { return Ok(base) };
    let version = match raw.version.as_deref() {
        None => base.version,
        Some(version) => HttpVersion::parse(version).ok_or_else(|| {
            Refusal::new(
                "health-monitor.http.version",
                format!("HTTP version `{version}` is not one skyplan's config can say"),
            )
        })?,
    };
    Ok(HttpCheck {
        method: raw.method.unwrap_or(base.method),
        url_path: raw.url_path.unwrap_or(base.url_path),
        expected_codes: raw.expected_codes.unwrap_or(base.expected_codes),
        version,
        host: raw.host.filter(|h| !h.is_empty()),
    })
}
