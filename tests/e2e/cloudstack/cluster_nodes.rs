//! A CKS cluster reached as a Kubernetes cluster: against `skyplan sim serve --provider
//! cloudstack` (so each cluster's simulated API outlives skyplan's runs), a `[nodes.*]` policy
//! on a CloudStack cluster waits for the cluster, is applied to its worker Nodes (read back
//! through the kubeconfig `skyplan kubeconfig` writes), follows a scale, and a worker VM
//! stopped behind skyplan's back is node-metadata drift.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cloudstack::support::CsSimServer;
use crate::cloudstack::support::{change, operations, reasons, CsProject};
use crate::support::http;

fn config(workers: u32) -> String {
    format!(
        r#"[cluster.lab]
provider = "cloudstack"
zone = "zone1"
kubernetes-version = "1.30.5"
workers = {workers}
service-offering = "Medium Instance"
network = "k8s-net"

[nodes.workers]
cluster = "lab"
names = ["lab-node-*"]
labels = {{ tier = "web" }}
"#
    )
}

/// The cluster's Nodes, read through the kubeconfig skyplan writes for it.
fn nodes(project: &CsProject) -> Vec<Value> {
    let path = project.project.path().join("lab.kubeconfig");
    let out = project.run(&["kubeconfig", "lab", "-o", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    let kubeconfig = std::fs::read_to_string(&path).expect("kubeconfig");
    let server = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .unwrap_or_else(|| panic!("no server in the kubeconfig"))
        .trim()
        .to_string();
    let body = http::get(&format!("{server}/api/v1/nodes"))
        .ok()
        .expect("the cluster's API answers");
    let list: Value = serde_json::from_str(&body).expect("a NodeList");
    list["items"].as_array().cloned().unwrap_or_default()
}

fn names(nodes: &[Value], pick: impl Fn(&Value) -> bool) -> Vec<String> {
    let mut names: Vec<String> = nodes
        .iter()
        .filter(|n| pick(n))
        .map(|n| {
            n["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

fn is_worker(node: &Value) -> bool {
    node["metadata"]["name"]
        .as_str()
        .is_some_and(|n| n.starts_with("lab-node-"))
}

fn labelled(node: &Value) -> bool {
    node["metadata"]["labels"]["tier"] == "web"
}

/// Waits until the cluster's Nodes satisfy `done` (the simulated cloud brings them in line
/// with the VMs a moment after a job ends).
fn wait_for_nodes(project: &CsProject, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let now = nodes(project);
        if done(&now) || started.elapsed() > Duration::from_secs(10) {
            return now;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_for_job(sim: &CsSimServer, answer: &Value) {
    let job = answer
        .as_object()
        .and_then(|o| o.values().next())
        .and_then(|r| r["jobid"].as_str())
        .unwrap_or_else(|| panic!("no job in {answer}"))
        .to_string();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let result = sim.call("queryAsyncJobResult", &[("jobid", &job)]);
        if result["queryasyncjobresultresponse"]["jobstatus"] != 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("job {job} did not end");
}

#[test]
fn cs_node_policy_on_a_cks_cluster_follows_its_nodes_and_a_stopped_vm_is_drift() {
    let project = CsProject::new();
    let sim = CsSimServer::start(&project.project.path().join("cloudstack.json"));
    project.config_served(&sim.base_url, &config(2));

    // Before the cluster exists its nodes are unknown: nothing to patch, no failure.
    let plan = project.plan(&[]);
    let policy = change(&plan, "nodes.workers");
    assert_eq!(policy["action"], "create", "{policy:#}");
    assert!(operations(policy).is_empty(), "{policy:#}");
    assert!(
        reasons(policy).contains("nodes unknown until the cluster exists"),
        "{policy:#}"
    );
    project.apply_ok();

    // Now the cluster runs: its two workers get the label, the control node does not.
    let plan = project.plan(&[]);
    let policy = change(&plan, "nodes.workers");
    assert_eq!(policy["action"], "update", "{policy:#}");
    let ops = operations(policy);
    assert_eq!(ops.len(), 2, "{ops:?}");
    assert!(
        ops.iter()
            .all(|op| op.contains("lab-node-") && op.contains("+tier=web")),
        "{ops:?}"
    );
    project.apply_ok();
    let now = nodes(&project);
    assert_eq!(names(&now, is_worker).len(), 2, "{now:#?}");
    assert_eq!(names(&now, labelled), names(&now, is_worker), "{now:#?}");
    assert_eq!(names(&now, |n| !is_worker(n)).len(), 1, "one control node");
    let worker = now.iter().find(|n| is_worker(n)).unwrap();
    let provider_id = worker["spec"]["providerID"].as_str().unwrap();
    assert!(
        provider_id.starts_with("external-cloudstack://"),
        "{worker:#}"
    );
    assert_eq!(
        worker["metadata"]["labels"]["node.kubernetes.io/instance-type"],
        "MediumInstance"
    );
    let out = project.run(&["drift"]);
    assert_eq!(out.code, 0, "the CCM's metadata is in place: {out:?}");

    // Scaled to three workers: the new node is in the policy's next plan.
    project.config_served(&sim.base_url, &config(3));
    project.apply_ok();
    let now = wait_for_nodes(&project, |n| names(n, is_worker).len() == 3);
    let new: Vec<String> = names(&now, |n| is_worker(n) && !labelled(n));
    assert_eq!(new.len(), 1, "{now:#?}");
    let plan = project.plan(&[]);
    let ops = operations(change(&plan, "nodes.workers"));
    assert_eq!(ops, [format!("patch node {}: labels +tier=web", new[0])]);
    project.apply_converges();

    // A worker VM stopped behind skyplan's back: its node's VM is reported stopped.
    let vm_id = provider_id.trim_start_matches("external-cloudstack://");
    let stopped = worker["metadata"]["name"].as_str().unwrap().to_string();
    wait_for_job(&sim, &sim.call("stopVirtualMachine", &[("id", vm_id)]));
    wait_for_nodes(&project, |n| {
        n.iter().any(|n| {
            n["metadata"]["name"] == stopped.as_str()
                && n["spec"]["taints"].to_string().contains("shutdown")
        })
    });
    let out = project.run(&["drift", "--format", "json"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout.contains(&format!("nodes.{stopped}.vm")),
        "{out:?}"
    );
    assert!(out.stdout.contains("VM stopped"), "{out:?}");
    assert!(out.stdout.contains("it is tainted shutdown"), "{out:?}");
    sim.terminate();
}
