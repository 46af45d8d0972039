//! One load balancer's state in the shape the CCM's `lbState` compares: the load balancer,
//! its pools, and per pool the members, monitors and listeners. Desired and actual use the
//! same specs; the actual ones carry the cloud's uuid and href besides.

use serde_json::{json, Value};

use super::objects::SubnetRef;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vip {
    /// Desired VIPs may leave the address to the cloud.
    pub address: Option<String>,
    pub subnet: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbSpec {
    pub name: String,
    pub flavor: String,
    pub zone: String,
    pub vip_addresses: Vec<Vip>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSpec {
    pub name: String,
    pub algorithm: String,
    pub protocol: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSpec {
    pub name: String,
    pub enabled: bool,
    pub protocol_port: u16,
    pub monitor_port: u16,
    pub address: String,
    pub subnet: SubnetRef,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSpec {
    pub expected_codes: Vec<String>,
    pub method: String,
    pub url_path: String,
    pub version: String,
    pub host: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorSpec {
    pub kind: String,
    pub delay_s: i64,
    pub timeout_s: i64,
    pub up_threshold: i64,
    pub down_threshold: i64,
    pub http: Option<HttpSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerSpec {
    pub name: String,
    pub protocol: String,
    pub protocol_port: u16,
    pub allowed_cidrs: Vec<String>,
    pub timeout_client_data_ms: i64,
    pub timeout_member_connect_ms: i64,
    pub timeout_member_data_ms: i64,
}

/// What one Service port asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredPool {
    pub pool: PoolSpec,
    pub members: Vec<MemberSpec>,
    pub monitor: MonitorSpec,
    pub listener: ListenerSpec,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desired {
    pub lb: LbSpec,
    pub pools: Vec<DesiredPool>,
    pub floating_ips: Vec<String>,
}

/// A cloud object: where it is and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<T> {
    pub uuid: String,
    pub href: String,
    pub spec: T,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActualLb {
    pub uuid: String,
    pub href: String,
    pub status: String,
    pub spec: LbSpec,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActualPool {
    pub found: Found<PoolSpec>,
    pub members: Vec<Found<MemberSpec>>,
    pub monitors: Vec<Found<MonitorSpec>>,
    pub listeners: Vec<Found<ListenerSpec>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actual {
    pub lb: Option<ActualLb>,
    pub pools: Vec<ActualPool>,
    pub floating_ips: Vec<String>,
}

/// Comparison keys of `nextLbActions` (reconcile.go). The member and listener keys are the
/// whole tuple because the CCM passes the name as the format string of `fmt.Sprintf` and Go
/// appends every other argument as `%!(EXTRA …)`.
pub fn pool_key(pool: &PoolSpec) -> String {
    format!("{}{}{}", pool.name, pool.algorithm, pool.protocol)
}

pub fn member_key(m: &MemberSpec) -> String {
    format!(
        "{}|{}|{}|{}|{}|{}|{}|{}",
        m.name,
        m.enabled,
        m.monitor_port,
        m.protocol_port,
        m.address,
        m.subnet.href,
        m.subnet.cidr,
        m.subnet.uuid
    )
}

pub fn listener_key(l: &ListenerSpec) -> String {
    format!("{}|{}|{}", l.name, l.protocol, l.protocol_port)
}

/// An http version of "" counts as 1.1, as a monitor without HTTP settings does.
pub fn monitor_key(m: &MonitorSpec) -> String {
    let version = m
        .http
        .as_ref()
        .map(|h| h.version.as_str())
        .filter(|v| !v.is_empty())
        .unwrap_or("1.1");
    format!("{}|{version}", m.kind)
}

/// Request bodies of `pkg/internal/actions`.
pub fn create_lb_body(lb: &LbSpec) -> Value {
    let vips: Vec<Value> = lb
        .vip_addresses
        .iter()
        .map(|vip| match &vip.address {
            Some(address) => json!({"subnet": vip.subnet, "address": address}),
            None => json!({"subnet": vip.subnet}),
        })
        .collect();
    let mut body = json!({"name": lb.name, "flavor": lb.flavor, "zone": lb.zone});
    if !vips.is_empty() {
        body["vip_addresses"] = Value::Array(vips);
    }
    body
}

pub fn create_pool_body(lb_uuid: &str, pool: &PoolSpec) -> Value {
    json!({"name": pool.name, "load_balancer": lb_uuid, "algorithm": pool.algorithm, "protocol": pool.protocol})
}

pub fn create_member_body(m: &MemberSpec) -> Value {
    json!({
        "name": m.name,
        "enabled": m.enabled,
        "protocol_port": m.protocol_port,
        "monitor_port": m.monitor_port,
        "address": m.address,
        "subnet": m.subnet.uuid,
    })
}

pub fn create_listener_body(pool_uuid: &str, l: &ListenerSpec) -> Value {
    json!({
        "name": l.name,
        "pool": pool_uuid,
        "protocol": l.protocol,
        "protocol_port": l.protocol_port,
        "allowed_cidrs": l.allowed_cidrs,
        "timeout_client_data_ms": l.timeout_client_data_ms,
        "timeout_member_connect_ms": l.timeout_member_connect_ms,
        "timeout_member_data_ms": l.timeout_member_data_ms,
    })
}

/// The real action sends an empty `http` object for non-http types; the simulated cloud
/// refuses that, so the object is only sent where it means something.
pub fn create_monitor_body(pool_uuid: &str, m: &MonitorSpec) -> Value {
    let mut body = json!({
        "pool": pool_uuid,
        "type": m.kind,
        "delay_s": m.delay_s,
        "timeout_s": m.timeout_s,
        "up_threshold": m.up_threshold,
        "down_threshold": m.down_threshold,
    });
    if let Some(http) = &m.http {
        body["http"] = json!({
            "expected_codes": http.expected_codes,
            "method": http.method,
            "url_path": http.url_path,
            "version": http.version,
            "host": http.host,
        });
    }
    body
}
