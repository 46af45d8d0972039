//! The real `kubectl` against `skyplan sim serve --provider kubernetes`: the check that the
//! simulator speaks what kubectl needs from an apiserver (research/kubernetes.md §2) —
//! discovery, JSON and strategic merge patches, the protobuf body of `create service`, the
//! minimal OpenAPI v3 behind a strict `apply`, and Status errors kubectl prints verbatim.
//! The tests need kubectl on PATH: ignored unless asked for, they fail without it.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::kube_sim::KubeSim;
use crate::support::Project;

/// A kubectl bound to one simulator: its own kubeconfig, discovery cache and HOME.
struct Kubectl {
    kubeconfig: PathBuf,
    home: PathBuf,
}

impl Kubectl {
    fn new(project: &Project, sim: &KubeSim) -> Kubectl {
        crate::support::needs::kubectl();
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: sim\n\
             clusters:\n- name: sim\n  cluster:\n    server: {}\n\
             users:\n- name: nobody\n  user: {{}}\n\
             contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: nobody\n",
            sim.url
        );
        project.write("kubectl-config.yaml", &text);
        Kubectl {
            kubeconfig: project.path().join("kubectl-config.yaml"),
            home: project.path().to_owned(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("kubectl")
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", &self.home)
            .arg("--cache-dir")
            .arg(self.home.join("kube-cache"))
            .args(args)
            .output()
            .expect("run kubectl")
    }

    /// Runs and requires success; the stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        serde_json::from_str(&self.ok(&args)).expect("kubectl -o json")
    }
}

fn node_port(service: &Value) -> u64 {
    service["spec"]["ports"][0]["nodePort"]
        .as_u64()
        .unwrap_or_else(|| panic!("no nodePort in {service}"))
}

#[test]
#[ignore = "needs kubectl on PATH (.ci/run installs it)"]
fn kubectl_lists_labels_and_taints_nodes() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    let kubectl = Kubectl::new(&project, &sim);

    let nodes = kubectl.json(&["get", "nodes"]);
    assert_eq!(nodes["items"].as_array().map(Vec::len), Some(3), "{nodes}");

    assert!(kubectl
        .ok(&["label", "node", "node-1", "tier=web"])
        .contains("node/node-1 labeled"));
    assert_eq!(sim.node("node-1")["metadata"]["labels"]["tier"], "web");

    kubectl.ok(&["taint", "node", "node-1", "dedicated=web:NoSchedule"]);
    let node = kubectl.json(&["get", "node", "node-1"]);
    assert_eq!(
        node["spec"]["taints"],
        serde_json::json!([{"key": "dedicated", "value": "web", "effect": "NoSchedule"}])
    );
    kubectl.ok(&["taint", "node", "node-1", "dedicated-"]);
    let node = sim.node("node-1");
    assert!(node["spec"].get("taints").is_none(), "{node}");
    // The short name comes from discovery.
    assert_eq!(
        kubectl.json(&["get", "no", "node-2"])["metadata"]["name"],
        "node-2"
    );
}

#[test]
#[ignore = "needs kubectl on PATH (.ci/run installs it)"]
fn kubectl_creates_annotates_and_applies_services() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    let kubectl = Kubectl::new(&project, &sim);

    kubectl.ok(&["create", "service", "loadbalancer", "shop", "--tcp=80:8080"]);
    kubectl.ok(&[
        "annotate",
        "service",
        "shop",
        "k8s.cloudscale.ch/loadbalancer-name=x",
    ]);
    let shop = kubectl.json(&["get", "svc", "shop"]);
    assert_eq!(
        shop["metadata"]["annotations"]["k8s.cloudscale.ch/loadbalancer-name"],
        "x"
    );
    assert_eq!(shop["spec"]["ports"][0]["targetPort"], 8080);

    let manifest = |target: u16| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{name}}\nspec:\n  type: LoadBalancer\n  \
             selector:\n    app: web\n  ports:\n  - name: http\n    port: 80\n    targetPort: {target}\n"
        )
    };
    // A new Service, then the same one changed: strict validation (the default) both times.
    project.write("web.yaml", &manifest(8080).replace("{name}", "web"));
    let web = project.path().join("web.yaml");
    let web = web.to_str().unwrap();
    assert!(kubectl
        .ok(&["apply", "-f", web])
        .contains("service/web created"));
    let created = kubectl.json(&["get", "service", "web"]);
    project.write("web.yaml", &manifest(9090).replace("{name}", "web"));
    assert!(kubectl
        .ok(&["apply", "-f", web])
        .contains("service/web configured"));
    let applied = kubectl.json(&["get", "service", "web"]);
    assert_eq!(applied["spec"]["ports"][0]["targetPort"], 9090);
    assert_eq!(node_port(&applied), node_port(&created), "nodePort kept");

    // An existing Service applied for the first time.
    project.write("shop.yaml", &manifest(7070).replace("{name}", "shop"));
    let shop_file = project.path().join("shop.yaml");
    kubectl.ok(&["apply", "-f", shop_file.to_str().unwrap()]);

    let yaml = kubectl.ok(&["get", "service", "shop", "-o", "yaml"]);
    let shop: Value = serde_norway::from_str(&yaml).expect("kubectl -o yaml");
    assert!((30000..=32767).contains(&node_port(&shop)), "{yaml}");
    let ports = shop["spec"]["ports"].as_array().unwrap();
    assert!(ports.iter().any(|p| p["targetPort"] == 7070), "{yaml}");
}

#[test]
#[ignore = "needs kubectl on PATH (.ci/run installs it)"]
fn kubectl_prints_the_not_found_status() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    let kubectl = Kubectl::new(&project, &sim);
    let out = kubectl.run(&["get", "service", "nope"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Error from server (NotFound): services \"nope\" not found"),
        "{stderr}"
    );
}
