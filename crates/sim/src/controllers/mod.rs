//! Simulated cloud controller managers for the embedded world: what runs inside a cluster and
//! changes the cloud. Each is an HTTP client of the simulated Kubernetes API and of its
//! simulated cloud, as the real one is of the real APIs, and follows the real controller's code
//! (research/kubernetes.md §1, §5; research/cloudstack.md) — written apart from skyplan's
//! predictors in `provider/`, so the tests check one reading of that code against the other.
//!
//! Public surface:
//! - [`ControllerOptions`], [`start`] → [`ControllersHandle`] (`stop()`, `history()`).
//! - [`embedded_cluster`]: the embedded `provider = "kubernetes"` cluster: the Kubernetes
//!   simulator plus, when an embedded cloud runs beside it ([`EmbeddedClouds`]: cloudscale or
//!   [`PnapEndpoint`]), servers in that cloud backing its nodes and that cloud's controller.
//! - [`ReconcileRecord`] and [`RECORD_ANNOTATION`]: what a reconcile of a Service did. Every
//!   reconcile (Ensure, Update, delete) that called the cloud, and every new error, is written
//!   as JSON to the Service's `sim.skyplan.dev/last-reconcile` annotation (a quiet success
//!   only clears an error, so the record survives the no-op Ensure every controller restart
//!   brings); every reconcile is kept in [`ControllersHandle::history`].
//!
//! Against a real API server (`skyplan sim serve --kubeconfig`): `kubeconfig` reads the
//! server, CA and credentials into a [`KubeEndpoint`] (apart from skyplan's reading in
//! `provider/kubernetes`), with a [`Scope`] on a server shared with others; `serve` starts the
//! CCM there beside the served cloud.
//!
//! Codemap (cloudscale CCM): `http` the two clients, `objects` the decoded objects;
//! `nodes` node init and lifecycle, `kubelet` the node condition stand-in, `servers` node →
//! server; `services` the service controller, `balancer` Ensure/Update/Delete, `config` the
//! annotations, `selector` label selectors, `desired`/`actual` the two states (`lbstate`),
//! `plan` the actions between them, `reconcile` running them, `writeback` what goes back
//! on the Service; `embedded` the embedded cluster. `cloudstack` and `phoenixnap` are the
//! other two CCMs, each in its own folder.

mod actual;
mod balancer;
pub mod cloudstack;
mod config;
mod desired;
mod embedded;
mod http;
mod kubeconfig;
mod kubelet;
mod lbstate;
mod nodes;
mod objects;
pub mod phoenixnap;
mod plan;
mod reconcile;
mod selector;
mod serve;
mod servers;
mod services;
mod writeback;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use embedded::{embedded_cluster, EmbeddedCluster, PASS_ENV};
pub use http::{Kube, KubeEndpoint, Scope};
pub use kubeconfig::endpoint_from_kubeconfig;
pub use phoenixnap::PnapEndpoint;
pub use serve::{cloudscale_ccm, phoenixnap_ccm, ClusterAccess};
pub use writeback::{ReconcileRecord, RECORD_ANNOTATION};

/// Where the embedded cloud beside a cluster is served.
#[derive(Debug, Clone)]
pub struct CloudscaleEndpoint {
    /// `http://127.0.0.1:PORT/v1`
    pub api: String,
    pub token: String,
}

/// The embedded clouds beside an embedded cluster: the one given backs its nodes and runs its
/// controller (cloudscale first when both are given).
#[derive(Debug, Clone, Default)]
pub struct EmbeddedClouds {
    pub cloudscale: Option<CloudscaleEndpoint>,
    pub phoenixnap: Option<PnapEndpoint>,
}

#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// The cluster's API: the simulator's, or a real server's ([`KubeEndpoint`]).
    pub kube: Kube,
    pub cloudscale: Option<CloudscaleEndpoint>,
    /// The pause between reconcile passes (the real cloudscale CCM: 5-7.5 s). The CCM's
    /// other pauses keep their ratio to it (500 ms after a delete is `pass / 10`).
    pub pass: Duration,
}

pub struct ControllersHandle {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    history: Arc<Mutex<Vec<ReconcileRecord>>>,
    /// Whole passes completed.
    passes: watch::Receiver<u64>,
}

impl ControllersHandle {
    /// Stops the controllers after their current pass.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            // Err: the task panicked; there is nothing left to stop.
            let _ = task.await;
        }
    }

    /// Every reconcile record so far, oldest first.
    pub fn history(&self) -> Vec<ReconcileRecord> {
        self.history.lock().expect("history lock").clone()
    }

    /// Waits (at most `limit`) until the controllers finished one whole pass since they
    /// started: what a restarted controller does first — Ensure of every LoadBalancer
    /// Service — is then done before anyone reads the cluster.
    pub async fn first_pass(&self, limit: std::time::Duration) {
        let mut passes = self.passes.clone();
        // A timeout or controllers that never ran leave nothing to wait for.
        let _ = tokio::time::timeout(limit, passes.wait_for(|n| *n >= 1)).await;
    }
}

/// Starts the controllers the options have a cloud for; without one nothing runs.
pub async fn start(options: ControllerOptions) -> ControllersHandle {
    let (stop, mut stopped) = watch::channel(false);
    let (passed, passes) = watch::channel(0u64);
    let history = Arc::new(Mutex::new(Vec::new()));
    let Some(mut controllers) = Controllers::new(&options, history.clone()) else {
        return ControllersHandle {
            stop,
            task: None,
            history,
            passes,
        };
    };
    let pass = options.pass;
    let task = tokio::spawn(async move {
        loop {
            controllers.pass().await;
            passed.send_modify(|n| *n += 1);
            tokio::select! {
                _ = tokio::time::sleep(pass) => {}
                _ = stopped.changed() => return,
            }
        }
    });
    ControllersHandle {
        stop,
        task: Some(task),
        history,
        passes,
    }
}

/// The cloudscale CCM's controllers, one pass at a time.
pub(crate) struct Controllers {
    kube: http::Kube,
    cloud: http::Cloud,
    services: services::ServiceController,
}

impl Controllers {
    pub(crate) fn new(
        options: &ControllerOptions,
        history: Arc<Mutex<Vec<ReconcileRecord>>>,
    ) -> Option<Self> {
        let endpoint = options.cloudscale.as_ref()?;
        let kube = options.kube.clone();
        let cloud = http::Cloud::new(&endpoint.api, &endpoint.token);
        let clock = reconcile::Clock {
            refetch_wait: options.pass,
        };
        let services =
            services::ServiceController::new(kube.clone(), cloud.clone(), clock, history);
        Some(Controllers {
            kube,
            cloud,
            services,
        })
    }

    /// Nodes first (init, the condition stand-in, lifecycle), then Services on the nodes as
    /// they are after that. A failed listing skips the rest of the pass.
    pub(crate) async fn pass(&mut self) {
        let Ok(raw_nodes) = self.kube.list_nodes().await else {
            return;
        };
        let nodes = decode_nodes(&raw_nodes);
        nodes::initialise_nodes(&self.kube, &self.cloud, &nodes).await;
        let Ok(raw_nodes) = self.kube.list_nodes().await else {
            return;
        };
        kubelet::follow_servers(&self.kube, &self.cloud, &raw_nodes).await;
        let Ok(raw_nodes) = self.kube.list_nodes().await else {
            return;
        };
        nodes::monitor_nodes(&self.kube, &self.cloud, &decode_nodes(&raw_nodes)).await;
        let (Ok(raw_nodes), Ok(raw_services)) = (
            self.kube.list_nodes().await,
            self.kube.list_services().await,
        ) else {
            return;
        };
        self.services
            .pass(&raw_services, &decode_nodes(&raw_nodes))
            .await;
    }
}

fn decode_nodes(raw: &[serde_json::Value]) -> Vec<objects::Node> {
    raw.iter().filter_map(objects::Node::from_json).collect()
}
