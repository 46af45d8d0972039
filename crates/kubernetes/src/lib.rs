//! Kubernetes as a provider: clusters skyplan connects to (never creates), node policies,
//! node-metadata drift, and the LoadBalancer Services no resource manages (`discover`). Other
//! providers reach a cluster through [`connection::ClusterConnection`] (a Service-bound load
//! balancer reads the nodes and the Service, and in controller mode writes the Service) and
//! tell node-metadata drift what their cloud knows about each VM through
//! [`instances::CloudInstances`].

pub mod cloud;
pub mod config;
pub mod conflict;
pub mod connect;
pub mod connection;
pub mod discover;
pub mod embedded;
pub mod errors;
pub mod health;
pub mod incluster;
pub mod instances;
mod kubeconfig;
pub mod labels;
pub mod lb_nodes;
pub mod metadata;
pub mod nodes;
pub mod ops;
pub mod provider;
pub mod service_delete;
pub mod service_write;
pub mod spec;
pub mod state;

/// The provider name of `[cluster.*]` tables with provider = "kubernetes" and of node policies.
pub const PROVIDER: &str = "kubernetes";

/// skyplan's field manager on every object it writes (managedFields name it).
pub const FIELD_MANAGER: &str = "skyplan";

/// How long apply waits for a cloud controller to act on a Service it wrote or deleted:
/// `SKYPLAN_CCM_WAIT_S` (default 300 s).
pub fn controller_wait_limit() -> std::time::Duration {
    let seconds = std::env::var("SKYPLAN_CCM_WAIT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    std::time::Duration::from_secs(seconds)
}

pub use cloud::ClusterCloud;
pub use config::KubernetesConfig;
pub use provider::KubernetesProvider;
