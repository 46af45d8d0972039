//! The real kube-apiserver (v1.37.2, built from Go modules by `.ci/kube-apiserver.sh`) the `kubernetes::real_apiserver` tests
//! share: `.ci/run` starts one and sets SKYPLAN_TEST_KUBECONFIG. Nothing reconciles in it — no
//! kubelets, no controllers — so a test makes the Nodes it needs, under names of its own (the
//! tests run side by side against one server), and deletes them when it ends. kubectl, an
//! independent client, makes and reads them.

pub mod cloudscale_controller;
pub mod discovery;
pub mod in_cluster;
pub mod in_cluster_example;
pub mod node_health;
pub mod node_policies;
pub mod phoenixnap_controller;
pub mod services;
pub mod simulator_parity;
pub mod state_backend;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::{run, Output, Project};

/// One test's view of the real server: its kubeconfig and a prefix unique to the test.
pub struct RealCluster {
    pub kubeconfig: PathBuf,
    pub prefix: String,
    nodes: std::sync::Mutex<Vec<String>>,
    namespaces: std::sync::Mutex<Vec<String>>,
}

impl RealCluster {
    /// The server SKYPLAN_TEST_KUBECONFIG reaches, with kubectl to make and read objects in
    /// it; a test without them fails saying so (the tests are ignored unless asked for).
    pub fn get() -> RealCluster {
        let path = crate::support::needs::real_kubeconfig();
        crate::support::needs::kubectl();
        let suffix = uuid::Uuid::new_v4().simple().to_string();
        RealCluster {
            kubeconfig: PathBuf::from(path),
            prefix: format!("t{}", &suffix[..8]),
            nodes: Default::default(),
            namespaces: Default::default(),
        }
    }

    /// `[cluster.prod]` reaching this server through its kubeconfig.
    pub fn cluster_toml(&self) -> String {
        format!(
            "[cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"{}\"\ncontext = \"real\"\n",
            self.kubeconfig.display()
        )
    }

    /// A name unique to this test: `<prefix>-<name>`.
    pub fn name(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        run(self.kubectl_command(args).stdin(Stdio::null()))
    }

    pub fn kubectl_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command.env("KUBECONFIG", &self.kubeconfig).args(args);
        command
    }

    /// kubectl, which must succeed.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert_eq!(out.code, 0, "kubectl {args:?}: {out:?}");
        out.stdout
    }

    /// Creates `body` with `kubectl create -f -`.
    pub fn create(&self, body: &Value) {
        let mut child = self
            .kubectl_command(&["create", "-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run kubectl");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(body.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "kubectl create: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A Node named `<prefix>-<name>` with `labels`, Ready, at `ip` — as a kubelet registers
    /// one and reports it ready (the admission plugin TaintNodesByCondition adds `not-ready`
    /// to a node created without a Ready condition; a kubelet's node lifecycle removes it once
    /// Ready, which here the test does). Returns the full name.
    pub fn ready_node(&self, name: &str, labels: Value, ip: &str) -> String {
        let full = self.name(name);
        let mut labels = labels;
        labels["kubernetes.io/hostname"] = json!(full);
        labels["skyplan-test"] = json!(self.prefix);
        self.create(&json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": full, "labels": labels},
        }));
        self.nodes.lock().unwrap().push(full.clone());
        let status = json!({"status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2026-11-26T00:00:00Z",
                "lastTransitionTime": "2026-11-26T00:00:00Z"}],
            "addresses": [{"type": "InternalIP", "address": ip},
                          {"type": "Hostname", "address": full}],
        }});
        self.kubectl_ok(&[
            "patch",
            "node",
            &full,
            "--subresource=status",
            "--type=merge",
            "-p",
            &status.to_string(),
        ]);
        self.kubectl_ok(&[
            "taint",
            "node",
            &full,
            "node.kubernetes.io/not-ready:NoSchedule-",
        ]);
        full
    }

    /// Deletes `node` when the test ends (a node the test made itself).
    pub fn forget_node_on_drop(&self, node: &str) {
        self.nodes.lock().unwrap().push(node.to_string());
    }

    /// A namespace of this test's own, deleted when the test ends.
    pub fn namespace(&self, name: &str) -> String {
        let full = self.name(name);
        self.kubectl_ok(&["create", "namespace", &full]);
        self.namespaces.lock().unwrap().push(full.clone());
        full
    }

    /// The object as the server holds it (managedFields included); `args` name it as kubectl
    /// takes them (`node NAME`, `service NAME -n NAMESPACE`).
    pub fn object(&self, args: &[&str]) -> Value {
        let mut command = vec!["get"];
        command.extend_from_slice(args);
        command.extend_from_slice(&["-o", "json", "--show-managed-fields"]);
        serde_json::from_str(&self.kubectl_ok(&command)).expect("kubectl's JSON")
    }

    pub fn node(&self, name: &str) -> Value {
        self.object(&["node", name])
    }

    /// The Service `namespace/name`.
    pub fn service(&self, namespace: &str, name: &str) -> Value {
        self.object(&["service", name, "-n", namespace])
    }

    /// A node's taints as `key=value:Effect` (or `key:Effect`), sorted.
    pub fn taints(&self, name: &str) -> Vec<String> {
        let node = self.node(name);
        let taints = node["spec"]["taints"].as_array().cloned();
        taints
            .unwrap_or_default()
            .iter()
            .map(|t| match t["value"].as_str() {
                Some(value) => format!("{}={value}:{}", t["key"].as_str().unwrap(), t["effect"]),
                None => format!("{}:{}", t["key"].as_str().unwrap(), t["effect"]),
            })
            .map(|t| t.replace('"', ""))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// The field managers that wrote the node.
    pub fn node_managers(&self, name: &str) -> Vec<String> {
        managers(&self.node(name))
    }

    /// A project whose `[cluster.prod]` is this server, followed by `rest`.
    pub fn project(&self, rest: &str) -> Project {
        let project = Project::new();
        project.config(&format!("{}\n{rest}", self.cluster_toml()));
        project
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        let nodes = self.nodes.lock().unwrap().clone();
        let namespaces = self.namespaces.lock().unwrap().clone();
        for node in nodes {
            let _ = self.kubectl(&["delete", "node", &node, "--wait=false"]);
        }
        for namespace in namespaces {
            let _ = self.kubectl(&["delete", "namespace", &namespace, "--wait=false"]);
        }
    }
}

impl RealCluster {
    /// A Node named `<prefix>-<name>` as a kubelet with `--cloud-provider=external` registers
    /// one and reports it Ready: the cloud's `uninitialized` taint, admission's `not-ready`
    /// taint taken off as the node lifecycle controller does. The `skyplan-test=<prefix>`
    /// label comes last, so a cloud controller scoped to it sees the node only once the rest
    /// is written and never races these writes. Returns the full name.
    pub fn cloud_node(&self, name: &str) -> String {
        let full = self.name(name);
        self.create(&json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": full, "labels": {"kubernetes.io/hostname": full}},
            "spec": {"taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized",
                                 "value": "true", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                "reason": "KubeletReady", "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2026-11-26T00:00:00Z",
                "lastTransitionTime": "2026-11-26T00:00:00Z"}]},
        }));
        self.nodes.lock().unwrap().push(full.clone());
        self.kubectl_ok(&[
            "taint",
            "node",
            &full,
            "node.kubernetes.io/not-ready:NoSchedule-",
        ]);
        let label = format!("skyplan-test={}", self.prefix);
        self.kubectl_ok(&["label", "node", &full, &label]);
        full
    }

    /// The label selector of this test's nodes made by [`RealCluster::cloud_node`] and
    /// [`RealCluster::ready_node`].
    pub fn node_selector(&self) -> String {
        format!("skyplan-test={}", self.prefix)
    }
}

/// The field managers that wrote `object` (as [`RealCluster::object`] read it).
pub fn managers(object: &Value) -> Vec<String> {
    let fields = object["metadata"]["managedFields"].as_array().cloned();
    fields
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f["manager"].as_str().map(str::to_owned))
        .collect()
}

/// The status `drift --format json` gives `address` (`in-sync`, `drifted`…): the shared server
/// holds other tests' nodes, uninitialised at times, which make any cluster drift — so a test
/// reads only its own resource's entry, not the exit code.
pub fn drift_status(out: &Output, address: &str) -> String {
    assert!(matches!(out.code, 0 | 2), "{out:?}");
    let report = out.json();
    let resources = report["resources"].as_array().cloned().unwrap_or_default();
    let entry = resources.iter().find(|r| r["address"] == address);
    let status = entry.and_then(|r| r["status"].as_str());
    status
        .unwrap_or_else(|| panic!("no {address} in {report:#}"))
        .to_string()
}

/// skyplan's report with miette's line wrapping and frame undone: one line per message.
pub fn unwrapped(text: &str) -> String {
    let lines = text
        .lines()
        .map(|l| l.trim_start_matches([' ', '│', '×']).trim());
    lines.collect::<Vec<_>>().join(" ")
}
