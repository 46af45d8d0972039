//! cloudscale's tables as written: `[provider.cloudscale]` and `[load-balancer.NAME]` with
//! `provider = "cloudscale"`. As in core's raw types, values with a vocabulary or a format
//! (enums, ports, addresses) stay spanned text or numbers until they are checked, so every bad
//! value is reported at its place, not just the first serde meets; the JSON schema is generated
//! from these same types, so the two cannot disagree.

use schemars::JsonSchema;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_spanned::Spanned;
use skyplan_core::config::section::{choice_schema as choice, port_schema as port};
use skyplan_kubernetes::spec::LbMode;

use super::schema::max_concurrent_requests;
use crate::spec::{
    Algorithm, HttpVersion, IpMode, ListenerProtocol, MonitorType, PoolProtocol, PortProtocol,
    TrafficPolicy,
};

/// cloudscale.ch. The API token comes from the environment variable CLOUDSCALE_API_TOKEN.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCloudscale {
    /// "embedded" (the built-in simulator) or an API base URL such as
    /// https://api.cloudscale.ch/v1. Default: "embedded".
    #[schemars(with = "Option<String>")]
    pub endpoint: Option<Spanned<String>>,
    /// The most API requests in flight at once, for refresh's reads and apply's calls alike
    /// (fewer for a while after the API answers 429). 1-256. Default: 16.
    #[schemars(schema_with = "max_concurrent_requests")]
    pub max_concurrent_requests: Option<Spanned<i64>>,
    /// Accepted by the parser only to refuse it: secrets do not belong in config files. The
    /// value is never kept.
    #[schemars(skip)]
    pub token: Option<Spanned<IgnoredAny>>,
}

/// A load balancer as the cloudscale cloud controller manager would create it for a Service;
/// defaults are the CCM's.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLoadBalancer {
    /// The provider, which needs a [provider.NAME] table, e.g. "cloudscale".
    #[schemars(with = "String")]
    pub provider: Spanned<String>,
    /// The load balancer's name in the cloud. Default: the table key.
    pub name: Option<String>,
    /// Default: "lb-standard".
    #[schemars(with = "Option<String>")]
    pub flavor: Option<Spanned<String>>,
    /// e.g. "lpg1" or "rma1".
    #[schemars(with = "String")]
    pub zone: Spanned<String>,
    /// Private addresses of the load balancer; default: one public address.
    #[serde(default)]
    pub vip_addresses: Vec<RawVipAddress>,
    /// Floating IPs to assign, as CIDRs ("5.102.150.123/32").
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub floating_ips: Vec<Spanned<String>>,
    /// Default: "round_robin".
    #[serde(default)]
    #[schemars(schema_with = "choice::<Algorithm>")]
    pub algorithm: Option<Spanned<String>>,
    /// Protocol towards the members for TCP ports. Default: "tcp".
    #[serde(default)]
    #[schemars(schema_with = "choice::<PoolProtocol>")]
    pub pool_protocol: Option<Spanned<String>>,
    /// Listener protocol for TCP ports. Default: "tcp".
    #[serde(default)]
    #[schemars(schema_with = "choice::<ListenerProtocol>")]
    pub listener_protocol: Option<Spanned<String>>,
    /// Client networks allowed to connect, as CIDRs; empty allows everyone.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allowed_cidrs: Vec<Spanned<String>>,
    /// Subnet UUIDs members must be in; empty allows every subnet.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allowed_subnets: Vec<Spanned<String>>,
    #[serde(default)]
    pub timeouts: RawTimeouts,
    #[serde(default)]
    pub health_monitor: RawHealthMonitor,
    /// The Service's externalTrafficPolicy. Default: "Cluster".
    #[serde(default)]
    #[schemars(schema_with = "choice::<TrafficPolicy>")]
    pub traffic_policy: Option<Spanned<String>>,
    /// The Service's healthCheckNodePort; only with traffic-policy = "Local".
    #[serde(default)]
    #[schemars(schema_with = "port")]
    pub health_check_node_port: Option<Spanned<i64>>,
    /// Hostname reported in the Service status instead of the address.
    pub force_hostname: Option<String>,
    /// How the Service status reports the address. Default: "Proxy".
    #[serde(default)]
    #[schemars(schema_with = "choice::<IpMode>")]
    pub ip_mode: Option<Spanned<String>>,
    /// Backend addresses (IPv4 or IPv6), each at most once. Not with `cluster`: then the
    /// members are the cluster's nodes.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub members: Vec<Spanned<String>>,
    /// A [cluster.NAME] of this config: the load balancer serves one of its Services (needs
    /// `service`), and its members are the cluster's nodes, chosen as the cloudscale CCM
    /// chooses them.
    #[schemars(with = "Option<String>")]
    pub cluster: Option<Spanned<String>>,
    /// The Service this load balancer serves, "namespace/name"; needs `cluster`.
    #[schemars(with = "Option<String>")]
    pub service: Option<Spanned<String>>,
    /// "direct" (default): skyplan manages the cloud objects, members are the nodes on the
    /// Service's node ports. "ccm": skyplan writes the Service (type LoadBalancer, ports,
    /// traffic policy, the CCM's annotations) and predicts what the cloudscale CCM does.
    #[serde(default)]
    #[schemars(schema_with = "choice::<LbMode>")]
    pub mode: Option<Spanned<String>>,
    /// Only nodes matching this label selector become members (the CCM's
    /// `loadbalancer-node-selector`), e.g. "node-role.kubernetes.io/worker,!spot".
    #[schemars(with = "Option<String>")]
    pub node_selector: Option<Spanned<String>>,
    /// The Service ports; at least one.
    #[schemars(with = "Vec<RawPort>")]
    pub ports: Spanned<Vec<Spanned<RawPort>>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawVipAddress {
    /// The subnet's UUID.
    #[schemars(with = "String")]
    pub subnet: Spanned<String>,
    /// A fixed address in the subnet; default: any free one.
    #[schemars(with = "Option<String>")]
    pub address: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTimeouts {
    /// Default: 50000.
    pub client_data_ms: Option<u32>,
    /// Default: 5000.
    pub member_connect_ms: Option<u32>,
    /// Default: 50000.
    pub member_data_ms: Option<u32>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawHealthMonitor {
    /// Default: "tcp", or "http" with traffic-policy = "Local".
    #[serde(default, rename = "type")]
    #[schemars(schema_with = "choice::<MonitorType>")]
    pub kind: Option<Spanned<String>>,
    /// Default: 2.
    pub delay_s: Option<u32>,
    /// Default: 1.
    pub timeout_s: Option<u32>,
    /// Default: 2.
    pub up_threshold: Option<u32>,
    /// Default: 3.
    pub down_threshold: Option<u32>,
    /// The HTTP check of an http or https monitor.
    #[schemars(with = "Option<RawHttpCheck>")]
    pub http: Option<Spanned<RawHttpCheck>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawHttpCheck {
    /// Default: "GET".
    pub method: Option<String>,
    /// Default: "/" ("/livez" with traffic-policy = "Local").
    pub url_path: Option<String>,
    /// Default: ["200"].
    pub expected_codes: Option<Vec<String>>,
    /// Default: "1.1" ("1.0" with traffic-policy = "Local").
    #[serde(default)]
    #[schemars(schema_with = "choice::<HttpVersion>")]
    pub version: Option<Spanned<String>>,
    /// Host header to send; "" sends none. Default: "".
    pub host: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPort {
    /// Required when the load balancer has more than one port. Default: "".
    #[schemars(with = "Option<String>")]
    pub name: Option<Spanned<String>>,
    /// The port clients connect to.
    #[schemars(schema_with = "port")]
    pub port: Spanned<i64>,
    /// Default: "tcp".
    #[serde(default)]
    #[schemars(schema_with = "choice::<PortProtocol>")]
    pub protocol: Option<Spanned<String>>,
    /// The port on each member. Required unless the load balancer is bound to a Service,
    /// whose node ports it then uses.
    #[serde(default)]
    #[schemars(schema_with = "port")]
    pub node_port: Option<Spanned<i64>>,
}
