//! The config file as written: serde types that mirror the TOML, with spans kept for error
//! messages. The JSON schema is generated from these same types, so the two cannot disagree.
//! Values with a fixed vocabulary or a format (enums, ports, addresses) are kept as spanned
//! text or numbers here and checked later, so that every bad value is reported, not just the
//! first serde meets.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_spanned::Spanned;

use super::schema::{choice, defaults, entries};
use super::types::RolloutPer;
use crate::model::Impact;

/// The entries of a named section in one document. Boxed: a document holds one entry, and a
/// `BTreeMap` allocates room for eleven values in its first node — 11 KB for a load balancer,
/// 55 MB for a config of 5,000 (issue 9).
pub(super) type Entries<T> = BTreeMap<String, Box<Spanned<T>>>;

/// The top-level tables and keys a skyplan file may write: [`RawDocument`]'s, and those of
/// the features read before it (`defaults`, `variables`). A file in a config directory
/// writing none of them is another tool's (`Cargo.toml`, `pyproject.toml`) and is not read.
pub(super) const TOP_LEVEL_NAMES: &[&str] = &[
    "settings",
    "provider",
    "backend",
    "maintenance",
    "rollout",
    "moved",
    "load-balancer",
    "cluster",
    "nodes",
    "defaults",
    "variables",
];

/// A skyplan configuration. A directory of files is merged; each section and resource may be
/// defined in only one of them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[schemars(title = "skyplan configuration")]
pub(super) struct RawDocument {
    #[schemars(with = "Option<RawSettings>")]
    pub settings: Option<Spanned<RawSettings>>,
    /// The clouds resources are created in, one table per provider.
    // Each provider's table is its section's; what reaches core names no provider with a table.
    #[serde(default)]
    #[schemars(with = "RawProviders")]
    pub provider: BTreeMap<String, Spanned<serde::de::IgnoredAny>>,
    /// Where state, lock and journal are kept when not in the state directory.
    #[serde(default)]
    pub backend: RawBackends,
    /// When apply may perform disruptive changes.
    #[schemars(with = "Option<RawMaintenance>")]
    pub maintenance: Option<Spanned<RawMaintenance>>,
    /// How apply rolls out disruptive changes: at most so many at once, in waves.
    #[schemars(with = "Option<RawRollout>")]
    pub rollout: Option<Spanned<RawRollout>>,
    /// Resources renamed (`[[moved]]`, as Terraform's moved blocks): the state entry at `from`
    /// becomes the resource the config declares at `to`, and nothing in the cloud changes. A
    /// chain (a to b, then b to c) is followed. Keep an entry while a state may still hold the
    /// old address.
    #[serde(default)]
    #[schemars(with = "Vec<RawMoved>")]
    pub moved: Vec<Spanned<RawMoved>>,
    /// Load balancers by name; the address of `[load-balancer.hello]` is `load-balancer.hello`.
    /// The keys depend on the provider.
    #[serde(default)]
    #[schemars(schema_with = "entries")]
    pub load_balancer: Entries<RawUnrouted>,
    /// Kubernetes clusters by name (`cluster.lab`): CloudStack clusters skyplan manages, or
    /// existing clusters it connects to (provider = "kubernetes"). The keys depend on the
    /// provider.
    #[serde(default)]
    #[schemars(schema_with = "entries")]
    pub cluster: Entries<RawUnrouted>,
    /// Policies over the nodes of a cluster, by name (`nodes.web`).
    #[serde(default)]
    #[schemars(schema_with = "entries")]
    pub nodes: Entries<RawUnrouted>,
    /// Values referred to as ${var.NAME} in the string values of resource and provider
    /// tables: NAME = "value". --var NAME=VALUE, --var-file FILE and SKYPLAN_VAR_NAME (in that
    /// order of precedence) override them. Every variable must be used.
    // Taken out of the document before it is deserialized (`reuse.rs`): here for the schema.
    #[allow(dead_code)]
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
    /// Keys every resource table of a kind inherits unless it sets them:
    /// [defaults.load-balancer.PROVIDER], [defaults.cluster.PROVIDER], [defaults.nodes]. A
    /// table inherits key by key; an array is replaced whole.
    #[allow(dead_code)]
    #[serde(default)]
    #[schemars(schema_with = "defaults")]
    pub defaults: serde::de::IgnoredAny,
}

/// A resource table whose provider takes no table of its kind (or that names none): read only
/// so that validation refuses it saying which providers do. Its other keys are not looked at.
#[derive(Debug, Deserialize)]
pub(super) struct RawUnrouted {
    pub provider: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawSettings {
    /// Where state and the embedded simulators' data live, relative to the directory of the
    /// file that writes it.
    /// Default: "state".
    #[schemars(with = "Option<String>")]
    pub state_dir: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawBackends {
    #[schemars(with = "Option<RawPostgres>")]
    pub postgres: Option<Spanned<RawPostgres>>,
    #[schemars(with = "Option<RawKubernetesBackend>")]
    pub kubernetes: Option<Spanned<RawKubernetesBackend>>,
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

/// State in Secrets and the lock in a Lease of a Kubernetes cluster: for skyplan running in
/// that cluster (a CronJob), or any team sharing it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawKubernetesBackend {
    /// The namespace of the Secrets and the Lease. Default: the pod's namespace with
    /// in-cluster = true; otherwise required.
    #[schemars(with = "Option<String>")]
    pub namespace: Option<Spanned<String>>,
    /// Which state of the namespace this config uses: Secrets skyplan-state-WORKSPACE, Lease
    /// skyplan-lock-WORKSPACE. Default: "default".
    #[schemars(with = "Option<String>")]
    pub workspace: Option<Spanned<String>>,
    /// The kubeconfig file, relative to the config. Default: KUBECONFIG, then ~/.kube/config.
    #[schemars(with = "Option<String>")]
    pub kubeconfig: Option<Spanned<String>>,
    /// The kubeconfig context. Default: the current context.
    #[schemars(with = "Option<String>")]
    pub context: Option<Spanned<String>>,
    /// Use the pod's service account (instead of kubeconfig and context).
    #[schemars(with = "Option<bool>")]
    pub in_cluster: Option<Spanned<bool>>,
    /// Seconds the lock's Lease outlives its holder's last renewal: a killed run's lock is
    /// taken over once they have passed. Default: 15.
    #[schemars(with = "Option<u32>")]
    pub lease_seconds: Option<Spanned<u32>>,
}

/// One `[[moved]]` entry: a resource's old address and its new one, of the same kind.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawMoved {
    /// The address the state knows the resource by, e.g. "load-balancer.a"; the config no
    /// longer declares it.
    #[schemars(with = "String")]
    pub from: Spanned<String>,
    /// The address the config now declares the resource at, e.g. "load-balancer.b".
    #[schemars(with = "String")]
    pub to: Spanned<String>,
}

// `[provider.NAME]`: each table is a provider's section's (see `section.rs`); core knows none.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawProviders {}

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

/// `[rollout]`: disruptive changes (class `minimal` and above) applied in waves.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawRollout {
    /// At most this many resources with a change of class `minimal` or above in flight at
    /// once (1 or more). Default: no limit.
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_disrupted: Option<Spanned<i64>>,
    /// Apply `max-disrupted` per cluster or per zone instead of in total.
    #[serde(default)]
    #[schemars(schema_with = "choice::<RolloutPer>")]
    pub max_disrupted_per: Option<Spanned<String>>,
    /// After each disruptive change, wait until the cloud reports the resource healthy.
    /// Default: true.
    pub health_gate: Option<bool>,
    /// How long a health gate waits, e.g. "300s" or "5m". Default: "300s".
    #[schemars(with = "Option<String>")]
    pub health_timeout: Option<Spanned<String>>,
    /// How long to wait between waves, e.g. "30s". Default: "0s".
    #[schemars(with = "Option<String>")]
    pub pause: Option<Spanned<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_top_level_table_of_the_document_is_a_skyplan_name() {
        let schema = schemars::schema_for!(RawDocument);
        let properties = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .unwrap();
        for name in properties.keys() {
            assert!(TOP_LEVEL_NAMES.contains(&name.as_str()), "{name}");
        }
        for kind in crate::model::ResourceKind::ALL {
            assert!(TOP_LEVEL_NAMES.contains(&kind.as_str()), "{kind}");
        }
    }
}
