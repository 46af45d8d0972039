//! `skyplan sim serve --provider kubernetes`: the Ready condition its nodes report under the
//! `unhealthy-after-change` fault — what a node policy's health gate reads. Nodes are changed
//! over HTTP as a node policy's patch changes them (a merge patch of their labels).

use serde_json::json;

use crate::support::http;
use crate::support::kube_sim::KubeSim;
use crate::support::node_health::PolicyHealth;
use skyplan_core::provider::Health;

fn relabel(sim: &KubeSim, node: &str, tier: &str) {
    let url = format!("{}/api/v1/nodes/{node}", sim.url);
    let patch = json!({"metadata": {"labels": {"tier": tier}}}).to_string();
    let answer = http::request("PATCH", &url)
        .body("application/merge-patch+json", patch)
        .ok();
    assert!(answer.is_ok(), "PATCH node {node}: {answer:?}");
}

/// The node's Ready condition as `(status, reason)`.
fn ready(sim: &KubeSim, node: &str) -> (String, String) {
    let node = sim.node(node);
    let conditions = node["status"]["conditions"].as_array().expect("conditions");
    let ready = conditions
        .iter()
        .find(|c| c["type"] == "Ready")
        .expect("Ready");
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    (text(&ready["status"]), text(&ready["reason"]))
}

#[test]
fn a_node_changed_while_the_fault_names_it_reports_not_ready_until_restarted_without_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("kube.json");
    let sim = KubeSim::start_with_faults(&world, "unhealthy-after-change=node-2");
    assert_eq!(ready(&sim, "node-2").0, "True", "not changed yet");
    relabel(&sim, "node-1", "web");
    relabel(&sim, "node-2", "web");
    assert_eq!(
        ready(&sim, "node-2"),
        ("False".into(), "KubeletNotReady".into())
    );
    assert_eq!(
        ready(&sim, "node-1").0,
        "True",
        "the fault names node-2 only"
    );
    let listed = http::get(&format!("{}/api/v1/nodes", sim.url))
        .ok()
        .unwrap();
    assert!(
        listed.contains("KubeletNotReady"),
        "a list shows it too: {listed}"
    );
    sim.terminate();

    // Held in memory only: without the fault the same world's nodes are Ready again.
    let sim = KubeSim::start_with_faults(&world, "none");
    assert_eq!(ready(&sim, "node-2").0, "True");
    assert_eq!(
        sim.node("node-2")["metadata"]["labels"]["tier"],
        "web",
        "the change stayed"
    );
}

#[test]
fn a_certain_fault_breaks_every_changed_node_and_leaves_the_others_ready() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sim = KubeSim::start_with_faults(&dir.path().join("kube.json"), "unhealthy-after-change=1");
    relabel(&sim, "node-3", "db");
    assert_eq!(ready(&sim, "node-3").0, "False");
    assert_eq!(ready(&sim, "node-1").0, "True", "not changed");
}

/// The node policy's health read (the rollout's gate) sees the fault: the provider connected
/// through a kubeconfig reads node-2 not Ready, named, once a change broke it. (The test's
/// HTTP client blocks, so the provider runs on a runtime of its own.)
#[test]
fn the_node_policy_health_read_names_the_node_the_fault_broke() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("kube.json");
    let sim = KubeSim::start_with_faults(&world, "unhealthy-after-change=node-2");
    let kubeconfig = dir.path().join("kubeconfig.yaml");
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: sim\n\
         clusters:\n- name: sim\n  cluster:\n    server: {}\n\
         users:\n- name: nobody\n  user: {{}}\n\
         contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: nobody\n",
        sim.url
    );
    std::fs::write(&kubeconfig, text).unwrap();
    let config = format!(
        "[cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"{}\"\ncontext = \"sim\"\n\n\
         [nodes.web]\ncluster = \"prod\"\nnames = [\"node-*\"]\nlabels = {{ tier = \"web\" }}\n",
        kubeconfig.display()
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let gate = runtime.block_on(PolicyHealth::connect(&config));
    let read = || runtime.block_on(gate.read()).unwrap();

    assert_eq!(read(), Health::Healthy, "nothing changed yet");
    for node in ["node-1", "node-2", "node-3"] {
        relabel(&sim, node, "web");
    }
    let broken = "node node-2: Ready False (KubeletNotReady)".to_owned();
    assert_eq!(read(), Health::Unhealthy(vec![broken]));
}
