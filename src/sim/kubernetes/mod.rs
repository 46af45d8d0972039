//! The Kubernetes API simulator: discovery, a minimal OpenAPI v3 (so plain `kubectl apply`
//! works), Namespaces, Nodes and Services with list, get, create, update, the four patch types
//! (JSON, merge, strategic merge with kubectl's directives, apply), delete, resourceVersion
//! with 409 on conflict, Status error bodies, and nodePort / healthCheckNodePort allocation.
//! Written from the API's published behaviour (research/kubernetes.md §2), apart from skyplan's
//! client.
//!
//! Public surface (used by `skyplan sim serve --provider kubernetes`, the embedded world and
//! tests):
//! - [`KubeSimOptions`], [`spawn`] → [`KubeSimHandle`] (`url()`, `shutdown()`), the world
//!   persisted like the other simulators (`sim/persist.rs`).
//! - [`FreshNode`]: what a world file that does not exist yet starts with.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// A node of a fresh world, as a kubelet with `--cloud-provider=external` registers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreshNode {
    pub name: String,
    /// InternalIP the kubelet reports.
    pub internal_ip: String,
    /// Registered with `node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule`, for a
    /// cloud controller to initialise.
    pub uninitialized: bool,
}

#[derive(Debug, Clone)]
pub struct KubeSimOptions {
    /// The world file; created with [`KubeSimOptions::fresh_nodes`] when missing.
    pub world: PathBuf,
    /// `127.0.0.1:0` picks a free port.
    pub listen: SocketAddr,
    /// Default: three Ready nodes `node-1`..`node-3`, already initialised.
    pub fresh_nodes: Vec<FreshNode>,
    /// `/version` major and minor (the cloudscale CCM parses them as integers).
    pub version: (u32, u32),
}

pub struct KubeSimHandle {
    url: String,
}

impl KubeSimHandle {
    /// `http://127.0.0.1:PORT`, the API root.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops serving and writes the world file.
    pub async fn shutdown(self) -> io::Result<()> {
        Ok(())
    }
}

/// Binds, loads (or creates) the world and serves it.
pub async fn spawn(_options: KubeSimOptions) -> io::Result<KubeSimHandle> {
    Err(io::Error::other(
        "the Kubernetes simulator is not built yet",
    ))
}
