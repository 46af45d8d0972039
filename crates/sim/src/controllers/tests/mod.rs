//! Integration tests: the cloudscale simulator and the Kubernetes simulator in-process, the
//! controllers driven pass by pass over HTTP, the results read back from both APIs.

mod embedded;
mod load_balancers;
mod nodes;
mod scope;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;

use super::embedded::cloud_backed_nodes;
use super::http::{Cloud, Kube, MERGE_PATCH};
use super::{
    CloudscaleEndpoint, ControllerOptions, Controllers, ReconcileRecord, RECORD_ANNOTATION,
};
use crate::cloudscale::{self, SimHandle, SimOptions, DEFAULT_TOKEN};
use crate::kubernetes::{self, KubeSimHandle, KubeSimOptions};

/// Short, so a test's passes take milliseconds; the CCM's pauses scale with it.
const PASS: Duration = Duration::from_millis(20);

struct Harness {
    kube: Kube,
    cloud: Cloud,
    controllers: Controllers,
    options: ControllerOptions,
    history: Arc<Mutex<Vec<ReconcileRecord>>>,
    kube_url: String,
    _cloud_sim: SimHandle,
    _kube_sim: KubeSimHandle,
    _dir: TempDir,
}

impl Harness {
    /// Both simulators, three servers, three uninitialised nodes; no pass run yet.
    async fn start() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let options = SimOptions {
            settle: Duration::from_millis(20),
            ..SimOptions::default()
        };
        let cloud_sim = cloudscale::spawn(
            dir.path().join("cloud.json"),
            "127.0.0.1:0".parse().unwrap(),
            options,
        )
        .await
        .unwrap();
        let endpoint = CloudscaleEndpoint {
            api: cloud_sim.base_url(),
            token: DEFAULT_TOKEN.into(),
        };
        let fresh_nodes = cloud_backed_nodes(&endpoint).await.unwrap();
        let kube_sim = kubernetes::spawn(KubeSimOptions {
            fresh_nodes,
            ..KubeSimOptions::new(dir.path().join("kube.json"))
        })
        .await
        .unwrap();
        let history = Arc::new(Mutex::new(Vec::new()));
        let options = ControllerOptions {
            kube: Kube::new(kube_sim.url()),
            cloudscale: Some(endpoint.clone()),
            pass: PASS,
        };
        Harness {
            kube: Kube::new(kube_sim.url()),
            cloud: Cloud::new(&endpoint.api, &endpoint.token),
            controllers: Controllers::new(&options, history.clone()).unwrap(),
            options,
            history,
            kube_url: kube_sim.url().to_owned(),
            _cloud_sim: cloud_sim,
            _kube_sim: kube_sim,
            _dir: dir,
        }
    }

    /// New controllers on the same simulators, as a new skyplan process starts them: nothing
    /// synced, an empty history.
    fn restart_controllers(&mut self) {
        self.history = Arc::new(Mutex::new(Vec::new()));
        self.controllers = Controllers::new(&self.options, self.history.clone()).unwrap();
    }

    async fn passes(&mut self, count: usize) {
        for _ in 0..count {
            self.controllers.pass().await;
        }
    }

    async fn node(&self, name: &str) -> Value {
        self.kube
            .get(&format!("/api/v1/nodes/{name}"))
            .await
            .unwrap()
    }

    async fn service(&self, name: &str) -> Value {
        self.kube
            .get(&format!("/api/v1/namespaces/default/services/{name}"))
            .await
            .unwrap()
    }

    async fn create_service(&self, name: &str, ports: Value, annotations: Value) -> Value {
        let body = json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"type": "LoadBalancer", "selector": {"app": name}, "ports": ports},
        });
        self.kube
            .post("/api/v1/namespaces/default/services", &body)
            .await
            .unwrap()
    }

    async fn merge_service(&self, name: &str, patch: Value) -> Value {
        self.kube
            .patch(
                &format!("/api/v1/namespaces/default/services/{name}"),
                MERGE_PATCH,
                &patch,
            )
            .await
            .unwrap()
    }

    /// The Service's last reconcile as the controller wrote it on the Service.
    async fn record(&self, name: &str) -> ReconcileRecord {
        let service = self.service(name).await;
        let text = service["metadata"]["annotations"][RECORD_ANNOTATION]
            .as_str()
            .unwrap_or_else(|| panic!("no record on {service}"));
        serde_json::from_str(text).unwrap()
    }

    fn history(&self) -> Vec<ReconcileRecord> {
        self.history.lock().unwrap().clone()
    }

    async fn list(&self, path: &str) -> Vec<Value> {
        self.cloud.list(path).await.unwrap()
    }

    async fn server_uuid(&self, name: &str) -> String {
        let servers = self.list("servers").await;
        let server = servers.iter().find(|s| s["name"] == name).unwrap();
        server["uuid"].as_str().unwrap().to_owned()
    }
}

fn names(objects: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = objects
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn uuids(objects: &[Value]) -> Vec<String> {
    let mut uuids: Vec<String> = objects
        .iter()
        .map(|o| o["uuid"].as_str().unwrap().to_owned())
        .collect();
    uuids.sort();
    uuids
}
