//! The Kubernetes simulator as the tests serve it (`skyplan sim serve --provider kubernetes`),
//! over a world file of a test's own or over a project's embedded cluster, and a plain-HTTP
//! client of its API (not skyplan's Kubernetes client): what every cloud's tests use to see and
//! change the cluster behind skyplan's back.

use std::path::PathBuf;
use std::process::Child;

use serde_json::{json, Value};

use crate::support::http;
use crate::support::{serving, sim_serve, Project};

/// `skyplan sim serve --provider kubernetes` on a free port; killed on drop.
pub struct KubeSim {
    child: Child,
    pub url: String,
}

impl KubeSim {
    pub fn start(project: &Project) -> KubeSim {
        KubeSim::start_on(&project.path().join("kube-world.json"))
    }

    /// The same over the world file `world`.
    pub fn start_on(world: &std::path::Path) -> KubeSim {
        KubeSim::start_with_faults(world, "none")
    }

    /// The same with `faults`, as `skyplan sim serve --faults` takes them.
    pub fn start_with_faults(world: &std::path::Path, faults: &str) -> KubeSim {
        let mut command = sim_serve("kubernetes", world);
        command.env("SKYPLAN_SIM_FAULTS", faults);
        let (child, url) = serving(&mut command);
        KubeSim { child, url }
    }

    /// A kubeconfig whose context `sim` points at this server (beside one that does not, so
    /// the context is what chooses).
    pub fn write_kubeconfig(&self, project: &Project) {
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: elsewhere\n\
             clusters:\n- name: sim\n  cluster:\n    server: {}\n\
             - name: elsewhere\n  cluster:\n    server: http://127.0.0.1:9\n\
             users:\n- name: nobody\n  user: {{}}\n\
             contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: nobody\n\
             - name: elsewhere\n  context:\n    cluster: elsewhere\n    user: nobody\n",
            self.url
        );
        project.write("kubeconfig.yaml", &text);
    }

    pub fn node(&self, name: &str) -> Value {
        let body = http::get(&format!("{}/api/v1/nodes/{name}", self.url))
            .ok()
            .expect("GET node");
        serde_json::from_str(&body).expect("node JSON")
    }

    /// Registers a node as a kubelet with `--cloud-provider=external` does.
    pub fn add_uninitialised_node(&self, name: &str) {
        self.add_node(serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}]}
        }));
    }

    /// Sends SIGTERM; the server writes its world and ends.
    pub fn terminate(mut self) {
        crate::support::terminate(&mut self.child);
    }

    /// Creates a node as the API would store any object POSTed to it.
    pub fn add_node(&self, body: Value) {
        let url = format!("{}/api/v1/nodes", self.url);
        let result = http::request("POST", &url).json(&body).ok();
        assert!(result.is_ok(), "POST node: {result:?}");
    }
}

impl Drop for KubeSim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The embedded cluster's world, served while `change` runs.
pub fn with_cluster<T>(project: &Project, change: impl FnOnce(&Kube) -> T) -> T {
    let sim = KubeSim::start_on(&kube_world(project));
    let kube = Kube {
        url: sim.url.clone(),
    };
    let result = change(&kube);
    sim.terminate();
    result
}

fn kube_world(project: &Project) -> PathBuf {
    project.path().join("state/embedded/kubernetes/prod.json")
}

pub struct Kube {
    pub url: String,
}

impl Kube {
    pub fn service(&self, name: &str) -> Value {
        let url = format!("{}/api/v1/namespaces/default/services/{name}", self.url);
        serde_json::from_str(&http::get(&url).ok().expect("GET service")).expect("service JSON")
    }

    pub fn create_service(&self, name: &str, ports: &[u16]) {
        let ports: Vec<Value> = ports
            .iter()
            .map(|p| json!({"name": format!("p{p}"), "port": p, "targetPort": p}))
            .collect();
        let body = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": name}, "ports": ports},
        });
        let url = format!("{}/api/v1/namespaces/default/services", self.url);
        let result = http::request("POST", &url).json(&body).ok();
        assert!(result.is_ok(), "POST service: {result:?}");
    }

    /// A full replace (PUT) of the Service as read, without `spec.loadBalancerIP`: what a
    /// tool that owns the whole object and never knew the field does.
    pub fn replace_service_without_address(&self, name: &str) {
        let mut service = self.service(name);
        service["spec"]
            .as_object_mut()
            .unwrap()
            .remove("loadBalancerIP");
        let url = format!("{}/api/v1/namespaces/default/services/{name}", self.url);
        let result = http::request("PUT", &url).json(&service).ok();
        assert!(result.is_ok(), "PUT service: {result:?}");
    }

    /// A JSON merge patch of the Service, as `kubectl patch --type merge` sends it.
    pub fn patch_service(&self, name: &str, patch: Value) {
        let url = format!("{}/api/v1/namespaces/default/services/{name}", self.url);
        let result = http::request("PATCH", &url).merge_patch(&patch).ok();
        assert!(result.is_ok(), "PATCH service: {result:?}");
    }
}
