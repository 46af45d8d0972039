//! Each CKS cluster's own Kubernetes API. While a cluster is up, a Kubernetes simulator
//! (`crate::kubernetes`) serves it, its world beside the CloudStack world
//! (`<world-stem>.k8s/<cluster-uuid>.json`), with one Node per control and worker VM as the
//! kubelets register them and the CloudStack CCM initialises them (`nodes.rs`). The nodes
//! follow the VMs: a scale adds or deletes Nodes, a stopped VM makes its Node NotReady and
//! tainted shutdown. `getKubernetesClusterConfig` gives the API's URL.
//!
//! A stopped cluster has no API: CKS stops every VM of the cluster, the control VMs that run
//! the API server among them, so its address refuses connections until the cluster is started
//! again (same world, same port when it is still free). A destroyed cluster's world goes.
//!
//! The grace periods of the real controllers (40 s before a silent kubelet makes its node
//! NotReady, the CCM's 5-minute node status loop) are not simulated: a pass every
//! [`PASS`] applies what they would eventually do.

pub mod kube;
pub mod nodes;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use self::kube::Kube;
use self::nodes::ClusterView;
use super::state::Sim;
use crate::controllers::{cloudstack as ccm, ControllersHandle};
use crate::kubernetes::{self, KubeSimHandle, KubeSimOptions};

/// How often the cluster APIs are brought in line with the CloudStack world.
pub const PASS: Duration = Duration::from_millis(100);

/// The API URL of each cluster that has had one, by cluster id: what
/// `getKubernetesClusterConfig` writes into the kubeconfig. A stopped cluster keeps its last
/// URL, as the server keeps the kubeconfig it stored at create.
pub type ApiUrls = Arc<Mutex<BTreeMap<String, String>>>;

/// The running cluster APIs and the task that keeps them in step.
pub struct ClusterApis {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl ClusterApis {
    /// Brings the APIs in line once (so a kubeconfig asked for right after start names a
    /// live API), then keeps them in step every [`PASS`].
    pub async fn start(sim: Sim, world: &Path, endpoint: String) -> ClusterApis {
        let mut supervisor = Supervisor {
            endpoint,
            sim,
            dir: world.with_extension("k8s"),
            running: BTreeMap::new(),
        };
        supervisor.pass().await;
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = tokio::time::sleep(PASS) => supervisor.pass().await,
                }
            }
            supervisor.stop_all().await;
        });
        ClusterApis { stop, task }
    }

    /// Stops every cluster API, writing their worlds.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        if let Err(e) = self.task.await {
            tracing::warn!(error = %e, "the cluster APIs' task ended badly");
        }
    }
}

struct Running {
    api: KubeSimHandle,
    /// The view the Nodes were last brought in line with (`None`: not yet, or it failed).
    synced: Option<ClusterView>,
    /// The cluster's simulated CloudStack CCM (`sim::controllers::cloudstack`).
    ccm: Option<ControllersHandle>,
}

struct Supervisor {
    /// This simulator's `/client/api` URL, for the clusters' CCMs.
    endpoint: String,
    sim: Sim,
    dir: PathBuf,
    running: BTreeMap<String, Running>,
}

impl Supervisor {
    async fn pass(&mut self) {
        let views = self.sim.with_world(|world, _| (nodes::views(world), false));
        self.stop_down(&views).await;
        self.forget_destroyed(&views);
        for view in views.iter().filter(|v| v.api_up()) {
            if !self.running.contains_key(&view.id) {
                match self.start_api(view).await {
                    Ok(api) => {
                        let ccm = Some(start_ccm(&self.sim, &self.endpoint, api.url()).await);
                        let running = Running {
                            api,
                            synced: None,
                            ccm,
                        };
                        self.running.insert(view.id.clone(), running);
                    }
                    Err(e) => {
                        tracing::warn!(cluster = %view.name, error = %e, "cluster API");
                        continue;
                    }
                }
            }
            let running = self.running.get_mut(&view.id).expect("started above");
            if running.synced.as_ref() == Some(view) {
                continue;
            }
            match sync_nodes(&Kube::new(running.api.url()), view).await {
                Ok(()) => running.synced = Some(view.clone()),
                Err(e) => tracing::debug!(cluster = %view.name, error = %e, "node sync"),
            }
        }
    }

    /// Stops the API of every cluster that is down or gone.
    async fn stop_down(&mut self, views: &[ClusterView]) {
        let down: Vec<String> = self
            .running
            .keys()
            .filter(|id| !views.iter().any(|v| &v.id == *id && v.api_up()))
            .cloned()
            .collect();
        for id in down {
            if let Some(mut running) = self.running.remove(&id) {
                stop_ccm(&mut running).await;
                if let Err(e) = running.api.shutdown().await {
                    tracing::warn!(cluster = %id, error = %e, "stopping a cluster API");
                }
            }
        }
    }

    /// A destroyed (or expunged) cluster's API world and URL go with it.
    fn forget_destroyed(&self, views: &[ClusterView]) {
        let mut urls = self
            .sim
            .cluster_apis()
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        urls.retain(|id, _| {
            let alive = views.iter().any(|v| &v.id == id && v.state != "Destroyed");
            if !alive {
                let _ = std::fs::remove_file(self.dir.join(format!("{id}.json")));
            }
            alive
        });
    }

    async fn start_api(&self, view: &ClusterView) -> std::io::Result<KubeSimHandle> {
        std::fs::create_dir_all(&self.dir)?;
        let world = self.dir.join(format!("{}.json", view.id));
        let previous = self.url_of(&view.id).and_then(|url| port_of(&url));
        let options = KubeSimOptions {
            fresh_nodes: vec![],
            version: minor_version(&view.version),
            ..KubeSimOptions::new(world)
        };
        // The same port as before when it is free, so a kubeconfig written earlier still
        // reaches the cluster after a restart.
        let api = match previous {
            Some(port) => {
                let again = KubeSimOptions {
                    listen: SocketAddr::from(([127, 0, 0, 1], port)),
                    ..options.clone()
                };
                match kubernetes::spawn(again).await {
                    Ok(api) => api,
                    Err(_) => kubernetes::spawn(options).await?,
                }
            }
            None => kubernetes::spawn(options).await?,
        };
        self.sim
            .cluster_apis()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(view.id.clone(), api.url().to_owned());
        Ok(api)
    }

    fn url_of(&self, id: &str) -> Option<String> {
        let urls = self
            .sim
            .cluster_apis()
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        urls.get(id).cloned()
    }

    async fn stop_all(&mut self) {
        for (id, mut running) in std::mem::take(&mut self.running) {
            stop_ccm(&mut running).await;
            if let Err(e) = running.api.shutdown().await {
                tracing::warn!(cluster = %id, error = %e, "stopping a cluster API");
            }
        }
    }
}

/// The hook into `sim::controllers::cloudstack`: the CCM of a cluster whose API just started,
/// signing with the keys this simulator accepts.
async fn start_ccm(sim: &Sim, endpoint: &str, kube_api: &str) -> ControllersHandle {
    let keys = sim.keys();
    ccm::start(ccm::CsControllerOptions {
        kube: crate::controllers::Kube::new(kube_api),
        cloudstack: ccm::CloudStackEndpoint {
            api: endpoint.to_owned(),
            api_key: keys.api_key.clone(),
            secret_key: keys.secret_key.clone(),
        },
        pass: ccm::pass_interval(),
    })
    .await
}

async fn stop_ccm(running: &mut Running) {
    if let Some(ccm) = running.ccm.take() {
        ccm.stop().await;
    }
}

fn port_of(url: &str) -> Option<u16> {
    url.rsplit_once(':')?.1.trim_end_matches('/').parse().ok()
}

/// `1.30.2` → (1, 30), what `/version` reports.
fn minor_version(semver: &str) -> (u32, u32) {
    let mut parts = semver.split('.').map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(1), parts.next().unwrap_or(30))
}

/// The kubelets register the Nodes of new VMs, the lifecycle controller marks those of
/// stopped VMs and deletes those whose VM is gone.
async fn sync_nodes(kube: &Kube, view: &ClusterView) -> Result<(), String> {
    let live = kube.nodes().await?;
    for node in &view.nodes {
        let existing = live.iter().find(|n| n["metadata"]["name"] == node.name);
        let Some(existing) = existing else {
            kube.create_node(&nodes::node_object(node, &view.version))
                .await?;
            continue;
        };
        let update = nodes::node_update(existing, node.running);
        if let Some(conditions) = update.conditions {
            let body = json!({"status": {"conditions": conditions}});
            kube.patch_node(&node.name, true, &body).await?;
        }
        if let Some(taints) = update.taints {
            // The whole list with the version read: a concurrent change is a 409, retried
            // on the next pass from a fresh read.
            let version = &existing["metadata"]["resourceVersion"];
            let body =
                json!({"metadata": {"resourceVersion": version}, "spec": {"taints": taints}});
            kube.patch_node(&node.name, false, &body).await?;
        }
    }
    for name in nodes::orphans(&live, view) {
        kube.delete_node(name).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_and_versions_are_read_from_their_texts() {
        assert_eq!(port_of("http://127.0.0.1:41234"), Some(41234));
        assert_eq!(minor_version("1.30.2"), (1, 30));
    }
}
