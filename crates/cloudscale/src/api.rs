//! The cloudscale API v1 wire format. Responses name related objects with nested references
//! (`{"href", "uuid", "name"}`), requests with plain UUIDs and slugs; serde ignores the response
//! fields skyplan does not use (href, created_at, monitor_status, …). Responses convert into the
//! plain values of `objects`, requests borrow from them.

use serde::{Deserialize, Serialize};

use super::objects::{
    FloatingIpObject, HttpObject, LbObject, ListenerObject, MemberObject, MonitorObject,
    PoolObject, SubnetObject, Tags,
};
use crate::spec::VipAddress;

/// A nested reference to another object; only its UUID matters to skyplan.
#[derive(Debug, Clone, Deserialize)]
pub struct Ref {
    pub uuid: String,
}

/// A nested reference to a flavor, zone or region.
#[derive(Debug, Clone, Deserialize)]
pub struct SlugRef {
    pub slug: String,
}

/// `GET /regions`: each region with its zones.
#[derive(Debug, Clone, Deserialize)]
pub struct Region {
    pub zones: Vec<SlugRef>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LoadBalancer {
    pub uuid: String,
    pub name: String,
    pub flavor: SlugRef,
    pub zone: SlugRef,
    pub status: String,
    pub vip_addresses: Vec<VipAddressResponse>,
    #[serde(default)]
    pub tags: Tags,
}

#[derive(Debug, Clone, Deserialize)]
pub struct VipAddressResponse {
    pub address: String,
    pub subnet: Ref,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Pool {
    pub uuid: String,
    pub name: String,
    pub load_balancer: Ref,
    pub algorithm: String,
    pub protocol: String,
    #[serde(default)]
    pub tags: Tags,
    /// Orders pools that share a name, so the same one keeps the plain name on every refresh.
    #[serde(default)]
    pub created_at: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Member {
    pub uuid: String,
    pub name: String,
    pub enabled: bool,
    pub protocol_port: u16,
    pub monitor_port: u16,
    pub address: String,
    pub subnet: Ref,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default)]
    pub created_at: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Listener {
    pub uuid: String,
    pub name: String,
    /// Null for a listener that forwards nowhere.
    pub pool: Option<Ref>,
    pub load_balancer: Ref,
    pub protocol: String,
    pub protocol_port: u16,
    pub allowed_cidrs: Vec<String>,
    pub timeout_client_data_ms: u32,
    pub timeout_member_connect_ms: u32,
    pub timeout_member_data_ms: u32,
    #[serde(default)]
    pub tags: Tags,
}

#[derive(Debug, Clone, Deserialize)]
pub struct HealthMonitor {
    pub uuid: String,
    pub pool: Ref,
    pub load_balancer: Ref,
    #[serde(rename = "type")]
    pub kind: String,
    pub delay_s: u32,
    pub timeout_s: u32,
    pub up_threshold: u32,
    pub down_threshold: u32,
    /// Null unless the type is http or https.
    #[serde(default)]
    pub http: Option<HttpObject>,
    #[serde(default)]
    pub tags: Tags,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FloatingIp {
    pub network: String,
    pub load_balancer: Option<Ref>,
    pub server: Option<Ref>,
    #[serde(default)]
    pub tags: Tags,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Subnet {
    pub uuid: String,
    pub cidr: String,
}

impl From<LoadBalancer> for LbObject {
    fn from(lb: LoadBalancer) -> LbObject {
        let vip_addresses = lb
            .vip_addresses
            .into_iter()
            .map(|vip| VipAddress {
                subnet: vip.subnet.uuid,
                address: Some(vip.address),
            })
            .collect();
        LbObject {
            uuid: Some(lb.uuid),
            name: lb.name,
            flavor: lb.flavor.slug,
            zone: lb.zone.slug,
            vip_addresses,
            tags: lb.tags,
            status: Some(lb.status),
        }
    }
}

impl From<Pool> for PoolObject {
    fn from(pool: Pool) -> PoolObject {
        PoolObject {
            uuid: Some(pool.uuid),
            name: pool.name,
            algorithm: pool.algorithm,
            protocol: pool.protocol,
            tags: pool.tags,
        }
    }
}

impl From<Member> for MemberObject {
    fn from(member: Member) -> MemberObject {
        MemberObject {
            uuid: Some(member.uuid),
            name: member.name,
            enabled: member.enabled,
            protocol_port: member.protocol_port,
            monitor_port: member.monitor_port,
            address: member.address,
            subnet: member.subnet.uuid,
            tags: member.tags,
        }
    }
}

impl From<Listener> for ListenerObject {
    fn from(listener: Listener) -> ListenerObject {
        ListenerObject {
            uuid: Some(listener.uuid),
            name: listener.name,
            protocol: listener.protocol,
            protocol_port: listener.protocol_port,
            allowed_cidrs: listener.allowed_cidrs,
            timeout_client_data_ms: listener.timeout_client_data_ms,
            timeout_member_connect_ms: listener.timeout_member_connect_ms,
            timeout_member_data_ms: listener.timeout_member_data_ms,
            tags: listener.tags,
        }
    }
}

impl From<HealthMonitor> for MonitorObject {
    fn from(monitor: HealthMonitor) -> MonitorObject {
        MonitorObject {
            uuid: Some(monitor.uuid),
            kind: monitor.kind,
            delay_s: monitor.delay_s,
            timeout_s: monitor.timeout_s,
            up_threshold: monitor.up_threshold,
            down_threshold: monitor.down_threshold,
            http: monitor.http,
            tags: monitor.tags,
        }
    }
}

impl From<FloatingIp> for FloatingIpObject {
    fn from(ip: FloatingIp) -> FloatingIpObject {
        FloatingIpObject {
            network: ip.network,
            load_balancer: ip.load_balancer.map(|r| r.uuid),
            server: ip.server.map(|r| r.uuid),
            tags: ip.tags,
        }
    }
}

impl From<Subnet> for SubnetObject {
    fn from(subnet: Subnet) -> SubnetObject {
        SubnetObject {
            uuid: subnet.uuid,
            cidr: subnet.cidr,
        }
    }
}

/// POST /load-balancers. The model's `VipAddress` already has the request shape
/// (`{subnet, address?}`).
#[derive(Debug, Serialize)]
pub struct CreateLoadBalancer<'a> {
    pub name: &'a str,
    pub flavor: &'a str,
    pub zone: &'a str,
    pub vip_addresses: &'a [VipAddress],
    pub tags: &'a Tags,
}

impl<'a> From<&'a LbObject> for CreateLoadBalancer<'a> {
    fn from(lb: &'a LbObject) -> Self {
        CreateLoadBalancer {
            name: &lb.name,
            flavor: &lb.flavor,
            zone: &lb.zone,
            vip_addresses: &lb.vip_addresses,
            tags: &lb.tags,
        }
    }
}

/// PATCH /load-balancers/<uuid> and PATCH /floating-ips/<ip>: the only fields skyplan changes
/// there.
#[derive(Debug, Serialize)]
pub struct Rename<'a> {
    pub name: &'a str,
}

/// PATCH /load-balancers/<uuid> {tags}: the whole map, as the API replaces it.
#[derive(Debug, Serialize)]
pub struct Retag<'a> {
    pub tags: &'a Tags,
}

#[derive(Debug, Serialize)]
pub struct AssignFloatingIp<'a> {
    pub load_balancer: &'a str,
}

/// POST /load-balancers/pools.
#[derive(Debug, Serialize)]
pub struct CreatePool<'a> {
    pub name: &'a str,
    pub load_balancer: &'a str,
    pub algorithm: &'a str,
    pub protocol: &'a str,
    pub tags: &'a Tags,
}

impl<'a> CreatePool<'a> {
    pub fn new(pool: &'a PoolObject, load_balancer: &'a str) -> Self {
        CreatePool {
            name: &pool.name,
            load_balancer,
            algorithm: &pool.algorithm,
            protocol: &pool.protocol,
            tags: &pool.tags,
        }
    }
}

/// POST /load-balancers/pools/<pool>/members: the pool is in the path.
#[derive(Debug, Serialize)]
pub struct CreateMember<'a> {
    pub name: &'a str,
    pub enabled: bool,
    pub protocol_port: u16,
    pub monitor_port: u16,
    pub address: &'a str,
    pub subnet: &'a str,
    pub tags: &'a Tags,
}

impl<'a> From<&'a MemberObject> for CreateMember<'a> {
    fn from(member: &'a MemberObject) -> Self {
        CreateMember {
            name: &member.name,
            enabled: member.enabled,
            protocol_port: member.protocol_port,
            monitor_port: member.monitor_port,
            address: &member.address,
            subnet: &member.subnet,
            tags: &member.tags,
        }
    }
}

/// POST /load-balancers/health-monitors.
#[derive(Debug, Serialize)]
pub struct CreateHealthMonitor<'a> {
    pub pool: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    #[serde(flatten)]
    pub settings: UpdateHealthMonitor<'a>,
    /// Carries http.version too, which only a create may set.
    pub http: Option<&'a HttpObject>,
    pub tags: &'a Tags,
}

impl<'a> CreateHealthMonitor<'a> {
    pub fn new(monitor: &'a MonitorObject, pool: &'a str) -> Self {
        CreateHealthMonitor {
            pool,
            kind: &monitor.kind,
            settings: UpdateHealthMonitor::from(monitor),
            http: monitor.http.as_ref(),
            tags: &monitor.tags,
        }
    }
}

/// PATCH /load-balancers/health-monitors/<uuid>: the fields that change in place.
#[derive(Debug, Serialize)]
pub struct UpdateHealthMonitor<'a> {
    pub delay_s: u32,
    pub timeout_s: u32,
    pub up_threshold: u32,
    pub down_threshold: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<UpdateHttp<'a>>,
}

/// The in-place part of `http`: everything but the create-only version.
#[derive(Debug, Serialize)]
pub struct UpdateHttp<'a> {
    pub expected_codes: &'a [String],
    pub method: &'a str,
    pub url_path: &'a str,
    pub host: Option<&'a str>,
}

impl<'a> From<&'a MonitorObject> for UpdateHealthMonitor<'a> {
    fn from(monitor: &'a MonitorObject) -> Self {
        UpdateHealthMonitor {
            delay_s: monitor.delay_s,
            timeout_s: monitor.timeout_s,
            up_threshold: monitor.up_threshold,
            down_threshold: monitor.down_threshold,
            http: monitor.http.as_ref().map(|http| UpdateHttp {
                expected_codes: &http.expected_codes,
                method: &http.method,
                url_path: &http.url_path,
                host: http.host.as_deref(),
            }),
        }
    }
}

/// POST /load-balancers/listeners.
#[derive(Debug, Serialize)]
pub struct CreateListener<'a> {
    pub pool: &'a str,
    pub protocol: &'a str,
    pub protocol_port: u16,
    #[serde(flatten)]
    pub settings: UpdateListener<'a>,
    pub tags: &'a Tags,
}

impl<'a> CreateListener<'a> {
    pub fn new(listener: &'a ListenerObject, pool: &'a str) -> Self {
        CreateListener {
            pool,
            protocol: &listener.protocol,
            protocol_port: listener.protocol_port,
            settings: UpdateListener::from(listener),
            tags: &listener.tags,
        }
    }
}

/// PATCH /load-balancers/listeners/<uuid>: the fields that change in place.
#[derive(Debug, Serialize)]
pub struct UpdateListener<'a> {
    pub name: &'a str,
    pub allowed_cidrs: &'a [String],
    pub timeout_client_data_ms: u32,
    pub timeout_member_connect_ms: u32,
    pub timeout_member_data_ms: u32,
}

impl<'a> From<&'a ListenerObject> for UpdateListener<'a> {
    fn from(listener: &'a ListenerObject) -> Self {
        UpdateListener {
            name: &listener.name,
            allowed_cidrs: &listener.allowed_cidrs,
            timeout_client_data_ms: listener.timeout_client_data_ms,
            timeout_member_connect_ms: listener.timeout_member_connect_ms,
            timeout_member_data_ms: listener.timeout_member_data_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn decode<T: serde::de::DeserializeOwned>(body: Value) -> T {
        serde_json::from_value(body).expect("wire body decodes")
    }

    fn lb_ref() -> Value {
        json!({"href": "https://api/v1/load-balancers/lb-1", "uuid": "lb-1", "name": "web"})
    }

    fn pool_ref() -> Value {
        json!({"href": "https://api/v1/load-balancers/pools/pool-1", "uuid": "pool-1", "name": "tcp"})
    }

    fn subnet_ref() -> Value {
        json!({"href": "https://api/v1/subnets/sub-1", "uuid": "sub-1", "cidr": "10.0.0.0/24"})
    }

    #[test]
    fn load_balancer_takes_slugs_and_vip_subnet_uuid() {
        let lb: LoadBalancer = decode(json!({
            "href": "https://api/v1/load-balancers/lb-1", "uuid": "lb-1", "name": "web",
            "flavor": {"slug": "lb-standard", "name": "LB-Standard"},
            "zone": {"slug": "lpg1"}, "status": "changing",
            "vip_addresses": [{"version": 4, "address": "10.0.0.5", "subnet": subnet_ref()}],
            "tags": {"skyplan.address": "lb.web"}, "created_at": "2024-01-01T00:00:00Z"
        }));
        let object = LbObject::from(lb);
        assert_eq!(object.uuid.as_deref(), Some("lb-1"));
        assert_eq!(object.flavor, "lb-standard");
        assert_eq!(object.zone, "lpg1");
        assert_eq!(object.status.as_deref(), Some("changing"));
        assert_eq!(
            object.vip_addresses,
            vec![VipAddress {
                subnet: "sub-1".into(),
                address: Some("10.0.0.5".into())
            }]
        );
        assert_eq!(object.tags["skyplan.address"], "lb.web");
    }

    #[test]
    fn member_takes_subnet_uuid() {
        let member: Member = decode(json!({
            "href": "h", "uuid": "m-1", "name": "10.0.0.7:30080", "enabled": true,
            "pool": pool_ref(), "load_balancer": lb_ref(), "protocol_port": 30080,
            "monitor_port": 30081, "address": "10.0.0.7", "subnet": subnet_ref(),
            "monitor_status": "up", "tags": {}, "created_at": "2024-01-01T00:00:00Z"
        }));
        let object = MemberObject::from(member);
        assert_eq!(object.subnet, "sub-1");
        assert_eq!((object.protocol_port, object.monitor_port), (30080, 30081));
    }

    #[test]
    fn listener_pool_may_be_null() {
        let listener: Listener = decode(json!({
            "href": "h", "uuid": "l-1", "name": "tcp/80", "pool": null, "load_balancer": lb_ref(),
            "protocol": "tcp", "protocol_port": 80, "allowed_cidrs": [],
            "timeout_client_data_ms": 50000, "timeout_member_connect_ms": 5000,
            "timeout_member_data_ms": 50000, "tags": {}, "created_at": "2024-01-01T00:00:00Z"
        }));
        assert!(listener.pool.is_none());
        assert_eq!(
            ListenerObject::from(listener).timeout_member_connect_ms,
            5000
        );
    }

    #[test]
    fn health_monitor_http_is_null_unless_http() {
        let tcp: HealthMonitor = decode(json!({
            "href": "h", "uuid": "hm-1", "pool": pool_ref(), "load_balancer": lb_ref(),
            "delay_s": 2, "timeout_s": 1, "up_threshold": 2, "down_threshold": 3,
            "type": "tcp", "http": null, "tags": {}, "created_at": "2024-01-01T00:00:00Z"
        }));
        assert_eq!(MonitorObject::from(tcp).http, None);

        let http: HealthMonitor = decode(json!({
            "href": "h", "uuid": "hm-2", "pool": pool_ref(), "load_balancer": lb_ref(),
            "delay_s": 2, "timeout_s": 1, "up_threshold": 2, "down_threshold": 3, "type": "http",
            "http": {"expected_codes": ["200"], "method": "GET", "url_path": "/healthz",
                     "version": "1.1", "host": null},
            "tags": {}
        }));
        let object = MonitorObject::from(http);
        assert_eq!(object.kind, "http");
        assert_eq!(object.http.expect("http settings").url_path, "/healthz");
    }

    #[test]
    fn floating_ip_keeps_network_and_target_uuids() {
        let ip: FloatingIp = decode(json!({
            "href": "h", "network": "5.102.150.123/32", "ip_version": 4, "next_hop": null,
            "server": null, "load_balancer": lb_ref(), "type": "regional",
            "region": {"slug": "lpg"}, "reverse_ptr": null, "tags": {}
        }));
        let object = FloatingIpObject::from(ip);
        assert_eq!(object.network, "5.102.150.123/32");
        assert_eq!(object.load_balancer.as_deref(), Some("lb-1"));
        assert_eq!(object.server, None);
    }

    fn monitor(http: Option<HttpObject>) -> MonitorObject {
        MonitorObject {
            uuid: None,
            kind: "http".into(),
            delay_s: 2,
            timeout_s: 1,
            up_threshold: 2,
            down_threshold: 3,
            http,
            tags: Tags::from([("skyplan.address".into(), "lb.web".into())]),
        }
    }

    fn http_settings() -> HttpObject {
        HttpObject {
            expected_codes: vec!["200".into()],
            method: "GET".into(),
            url_path: "/".into(),
            version: "1.1".into(),
            host: Some("example.com".into()),
        }
    }

    #[test]
    fn monitor_create_sends_plain_pool_uuid_and_http_version() {
        let monitor = monitor(Some(http_settings()));
        let body = serde_json::to_value(CreateHealthMonitor::new(&monitor, "pool-1")).unwrap();
        assert_eq!(
            body,
            json!({
                "pool": "pool-1", "type": "http", "delay_s": 2, "timeout_s": 1,
                "up_threshold": 2, "down_threshold": 3,
                "http": {"expected_codes": ["200"], "method": "GET", "url_path": "/",
                         "version": "1.1", "host": "example.com"},
                "tags": {"skyplan.address": "lb.web"}
            })
        );
    }

    #[test]
    fn monitor_update_sends_only_in_place_fields() {
        let monitor = monitor(Some(http_settings()));
        let body = serde_json::to_value(UpdateHealthMonitor::from(&monitor)).unwrap();
        assert_eq!(
            body,
            json!({
                "delay_s": 2, "timeout_s": 1, "up_threshold": 2, "down_threshold": 3,
                "http": {"expected_codes": ["200"], "method": "GET", "url_path": "/",
                         "host": "example.com"}
            })
        );
        let tcp = MonitorObject {
            kind: "tcp".into(),
            ..self::monitor(None)
        };
        let body = serde_json::to_value(UpdateHealthMonitor::from(&tcp)).unwrap();
        assert!(body.get("http").is_none(), "{body}");
    }

    #[test]
    fn listener_update_leaves_create_only_fields_out() {
        let listener = ListenerObject {
            uuid: Some("l-1".into()),
            name: "tcp/80".into(),
            protocol: "tcp".into(),
            protocol_port: 80,
            allowed_cidrs: vec!["10.0.0.0/8".into()],
            timeout_client_data_ms: 1,
            timeout_member_connect_ms: 2,
            timeout_member_data_ms: 3,
            tags: Tags::new(),
        };
        let update = serde_json::to_value(UpdateListener::from(&listener)).unwrap();
        assert_eq!(
            update,
            json!({"name": "tcp/80", "allowed_cidrs": ["10.0.0.0/8"], "timeout_client_data_ms": 1,
                   "timeout_member_connect_ms": 2, "timeout_member_data_ms": 3})
        );
        let create = serde_json::to_value(CreateListener::new(&listener, "pool-1")).unwrap();
        assert_eq!(create["pool"], "pool-1");
        assert_eq!(create["protocol_port"], 80);
        assert!(create.get("uuid").is_none());
    }

    #[test]
    fn load_balancer_create_omits_unset_vip_address() {
        let lb = LbObject {
            uuid: None,
            name: "web".into(),
            flavor: "lb-standard".into(),
            zone: "lpg1".into(),
            vip_addresses: vec![VipAddress {
                subnet: "sub-1".into(),
                address: None,
            }],
            tags: Tags::new(),
            status: None,
        };
        let body = serde_json::to_value(CreateLoadBalancer::from(&lb)).unwrap();
        assert_eq!(
            body,
            json!({"name": "web", "flavor": "lb-standard", "zone": "lpg1",
                   "vip_addresses": [{"subnet": "sub-1"}], "tags": {}})
        );
    }
}
