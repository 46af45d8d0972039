//! The embedded `provider = "kubernetes"` cluster: the Kubernetes simulator, and beside an
//! embedded cloud (cloudscale or PhoenixNAP), three servers backing its nodes and that
//! cloud's simulated CCM.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::http::{Cloud, Kube};
use super::nodes::UNINITIALIZED_TAINT;
use super::objects::Node;
use super::phoenixnap::{self, PnapControllerOptions};
use super::{
    start, CloudscaleEndpoint, ControllerOptions, ControllersHandle, EmbeddedClouds, PnapEndpoint,
};
use crate::kubernetes::{self, FreshNode, KubeFaults, KubeSimHandle, KubeSimOptions};

/// The pass interval of the embedded CCM in milliseconds (default 200).
pub const PASS_ENV: &str = "SKYPLAN_SIM_CCM_PASS_MS";
const DEFAULT_PASS: Duration = Duration::from_millis(200);
/// How long start-up waits for the CCM to initialise the fresh nodes.
const INIT_LIMIT: Duration = Duration::from_secs(5);
const NODE_NAMES: [&str; 3] = ["node-1", "node-2", "node-3"];
/// The Kubernetes version the simulator reports (the CCM reads it for `ipMode`).
const VERSION: (u32, u32) = (1, 33);
const SERVER_FLAVOR: &str = "flex-8-4";
const SERVER_IMAGE: &str = "debian-12";
const SERVER_ZONE: &str = "lpg1";

/// The embedded `provider = "kubernetes"` cluster, running while skyplan runs.
pub struct EmbeddedCluster {
    url: String,
    api: KubeSimHandle,
    controllers: Option<ControllersHandle>,
    /// Why the cloud's CCM did not start (a configuration the real one dies of).
    controller_error: Option<String>,
}

impl EmbeddedCluster {
    /// The simulated cluster's API root, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Why the backing cloud's controller refused to start, if it did: the real CCM would
    /// crash-loop, leaving nodes uninitialised and LoadBalancer Services pending.
    pub fn controller_error(&self) -> Option<&str> {
        self.controller_error.as_deref()
    }

    /// Every reconcile record of the cluster's CCM so far, oldest first.
    pub fn history(&self) -> Vec<super::ReconcileRecord> {
        self.controllers
            .as_ref()
            .map(ControllersHandle::history)
            .unwrap_or_default()
    }

    /// Stops the controllers, then the API, writing the world file.
    pub async fn shutdown(self) -> io::Result<()> {
        if let Some(controllers) = self.controllers {
            controllers.stop().await;
        }
        self.api.shutdown().await
    }
}

pub(super) fn pass_interval() -> Duration {
    std::env::var(PASS_ENV)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map_or(DEFAULT_PASS, Duration::from_millis)
}

/// How long startup waits for the controllers' first pass (a real one takes seconds; the
/// embedded cloud answers in milliseconds).
const FIRST_PASS_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Starts the embedded cluster over `world` (`<state-dir>/embedded/kubernetes/<cluster>.json`).
/// With an embedded cloud beside it, a fresh world's three nodes are backed by three servers
/// of that cloud (created there if missing: cloudscale ones with a private interface on the
/// default subnet, PhoenixNAP BMC servers `node-1`..`node-3`), and that cloud's simulated CCM
/// initialises the nodes and reconciles LoadBalancer Services into it. One cloud backs a
/// cluster: cloudscale when both are given. `faults`: what its API does wrong on purpose.
pub async fn embedded_cluster(
    world: PathBuf,
    clouds: EmbeddedClouds,
    faults: KubeFaults,
) -> io::Result<EmbeddedCluster> {
    if let Some(dir) = world.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let cloud = Backing::of(clouds);
    let fresh_nodes = match (&cloud, world.exists()) {
        (Backing::Cloudscale(endpoint), false) => cloud_backed_nodes(endpoint).await?,
        (Backing::Phoenixnap(endpoint), false) => phoenixnap::cloud_backed_nodes(endpoint).await?,
        _ => kubernetes::default_fresh_nodes(),
    };
    let api = kubernetes::spawn(KubeSimOptions {
        fresh_nodes,
        version: VERSION,
        faults,
        ..KubeSimOptions::new(world)
    })
    .await?;
    let url = api.url().to_owned();
    let (controllers, controller_error) = match start_controllers(&url, cloud).await {
        Ok(handle) => (handle, None),
        Err(reason) => (None, Some(reason)),
    };
    if let Some(handle) = &controllers {
        wait_until_initialised(&Kube::new(&url)).await;
        handle.first_pass(FIRST_PASS_LIMIT).await;
    }
    Ok(EmbeddedCluster {
        url,
        api,
        controllers,
        controller_error,
    })
}

/// The one cloud behind the cluster's nodes.
enum Backing {
    None,
    Cloudscale(CloudscaleEndpoint),
    Phoenixnap(PnapEndpoint),
}

impl Backing {
    fn of(clouds: EmbeddedClouds) -> Backing {
        match (clouds.cloudscale, clouds.phoenixnap) {
            (Some(endpoint), _) => Backing::Cloudscale(endpoint),
            (None, Some(endpoint)) => Backing::Phoenixnap(endpoint),
            (None, None) => Backing::None,
        }
    }
}

/// The backing cloud's CCM; an error is a configuration its real CCM would die of.
async fn start_controllers(url: &str, cloud: Backing) -> Result<Option<ControllersHandle>, String> {
    match cloud {
        Backing::None => Ok(None),
        Backing::Cloudscale(endpoint) => Ok(Some(
            start(ControllerOptions {
                kube: Kube::new(url),
                cloudscale: Some(endpoint),
                pass: pass_interval(),
            })
            .await,
        )),
        Backing::Phoenixnap(pnap) => {
            let pass = pass_interval();
            let options = PnapControllerOptions {
                kube: Kube::new(url),
                pnap,
                pass,
                reaper: phoenixnap::reaper_interval(pass),
            };
            match phoenixnap::start(options).await {
                Ok(handle) => Ok(Some(handle)),
                Err(reason) => {
                    tracing::warn!(%reason, "the simulated PhoenixNAP CCM does not start");
                    Err(reason)
                }
            }
        }
    }
}

/// The servers `node-1`..`node-3` (created if missing) as kubelets with
/// `--cloud-provider=external` register them: uninitialised, with the private address.
pub(super) async fn cloud_backed_nodes(
    endpoint: &CloudscaleEndpoint,
) -> io::Result<Vec<FreshNode>> {
    let cloud = Cloud::new(&endpoint.api, &endpoint.token);
    let existing = cloud.list("servers").await.map_err(io::Error::other)?;
    let network = private_network(&cloud).await?;
    let mut nodes = Vec::new();
    for name in NODE_NAMES {
        let server = match existing.iter().find(|s| s["name"] == name) {
            Some(server) => server.clone(),
            None => cloud
                .post("servers", &server_request(name, &network))
                .await
                .map_err(io::Error::other)?,
        };
        nodes.push(FreshNode {
            name: name.to_owned(),
            internal_ip: private_address(&server).unwrap_or_default(),
            uninitialized: true,
            provider_id: None,
        });
    }
    Ok(nodes)
}

fn server_request(name: &str, network: &str) -> Value {
    json!({
        "name": name,
        "flavor": SERVER_FLAVOR,
        "image": SERVER_IMAGE,
        "zone": SERVER_ZONE,
        "interfaces": [{"network": "public"}, {"network": network}],
    })
}

/// The account's default private network (the first, named `default` if there is one).
async fn private_network(cloud: &Cloud) -> io::Result<String> {
    let networks = cloud.list("networks").await.map_err(io::Error::other)?;
    networks
        .iter()
        .find(|n| n["name"] == "default")
        .or_else(|| networks.first())
        .and_then(|n| n["uuid"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| io::Error::other("the cloud has no private network for the nodes"))
}

fn private_address(server: &Value) -> Option<String> {
    server["interfaces"]
        .as_array()?
        .iter()
        .filter(|i| i["type"] != "public")
        .flat_map(|i| i["addresses"].as_array().cloned().unwrap_or_default())
        .find(|a| a["version"] == 4)
        .and_then(|a| a["address"].as_str().map(str::to_owned))
}

/// Bounded: a cluster whose nodes stay uninitialised is still a cluster (skyplan's drift
/// reports them), so this never fails.
async fn wait_until_initialised(kube: &Kube) {
    let started = tokio::time::Instant::now();
    while started.elapsed() < INIT_LIMIT {
        if let Ok(nodes) = kube.list_nodes().await {
            let pending = nodes
                .iter()
                .filter_map(Node::from_json)
                .any(|n| n.has_taint(UNINITIALIZED_TAINT));
            if !pending {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
