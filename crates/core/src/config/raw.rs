//! The config file as written: serde types that mirror the TOML, with spans kept for error
//! messages. The JSON schema is generated from these same types, so the two cannot disagree.
//! Values with a fixed vocabulary or a format (enums, ports, addresses) are kept as spanned
//! text or numbers here and checked later, so that every bad value is reported, not just the
//! first serde meets.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_spanned::Spanned;

use super::raw_kubernetes::{RawKubeCluster, RawNodePolicy};
use super::schema::{choice, clusters, load_balancers, max_concurrent_requests, port};
use crate::model::{
    Algorithm, HttpVersion, Impact, IpMode, LbMode, ListenerProtocol, MonitorType, PoolProtocol,
    PortProtocol, TrafficPolicy,
};

/// The entries of a named section in one document. Boxed: a document holds one entry, and a
/// `BTreeMap` allocates room for eleven values in its first node — 11 KB for a load balancer,
/// 55 MB for a config of 5,000 (issue 9).
pub(super) type Entries<T> = BTreeMap<String, Box<Spanned<T>>>;

/// A skyplan configuration. A directory of files is merged; each section and resource may be
/// defined in only one of them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[schemars(title = "skyplan configuration")]
pub(super) struct RawDocument {
    #[schemars(with = "Option<RawSettings>")]
    pub settings: Option<Spanned<RawSettings>>,
    /// The clouds resources are created in, one table per provider.
    #[serde(default)]
    pub provider: RawProviders,
    /// Where state, lock and journal are kept when not in the state directory.
    #[serde(default)]
    pub backend: RawBackends,
    /// When apply may perform disruptive changes.
    #[schemars(with = "Option<RawMaintenance>")]
    pub maintenance: Option<Spanned<RawMaintenance>>,
    /// Load balancers by name; the address of `[load-balancer.hello]` is `load-balancer.hello`.
    /// The keys depend on the provider.
    #[serde(default)]
    #[schemars(schema_with = "load_balancers")]
    pub load_balancer: Entries<RawLoadBalancer>,
    /// Kubernetes clusters by name (`cluster.lab`): CloudStack clusters skyplan manages, or
    /// existing clusters it connects to (provider = "kubernetes"). The keys depend on the
    /// provider.
    #[serde(default)]
    #[schemars(schema_with = "clusters")]
    pub cluster: Entries<RawOtherCluster>,
    /// `[cluster.NAME]` tables with provider = "kubernetes", routed here by the parser.
    #[serde(default, rename = "cluster (kubernetes)")]
    #[schemars(skip)]
    pub kubernetes_cluster: Entries<RawKubeCluster>,
    /// Policies over the nodes of a cluster, by name (`nodes.web`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawNodePolicy>")]
    pub nodes: Entries<RawNodePolicy>,
}

/// A `[cluster.NAME]` whose provider neither reaches nor manages clusters (or that names
/// none): read only so that validation refuses it saying which providers can. Its other keys
/// are not looked at.
#[derive(Debug, Deserialize)]
pub(super) struct RawOtherCluster {
    pub provider: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawSettings {
    /// Where state and the embedded simulators' data live, relative to the config's directory.
    /// Default: "state".
    pub state_dir: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawBackends {
    #[schemars(with = "Option<RawPostgres>")]
    pub postgres: Option<Spanned<RawPostgres>>,
}

/// State, lock and journal in PostgreSQL, shared by every machine that runs this config. The
/// password comes from PGPASSWORD or ~/.pgpass, never from this file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawPostgres {
    /// A connection URL without a password, e.g. postgres://skyplan@db.internal:5432/skyplan
    /// (add ?sslmode=require for TLS). Default: the environment variable SKYPLAN_PG_URL.
    #[schemars(with = "Option<String>")]
    pub url: Option<Spanned<String>>,
    /// Which state of the database this config uses; configs naming the same workspace share
    /// one state and one lock. Default: "default".
    #[schemars(with = "Option<String>")]
    pub workspace: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawProviders {
    #[schemars(with = "Option<RawCloudscale>")]
    pub cloudscale: Option<Spanned<RawCloudscale>>,
}

/// cloudscale.ch. The API token comes from the environment variable CLOUDSCALE_API_TOKEN.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawCloudscale {
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawMaintenance {
    /// IANA time zone of the windows, e.g. "Europe/Zurich".
    #[schemars(with = "String")]
    pub timezone: Spanned<String>,
    /// Weekly windows such as "Sat 02:00-05:00"; the end may be 24:00 or wrap past midnight.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub windows: Vec<Spanned<String>>,
    /// The highest impact class apply may perform outside a window. Default: "minimal".
    #[serde(default)]
    #[schemars(schema_with = "choice::<Impact>")]
    pub outside_window: Option<Spanned<String>>,
    /// The highest impact class apply may perform inside a window. Default: "pool-recreate".
    #[serde(default)]
    #[schemars(schema_with = "choice::<Impact>")]
    pub inside_window: Option<Spanned<String>>,
}

/// A load balancer as the cloudscale cloud controller manager would create it for a Service;
/// defaults are the CCM's.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawLoadBalancer {
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
pub(super) struct RawVipAddress {
    /// The subnet's UUID.
    #[schemars(with = "String")]
    pub subnet: Spanned<String>,
    /// A fixed address in the subnet; default: any free one.
    #[schemars(with = "Option<String>")]
    pub address: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawTimeouts {
    /// Default: 50000.
    pub client_data_ms: Option<u32>,
    /// Default: 5000.
    pub member_connect_ms: Option<u32>,
    /// Default: 50000.
    pub member_data_ms: Option<u32>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawHealthMonitor {
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
pub(super) struct RawHttpCheck {
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
pub(super) struct RawPort {
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
