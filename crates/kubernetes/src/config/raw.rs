//! The Kubernetes tables as written: `[cluster.NAME]` with `provider = "kubernetes"` and
//! `[nodes.NAME]` policies. As in core's raw types, values with a vocabulary or a format stay
//! spanned text until they are checked; the JSON schema is generated from these same types.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_spanned::Spanned;

use skyplan_core::config::section::choice_schema as choice;

use crate::spec::TaintEffect;

/// An existing cluster skyplan connects to; it is never created or deleted.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawKubeCluster {
    /// "kubernetes".
    #[schemars(with = "String")]
    // Read by the parser, which routed the table here by it.
    #[allow(dead_code)]
    pub provider: Spanned<String>,
    /// The kubeconfig file, relative to the config; `~` is the home directory. Default:
    /// KUBECONFIG (a ':'-separated list, merged), then ~/.kube/config.
    #[schemars(with = "Option<String>")]
    pub kubeconfig: Option<Spanned<String>>,
    /// The kubeconfig context. Default: the current context.
    #[schemars(with = "Option<String>")]
    pub context: Option<Spanned<String>>,
    /// Reach the cluster skyplan runs in with its pod's service account (instead of
    /// kubeconfig/context): for skyplan in a CronJob.
    #[schemars(with = "Option<bool>")]
    pub in_cluster: Option<Spanned<bool>>,
    /// "embedded": a simulated cluster with three Ready nodes (instead of kubeconfig/context).
    #[schemars(with = "Option<String>")]
    pub endpoint: Option<Spanned<String>>,
}

/// A policy over the nodes of a cluster: the labels and taints it lists are kept on every
/// node it selects; one removed from the policy is removed from the nodes; labels and taints
/// set by others are left alone.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawNodePolicy {
    /// A [cluster.NAME] key.
    #[schemars(with = "String")]
    pub cluster: Spanned<String>,
    /// A label selector in kubectl's syntax, e.g. "node-role.kubernetes.io/worker" (or names).
    #[schemars(with = "Option<String>")]
    pub selector: Option<Spanned<String>>,
    /// Node-name globs, e.g. ["worker-*"] (or selector).
    #[schemars(with = "Option<Vec<String>>")]
    pub names: Option<Spanned<Vec<Spanned<String>>>>,
    /// Labels to keep on the nodes.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub labels: BTreeMap<Spanned<String>, Spanned<String>>,
    /// Taints to keep on the nodes; a key and effect at most once.
    #[serde(default)]
    #[schemars(with = "Vec<RawTaint>")]
    pub taints: Vec<Spanned<RawTaint>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTaint {
    #[schemars(with = "String")]
    pub key: Spanned<String>,
    /// Default: none.
    #[schemars(with = "Option<String>")]
    pub value: Option<Spanned<String>>,
    #[schemars(schema_with = "choice::<TaintEffect>")]
    pub effect: Spanned<String>,
}
