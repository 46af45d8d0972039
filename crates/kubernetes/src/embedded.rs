//! Embedded clusters (`[cluster.NAME] kubeconfig = "embedded"`), started by whoever connects
//! the providers: the Kubernetes provider only asks for one and talks to its URL.

use std::path::PathBuf;

use futures::future::BoxFuture;

use skyplan_core::provider::Companion;

/// Starts embedded clusters; the registry's embedded wiring implements it.
pub trait EmbeddedClusters: Send + Sync {
    /// Starts the cluster whose world is kept in `world` (created when missing).
    fn start(&self, world: PathBuf) -> BoxFuture<'_, Result<StartedCluster, String>>;
}

/// A running embedded cluster.
pub struct StartedCluster {
    /// Its API root, `http://127.0.0.1:PORT`.
    pub url: String,
    /// Stops it (it writes its world then).
    pub companion: Companion,
}
