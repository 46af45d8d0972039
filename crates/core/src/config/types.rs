//! The resolved configuration: what the rest of skyplan works from once the TOML has been
//! parsed, validated and given its defaults.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ignore::Origin;
use super::section::Opaque;

use crate::model::{Address, Impact};

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The directory the config was read from (a file's parent, or the directory itself).
    pub root: PathBuf,
    pub settings: Settings,
    pub providers: Providers,
    pub maintenance: Option<Maintenance>,
    /// `[rollout]`, when the config has it.
    pub rollout: Option<Rollout>,
    /// Sorted by address.
    pub resources: Vec<Resource>,
    /// The `[[moved]]` entries, checked, in the order they apply: a chain's moves one after
    /// another (`a` → `b` before `b` → `c`), the chains in the order they are written.
    pub moves: Vec<Move>,
}

impl Config {
    /// The resource at `address` (a binary search: `resources` is sorted by address).
    pub fn resource(&self, address: &Address) -> Option<&Resource> {
        self.resources
            .binary_search_by(|r| r.address.cmp(address))
            .ok()
            .map(|i| &self.resources[i])
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Resolved against the config root. Also where the embedded simulators keep their world,
    /// whatever the state backend.
    pub state_dir: PathBuf,
    /// Where state, lock and journal are kept.
    pub backend: Backend,
}

/// Where state, lock and journal are kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Backend {
    /// In `state_dir` (the default).
    #[default]
    Local,
    Postgres(PostgresBackend),
    Kubernetes(KubernetesBackend),
}

/// `[backend.postgres]`: a team's shared state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresBackend {
    /// A libpq connection string or URL without a password (the password comes from
    /// PGPASSWORD or ~/.pgpass).
    pub url: String,
    /// Which of the states kept in the database this config uses.
    pub workspace: String,
}

/// `[backend.kubernetes]`: state, lock and journal in a cluster's Secrets and Lease. Kept by
/// the Kubernetes crate (core knows no provider); the binary's registry opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubernetesBackend {
    /// None: the pod's namespace (in-cluster only).
    pub namespace: Option<String>,
    /// Names the Secrets and the Lease: `skyplan-state-<workspace>`, `skyplan-lock-<workspace>`.
    pub workspace: String,
    pub access: KubernetesAccess,
    /// How long the Lease outlives its holder's last renewal (default 15 s): a killed run's
    /// lock is taken over once this has passed.
    pub lease_seconds: u32,
}

/// How the Kubernetes backend reaches its cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KubernetesAccess {
    /// A kubeconfig with kubectl's rules: `path` None means KUBECONFIG, then ~/.kube/config;
    /// `context` None means the current context.
    Kubeconfig {
        path: Option<PathBuf>,
        context: Option<String>,
    },
    /// The service account of the pod skyplan runs in.
    InCluster,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// The built-in simulator, persisted under `<state-dir>/embedded/`.
    Embedded,
    /// An API base URL, e.g. `https://api.cloudscale.ch/v1`.
    Url(String),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Providers {
    /// The settings of each provider's section that has a table, by provider name.
    pub sections: BTreeMap<&'static str, Opaque>,
}

impl Providers {
    /// A section's provider's settings, when the config has its table.
    pub fn get<T: std::any::Any>(&self, provider: &str) -> Option<&T> {
        self.sections.get(provider).and_then(Opaque::get)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Maintenance {
    pub timezone: String,
    /// As written, e.g. `Sat 02:00-05:00` (validated).
    pub windows: Vec<String>,
    pub outside_window: Impact,
    pub inside_window: Impact,
}

/// `[rollout]`: how apply rolls out disruptive changes (class `minimal` and above).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    /// At most this many disruptive changes in flight at once (`None`: no limit).
    pub max_disrupted: Option<usize>,
    /// The limit per cluster or zone instead of in total.
    pub per: Option<RolloutPer>,
    /// Wait for the cloud to report a changed resource healthy before it counts as done
    /// (`apply::gate`).
    pub health_gate: bool,
    /// How long a health gate waits before it fails and stops the rollout.
    pub health_timeout: std::time::Duration,
    /// The pause between waves.
    pub pause: std::time::Duration,
}

impl Default for Rollout {
    fn default() -> Self {
        Rollout {
            max_disrupted: None,
            per: None,
            health_gate: true,
            health_timeout: std::time::Duration::from_secs(300),
            pause: std::time::Duration::ZERO,
        }
    }
}

crate::wire_enum!(
    /// What `max-disrupted-per` groups resources by.
    RolloutPer {
        Cluster => "cluster",
        Zone => "zone",
    }
);

crate::choices!(RolloutPer => "rollout group");

/// A `[[moved]]` entry: the state entry at `from` is the resource the config declares at `to`
/// (or, in a chain, the next move's `from`). Both are of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub from: Address,
    pub to: Address,
    /// Where the entry is written.
    pub location: SourceLocation,
}

/// Where a resource's table starts, for messages and CI annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLocation {
    /// Shared by every location in one file.
    pub file: Arc<Path>,
    /// 1-based.
    pub line: usize,
    /// 1-based.
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    pub address: Address,
    /// The provider name, e.g. `cloudscale`.
    pub provider: String,
    pub location: SourceLocation,
    /// Where the keys that name catalog objects (zone, flavor, subnets, floating IPs, ...)
    /// are written, so a plan that finds one unknown can point at it.
    pub keys: KeyLocations,
    pub spec: ResourceSpec,
    /// Resources this one needs first (a load balancer's cluster): created and updated before
    /// it, deleted after it.
    pub depends_on: Vec<Address>,
    /// Its `ignore-changes` and the table it was resolved from: filled by core after the
    /// section resolved the table (a section leaves it `Origin::default()`).
    pub origin: Origin,
}

impl Resource {
    /// Where the config writes the key at `path` (`zone`, `vip-addresses[0].subnet`,
    /// `floating-ips[1]`), when the config stage recorded it.
    pub fn key_location(&self, path: &str) -> Option<&SourceLocation> {
        self.keys.get(path)
    }

    /// The key's position, else the resource's table: where a plan error about the key points.
    pub fn location_of(&self, path: &str) -> &SourceLocation {
        self.key_location(path).unwrap_or(&self.location)
    }
}

/// Positions of a resource's keys by path, spelled as in the config (`vip-addresses[0].subnet`).
/// A side table rather than spans in the model types: only the keys that name catalog objects
/// are recorded, and the model stays free of config positions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyLocations(std::collections::BTreeMap<String, SourceLocation>);

impl KeyLocations {
    pub fn insert(&mut self, path: impl Into<String>, location: SourceLocation) {
        self.0.insert(path.into(), location);
    }

    pub fn get(&self, path: &str) -> Option<&SourceLocation> {
        self.0.get(path)
    }

    /// Every recorded key and where it is written, sorted by path.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &SourceLocation)> {
        self.0.iter().map(|(path, at)| (path.as_str(), at))
    }
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// What a resource's provider made of its table: a value only that provider reads back
/// (its section resolved it; core never looks inside).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSpec(Opaque);

impl ResourceSpec {
    pub fn new<T: std::any::Any + std::fmt::Debug + PartialEq + Send + Sync>(spec: T) -> Self {
        ResourceSpec(Opaque::new(spec))
    }

    /// The spec, when it is a `T`.
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        self.0.get()
    }
}
