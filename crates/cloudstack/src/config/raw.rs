//! The CloudStack tables as written: `[provider.cloudstack]`, `[cluster.NAME]` and
//! `[load-balancer.NAME]` with `provider = "cloudstack"`. As in core's raw types, values with a
//! vocabulary or a format stay spanned text until they are checked, so every bad value is
//! reported at its place; the JSON schema is generated from these same types.

use schemars::JsonSchema;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_spanned::Spanned;

use skyplan_core::config::section::{choice_schema as choice, port_schema as port};

use crate::spec::{ClusterRunState, CsAlgorithm, CsProtocol};

/// Apache CloudStack. Keys come from the cloud-config INI file, never from this file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCloudstack {
    /// "embedded" (the built-in simulator). Default: "embedded" unless cloud-config is set.
    #[schemars(with = "Option<String>")]
    pub endpoint: Option<Spanned<String>>,
    /// The INI file the CloudStack CCM and `cs` read ([Global] api-url, api-key, secret-key,
    /// project-id, zone, ssl-no-verify), relative to the config; `~` is the home directory.
    #[schemars(with = "Option<String>")]
    pub cloud_config: Option<Spanned<String>>,
    /// Accepted by the parser only to refuse it: keys do not belong in config files.
    #[schemars(skip)]
    pub api_key: Option<Spanned<IgnoredAny>>,
    /// Accepted by the parser only to refuse it; the value is never kept.
    #[schemars(skip)]
    pub secret_key: Option<Spanned<IgnoredAny>>,
}

/// A CloudStack Kubernetes Service cluster that skyplan creates and manages.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCluster {
    /// "cloudstack".
    #[schemars(with = "String")]
    pub provider: Spanned<String>,
    /// The cluster's name in CloudStack. Default: the table key.
    pub name: Option<String>,
    pub description: Option<String>,
    /// Zone name or UUID.
    #[schemars(with = "String")]
    pub zone: Spanned<String>,
    /// An enabled supported version, MAJOR.MINOR.PATCH.
    #[schemars(with = "String")]
    pub kubernetes_version: Spanned<String>,
    /// Default: 1.
    #[schemars(with = "Option<u32>")]
    pub control_nodes: Option<Spanned<i64>>,
    /// Default: 0.
    #[schemars(with = "Option<u32>")]
    pub etcd_nodes: Option<Spanned<i64>>,
    /// The worker count. Default: 1.
    #[schemars(with = "Option<u32>")]
    pub workers: Option<Spanned<i64>>,
    /// Service offering name or UUID.
    #[schemars(with = "String")]
    pub service_offering: Spanned<String>,
    /// Per node type offerings (CloudStack 4.21 and later), e.g. { worker = "Large Instance" }.
    #[serde(default)]
    pub node_offerings: RawNodeOfferings,
    /// Network name or UUID; default: CKS creates one.
    #[schemars(with = "Option<String>")]
    pub network: Option<Spanned<String>>,
    /// SSH keypair name.
    #[schemars(with = "Option<String>")]
    pub keypair: Option<Spanned<String>>,
    #[schemars(with = "Option<RawAutoscaling>")]
    pub autoscaling: Option<Spanned<RawAutoscaling>>,
    /// Default: "running".
    #[serde(default)]
    #[schemars(schema_with = "choice::<ClusterRunState>")]
    pub state: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawNodeOfferings {
    pub control: Option<String>,
    pub worker: Option<String>,
    pub etcd: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawAutoscaling {
    pub min: u32,
    pub max: u32,
}

/// CloudStack load-balancer rules on one public IP, one rule per port, named as the CloudStack
/// CCM names them (`<name>-<protocol>-<port>`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCsLoadBalancer {
    /// "cloudstack".
    #[schemars(with = "String")]
    pub provider: Spanned<String>,
    /// The base of the rule names. Default: the table key.
    pub name: Option<String>,
    pub description: Option<String>,
    /// "auto" associates an address; or an existing public address. Default: "auto".
    #[schemars(with = "Option<String>")]
    pub public_ip: Option<Spanned<String>>,
    /// Network name or UUID. Default: the cluster's network.
    #[schemars(with = "Option<String>")]
    pub network: Option<Spanned<String>>,
    /// Members: every worker VM of this [cluster.NAME].
    #[schemars(with = "Option<String>")]
    pub cluster: Option<Spanned<String>>,
    /// Members: VMs by name (instead of cluster).
    #[schemars(with = "Option<Vec<String>>")]
    pub members: Option<Spanned<Vec<String>>>,
    /// Default: "roundrobin".
    #[serde(default)]
    #[schemars(schema_with = "choice::<CsAlgorithm>")]
    pub algorithm: Option<Spanned<String>>,
    /// The rules' source CIDRs (cidrlist); empty allows everyone.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allowed_cidrs: Vec<Spanned<String>>,
    /// Firewall rules on the public IP. Default: ["0.0.0.0/0"].
    #[schemars(with = "Option<Vec<String>>")]
    pub firewall_cidrs: Option<Vec<Spanned<String>>>,
    /// direct (default): skyplan manages the rules. "ccm" (with `cluster` and `service`):
    /// skyplan writes the Service and the CloudStack CCM makes the rules.
    #[schemars(with = "Option<String>")]
    pub mode: Option<Spanned<String>>,
    /// Controller mode: the Service the CCM serves, "namespace/name"; needs `cluster`.
    #[schemars(with = "Option<String>")]
    pub service: Option<Spanned<String>>,
    /// At least one.
    #[schemars(with = "Vec<RawCsPort>")]
    pub ports: Spanned<Vec<Spanned<RawCsPort>>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCsPort {
    /// The public port.
    #[schemars(schema_with = "port")]
    pub port: Spanned<i64>,
    /// Default: "tcp".
    #[serde(default)]
    #[schemars(schema_with = "choice::<CsProtocol>")]
    pub protocol: Option<Spanned<String>>,
    /// The port on each member. Controller mode: the Service port's nodePort (30000-32767);
    /// absent, the apiserver allocates it.
    #[serde(default)]
    #[schemars(schema_with = "port")]
    pub node_port: Option<Spanned<i64>>,
}
