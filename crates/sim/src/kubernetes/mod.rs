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
//!
//! Map: `server.rs` starts and stops; `state.rs` the shared world; `world.rs` the data and the
//! fresh cluster; `store.rs` the generic verbs (get, list, create, update, patch, delete) with
//! resourceVersion checks; `strategy/` what the apiserver does per kind before it stores
//! (defaults, validation, `alloc.rs` the Service IP and port allocation); `patch/` the four
//! patch engines; `selector.rs` label selectors; `routes/` the URLs; `discovery.rs`,
//! `openapi.rs` what kubectl reads before it acts; `status.rs` the error bodies.

mod alloc;
mod discovery;
mod faults;
mod health;
mod kinds;
mod openapi;
mod patch;
mod persist;
mod protobuf;
mod routes;
mod selector;
mod server;
mod state;
mod stats;
mod status;
mod store;
mod strategy;
mod world;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::path::PathBuf;

pub use faults::{KubeFaults, KubeFaultsError, UnhealthyNodes};
pub use health::NOT_READY_REASON;
pub use server::{spawn, KubeSimHandle};
pub use stats::RequestCounts;

/// A node of a fresh world, as a kubelet with `--cloud-provider=external` registers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreshNode {
    pub name: String,
    /// InternalIP the kubelet reports.
    pub internal_ip: String,
    /// Registered with `node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule`, for a
    /// cloud controller to initialise.
    pub uninitialized: bool,
    /// `spec.providerID`, as a cloud controller set it when it initialised the node; `None`
    /// for a node no controller has seen yet.
    pub provider_id: Option<String>,
}

impl FreshNode {
    /// A Ready, initialised node without a providerID.
    pub fn ready(name: impl Into<String>, internal_ip: impl Into<String>) -> FreshNode {
        FreshNode {
            name: name.into(),
            internal_ip: internal_ip.into(),
            uninitialized: false,
            provider_id: None,
        }
    }
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
    /// What the simulator does wrong on purpose (`faults.rs`); none by default.
    pub faults: KubeFaults,
}

impl KubeSimOptions {
    /// Serves `world` on a free loopback port with the default nodes and version 1.33.
    pub fn new(world: PathBuf) -> KubeSimOptions {
        KubeSimOptions {
            world,
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            fresh_nodes: default_fresh_nodes(),
            version: (1, 33),
            faults: KubeFaults::default(),
        }
    }
}

/// `node-1`..`node-3` with InternalIPs 10.0.0.11-13.
pub fn default_fresh_nodes() -> Vec<FreshNode> {
    (1..=3)
        .map(|i| FreshNode::ready(format!("node-{i}"), format!("10.0.0.{}", 10 + i)))
        .collect()
}
