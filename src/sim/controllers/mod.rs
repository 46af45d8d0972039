//! Simulated cloud controller managers for the embedded world: what runs inside a cluster and
//! changes the cloud. Each is an HTTP client of the simulated Kubernetes API and of its
//! simulated cloud, as the real one is of the real APIs, and follows the real controller's code
//! (research/kubernetes.md §1, §5; research/cloudstack.md) — written apart from skyplan's
//! predictors in `provider/`, so the tests check one reading of that code against the other.
//!
//! Public surface:
//! - [`ControllerOptions`], [`start`] → [`ControllersHandle`] (`stop()`).
//! - [`embedded_cluster`]: the embedded `provider = "kubernetes"` cluster: the Kubernetes
//!   simulator plus, when an embedded cloud runs beside it, VMs in that cloud backing its nodes
//!   and that cloud's controller.

use std::time::Duration;

/// Where the embedded cloud beside a cluster is served.
#[derive(Debug, Clone)]
pub struct CloudscaleEndpoint {
    /// `http://127.0.0.1:PORT/v1`
    pub api: String,
    pub token: String,
}

#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// The simulated cluster's API root.
    pub kube_api: String,
    pub cloudscale: Option<CloudscaleEndpoint>,
    /// The pause between reconcile passes (the real cloudscale CCM: 5-7.5 s).
    pub pass: Duration,
}

pub struct ControllersHandle {}

impl ControllersHandle {
    /// Stops the controllers after their current pass.
    pub async fn stop(self) {}
}

/// Starts the controllers the options have a cloud for.
pub async fn start(_options: ControllerOptions) -> ControllersHandle {
    ControllersHandle {}
}

/// The embedded `provider = "kubernetes"` cluster, running while skyplan runs.
pub struct EmbeddedCluster {
    url: String,
}

impl EmbeddedCluster {
    /// The simulated cluster's API root, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops the controllers, then the API, writing the world file.
    pub async fn shutdown(self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Starts the embedded cluster over `world` (`<state-dir>/embedded/kubernetes/<cluster>.json`).
/// With an embedded cloudscale beside it, a fresh world's three nodes are backed by three
/// servers of that cloud (created there if missing, with a private interface on the default
/// subnet), and the simulated cloudscale CCM initialises the nodes and reconciles LoadBalancer
/// Services into that cloud.
pub async fn embedded_cluster(
    _world: std::path::PathBuf,
    _cloudscale: Option<CloudscaleEndpoint>,
) -> std::io::Result<EmbeddedCluster> {
    Err(std::io::Error::other(
        "the embedded cluster is not built yet",
    ))
}
