//! The Kubernetes simulator against the real kube-apiserver: the same kubectl requests sent to
//! both (`sim serve --provider kubernetes --kube-version` the real server's own version) get the
//! same answers where they once differed — TaintNodesByCondition's `not-ready` taint on every
//! new Node, the Node taint errors word for word (a duplicate shown as JSON from v1.34), and
//! `ipMode` on a load balancer's ingress, dropped before v1.30.

use std::process::Stdio;

use serde_json::{json, Value};

use crate::kubernetes::real_apiserver::RealCluster;
use crate::support::{run, serving, sim_serve, Output, Project};

/// Both servers, each behind its own kubeconfig.
struct Both {
    real: RealCluster,
    sim_kubeconfig: std::path::PathBuf,
    _sim: std::process::Child,
    _dir: Project,
}

impl Drop for Both {
    fn drop(&mut self) {
        let _ = self._sim.kill();
        let _ = self._sim.wait();
    }
}

impl Both {
    fn start(real: RealCluster) -> Both {
        let dir = Project::new();
        let (major, minor) = server_version(&real);
        let mut command = sim_serve("kubernetes", &dir.path().join("kube.json"));
        let (sim, url) = serving(command.args(["--kube-version", &format!("{major}.{minor}")]));
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: sim\n\
             clusters:\n- name: sim\n  cluster:\n    server: {url}\n\
             users:\n- name: nobody\n  user: {{}}\n\
             contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: nobody\n"
        );
        dir.write("kubeconfig", &kubeconfig);
        Both {
            real,
            sim_kubeconfig: dir.path().join("kubeconfig"),
            _sim: sim,
            _dir: dir,
        }
    }

    /// kubectl with `stdin` against each server: (real, simulator).
    fn kubectl(&self, args: &[&str], stdin: Option<&Value>) -> (Output, Output) {
        let sim = |args: &[&str]| {
            let mut command = std::process::Command::new("kubectl");
            command.env("KUBECONFIG", &self.sim_kubeconfig).args(args);
            command
        };
        let mut real = self.real.kubectl_command(args);
        let mut sim = sim(args);
        (with_stdin(&mut real, stdin), with_stdin(&mut sim, stdin))
    }
}

/// The real server's (MAJOR, MINOR), as `kubectl version` reads it.
fn server_version(real: &RealCluster) -> (u32, u32) {
    let version: Value =
        serde_json::from_str(&real.kubectl_ok(&["version", "-o", "json"])).unwrap();
    let part = |name: &str| {
        version["serverVersion"][name]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    (part("major"), part("minor"))
}

fn with_stdin(command: &mut std::process::Command, stdin: Option<&Value>) -> Output {
    let Some(body) = stdin else {
        return run(command.stdin(Stdio::null()));
    };
    let path = std::env::temp_dir().join(format!("parity-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, body.to_string()).unwrap();
    let out = run(command.arg("-f").arg(&path).stdin(Stdio::null()));
    let _ = std::fs::remove_file(&path);
    out
}

fn json_of(out: &Output) -> Value {
    assert_eq!(out.code, 0, "{out:?}");
    out.json()
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_new_node_gets_the_not_ready_taint_on_both() {
    let real = RealCluster::get();
    let both = Both::start(real);
    let name = both.real.name("parity");
    both.real.forget_node_on_drop(&name);
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
        "spec": {"taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized",
                             "value": "true", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let create = ["create", "--validate=false", "-o", "json"];
    let (real, sim) = both.kubectl(&create, Some(&node));
    let (real, sim) = (json_of(&real), json_of(&sim));
    assert_eq!(real["spec"]["taints"], sim["spec"]["taints"]);
    assert_eq!(
        sim["spec"]["taints"][1],
        json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
    );

    // Invalid taints: the same 422 message, word for word.
    let taints = json!({"spec": {"taints": [{"key": "a", "effect": "NoSchedule"},
        {"key": "a", "effect": "NoSchedule"}, {"key": "", "effect": "Sometimes"}]}});
    let patch = [
        "patch",
        "node",
        &name,
        "--type=merge",
        "-p",
        &taints.to_string(),
    ];
    let (real, sim) = both.kubectl(&patch, None);
    assert_eq!(real.code, 1, "{real:?}");
    assert_eq!(real.stderr, sim.stderr);
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn an_ingress_keeps_its_ip_mode_from_v1_30_on_both() {
    let real = RealCluster::get();
    let known = server_version(&real) >= (1, 30);
    let both = Both::start(real);
    let namespace = both.real.namespace("parity");
    let (_, sim) = both.kubectl(&["create", "namespace", &namespace], None);
    assert_eq!(sim.code, 0, "{sim:?}");
    let ns = format!("--namespace={namespace}");
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
    let (real, sim) = both.kubectl(&["create", &ns, "--validate=false"], Some(&service));
    assert_eq!((real.code, sim.code), (0, 0), "{real:?}\n{sim:?}");
    let status =
        json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1", "ipMode": "Proxy"}]}}});
    let patch = [
        "patch",
        "service",
        "web",
        &ns,
        "--subresource=status",
        "--type=merge",
        "-o",
        "json",
        "-p",
        &status.to_string(),
    ];
    let (real, sim) = both.kubectl(&patch, None);
    let (real, sim) = (json_of(&real), json_of(&sim));
    assert_eq!(real["status"], sim["status"]);
    let ingress = match known {
        true => json!({"ip": "192.0.2.1", "ipMode": "Proxy"}),
        false => json!({"ip": "192.0.2.1"}),
    };
    assert_eq!(
        sim["status"],
        json!({"loadBalancer": {"ingress": [ingress]}})
    );
    let _ = both
        .real
        .kubectl(&["delete", "service", "web", &ns, "--wait=false"]);
}
