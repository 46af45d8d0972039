//! The simulated PhoenixNAP CCM (`phoenixnap/k8s-cloud-provider-bmc` v1.0.0, research/
//! phoenixnap.md §5-§6), following its code rather than its README, bugs included: the
//! cloud-node and lifecycle controllers with its InstancesV2, the service controller of
//! cloud-provider v0.23.5 around its kube-vip load balancer (a /29 IP block per Service,
//! tagged, attached to the configured public network, `spec.loadBalancerIP` = base + 2), and
//! the reaper that detaches and deletes released blocks. Like the other simulated CCMs it is
//! an HTTP client of the simulated Kubernetes API and of the simulated cloud (`sim/phoenixnap`,
//! OAuth2 client credentials), and shares no code with `provider/`.
//!
//! Public surface: [`PnapEndpoint`], [`PnapCcmConfig`], [`PnapControllerOptions`], [`start`]
//! → the shared [`ControllersHandle`](super::ControllersHandle), [`reaper_interval`],
//! [`REAPER_ENV`] and [`LAST_ERROR_ANNOTATION`]. What each reconcile did is the shared
//! [`ReconcileRecord`] on the Service's `sim.skyplan.dev/last-reconcile` annotation, with
//! actions such as `create tag usage`, `create ip block <id> <cidr> in PHX`,
//! `attach ip block <cidr> to network <id>`, `set loadBalancerIP <ip>`,
//! `clear loadBalancerIP`, `tag ip block <id> <cidr> delete=true`.
//!
//! Where it departs from v1.0.0 on purpose: a configuration the real CCM dies of (no location
//! with the load balancer on, `kube-vip:///x`) makes [`start`] refuse with the reason instead
//! of crash-looping; a nil implementor (a scheme other than kube-vip) is an error on the
//! Service instead of a panic of the whole process; the kube-system UID is read on the first
//! pass and again until it is read (the real CCM dies and restarts).
//!
//! Codemap: `client` the four SDK clients and their token sources; `config` the settings;
//! `instances` node → server and the node metadata; `nodes` node init, lifecycle and the
//! kubelet stand-in; `blocks` tags, filters and the Service's address; `balancer`
//! Get/Ensure/Update/EnsureDeleted; `controller` the service controller; `reaper` the
//! release loop.

mod balancer;
mod blocks;
mod client;
mod config;
mod controller;
mod embedded;
mod instances;
mod nodes;
mod reaper;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

pub use super::cloudstack::LAST_ERROR_ANNOTATION;
pub use config::{LbSettings, PnapCcmConfig};
pub(crate) use embedded::cloud_backed_nodes;
pub use reaper::{reaper_interval, REAPER_ENV};

use super::http::Kube;
use super::objects::Node;
use super::{ControllersHandle, ReconcileRecord};
use balancer::Balancer;
use client::{Credentials, PnapApi};
use controller::ServiceController;

/// Where the simulated PhoenixNAP is, and the CCM's configuration for it.
#[derive(Clone)]
pub struct PnapEndpoint {
    /// `http://127.0.0.1:PORT`: the API bases and the token endpoint are under it.
    pub base_url: String,
    pub client_id: String,
    pub client_secret: String,
    /// `PNAP_LOCATION`.
    pub location: String,
    /// `PNAP_LOAD_BALANCER`, `kube-vip://<public network id>`; empty disables it.
    pub load_balancer: String,
}

/// Never shows the secret.
impl fmt::Debug for PnapEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PnapEndpoint")
            .field("base_url", &self.base_url)
            .field("client_id", &self.client_id)
            .field("location", &self.location)
            .field("load_balancer", &self.load_balancer)
            .finish_non_exhaustive()
    }
}

impl PnapEndpoint {
    pub fn ccm_config(&self) -> PnapCcmConfig {
        PnapCcmConfig {
            location: self.location.clone(),
            load_balancer: self.load_balancer.clone(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct PnapControllerOptions {
    /// The cluster's API.
    pub kube: Kube,
    pub pnap: PnapEndpoint,
    /// The pause between passes (see [`super::PASS_ENV`]).
    pub pass: Duration,
    /// The reaper's tick (the real one: 30 s; see [`reaper_interval`]).
    pub reaper: Duration,
}

/// The CCM, one pass at a time; the reaper ticks on its own clock.
pub(crate) struct PnapController {
    kube: Kube,
    api: PnapApi,
    /// `None`: the load balancer is disabled (no service controller, no reaper).
    lb: Option<LbSettings>,
    /// The kube-system namespace's UID, read once.
    cluster_id: Option<String>,
    services: ServiceController,
}

impl PnapController {
    /// Refuses a configuration the real CCM exits on, with its reason.
    pub(crate) fn new(
        options: &PnapControllerOptions,
        history: Arc<Mutex<Vec<ReconcileRecord>>>,
    ) -> Result<Self, String> {
        let lb = options.pnap.ccm_config().parse()?;
        let kube = options.kube.clone();
        let credentials = Credentials {
            client_id: options.pnap.client_id.clone(),
            client_secret: options.pnap.client_secret.clone(),
        };
        Ok(PnapController {
            api: PnapApi::new(&options.pnap.base_url, &credentials),
            services: ServiceController::new(kube.clone(), history),
            kube,
            lb,
            cluster_id: None,
        })
    }

    /// Consecutive failed syncs of `namespace/name`.
    #[cfg(test)]
    pub(crate) fn failures(&self, key: &str) -> u32 {
        self.services.failures(key)
    }

    /// `newLoadBalancers` reads the kube-system UID before anything runs; until it has it the
    /// CCM is not up.
    async fn cluster_id(&mut self) -> Option<String> {
        if self.cluster_id.is_none() {
            let namespace = self.kube.get("/api/v1/namespaces/kube-system").await.ok()?;
            self.cluster_id = namespace["metadata"]["uid"].as_str().map(str::to_owned);
        }
        self.cluster_id.clone()
    }

    /// Nodes first (init, the kubelet stand-in, lifecycle), then Services on the nodes as they
    /// are after that. A failed listing skips the rest of the pass.
    pub(crate) async fn pass(&mut self) {
        let cluster_id = match self.lb.is_some() {
            true => match self.cluster_id().await {
                Some(id) => Some(id),
                None => return,
            },
            false => None,
        };
        let Ok(raw) = self.kube.list_nodes().await else {
            return;
        };
        nodes::initialise_nodes(&self.kube, &self.api, &decode_nodes(&raw)).await;
        let Ok(raw) = self.kube.list_nodes().await else {
            return;
        };
        nodes::follow_servers(&self.kube, &self.api, &raw).await;
        let Ok(raw) = self.kube.list_nodes().await else {
            return;
        };
        nodes::monitor_nodes(&self.kube, &self.api, &decode_nodes(&raw)).await;
        let (Some(settings), Some(cluster_id)) = (&self.lb, cluster_id) else {
            return;
        };
        let (Ok(raw_nodes), Ok(raw_services)) = (
            self.kube.list_nodes().await,
            self.kube.list_services().await,
        ) else {
            return;
        };
        let balancer = Balancer {
            api: &self.api,
            kube: &self.kube,
            settings,
            cluster_id: &cluster_id,
        };
        self.services
            .pass(&balancer, &raw_services, &decode_nodes(&raw_nodes))
            .await;
    }

    /// One reaper tick; what it did. Nothing without the load balancer or the cluster ID.
    pub(crate) async fn reap(&mut self) -> Vec<String> {
        if self.lb.is_none() {
            return Vec::new();
        }
        let Some(cluster_id) = self.cluster_id().await else {
            return Vec::new();
        };
        match &self.lb {
            Some(settings) => reaper::tick(&self.api, &settings.network, &cluster_id).await,
            None => Vec::new(),
        }
    }
}

fn decode_nodes(raw: &[serde_json::Value]) -> Vec<Node> {
    raw.iter().filter_map(Node::from_json).collect()
}

/// Starts the CCM; it runs until the handle is stopped. An error is the configuration the
/// real CCM would die of, with its reason.
pub async fn start(options: PnapControllerOptions) -> Result<ControllersHandle, String> {
    let history = Arc::new(Mutex::new(Vec::new()));
    let mut controller = PnapController::new(&options, history.clone())?;
    let (stop, mut stopped) = watch::channel(false);
    let (passed, passes) = watch::channel(0u64);
    let (pass, reaper) = (options.pass, options.reaper);
    let task = tokio::spawn(async move {
        // A ticker's first tick is one interval after start, as `time.NewTicker`'s.
        let mut last_reap = tokio::time::Instant::now();
        loop {
            controller.pass().await;
            passed.send_modify(|n| *n += 1);
            if last_reap.elapsed() >= reaper {
                last_reap = tokio::time::Instant::now();
                controller.reap().await;
            }
            tokio::select! {
                _ = tokio::time::sleep(pass) => {}
                _ = stopped.changed() => return,
            }
        }
    });
    Ok(ControllersHandle {
        stop,
        task: Some(task),
        history,
        passes,
    })
}
