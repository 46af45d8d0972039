//! `examples/in-cluster/` as a cluster admin would apply it: its manifests, rendered by
//! kustomize, are accepted by the real kube-apiserver (a server-side dry run, in a namespace
//! of the test's own); its config validates and, run as the example's service account would
//! (see `in_cluster`), applies a node policy and then finds no drift.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::json;

use crate::kubernetes::real_apiserver::in_cluster::Pod;
use crate::kubernetes::real_apiserver::{drift_status, RealCluster};
use crate::support::Project;

/// The example's manifests as kustomize renders them, in `namespace`, without the Namespace.
fn rendered_into(cluster: &RealCluster, namespace: &str) -> String {
    let rendered = cluster.kubectl_ok(&["kustomize", example().to_str().unwrap()]);
    let objects: Vec<&str> = rendered
        .split("\n---\n")
        .filter(|object| !object.starts_with("apiVersion: v1\nkind: Namespace"))
        .collect();
    objects
        .join("\n---\n")
        .replace("namespace: skyplan", &format!("namespace: {namespace}"))
}

/// The example's RBAC, applied for real: the ClusterRole and its binding under the namespace's
/// name (they are cluster-wide, and the tests share one server).
fn apply_the_examples_rbac(cluster: &RealCluster, namespace: &str) {
    let rbac: Vec<String> = rendered_into(cluster, namespace)
        .split("\n---\n")
        .filter(|object| object.contains("rbac.authorization.k8s.io"))
        .map(|object| object.replace("name: skyplan-drift", &format!("name: {namespace}-drift")))
        .collect();
    kubectl_with_stdin(cluster, &["apply", "-f", "-"], &rbac.join("\n---\n"));
}

fn kubectl_with_stdin(cluster: &RealCluster, args: &[&str], stdin: &str) -> String {
    let mut child = cluster
        .kubectl_command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn example() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/in-cluster"))
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn the_examples_manifests_are_accepted_by_the_api_server() {
    let cluster = RealCluster::get();
    let namespace = cluster.namespace("example");
    // Into the test's namespace; the Namespace object itself is the one thing left out.
    let manifests = rendered_into(&cluster, &namespace);
    let said = kubectl_with_stdin(
        &cluster,
        &["apply", "--dry-run=server", "-f", "-"],
        &manifests,
    );
    for object in [
        "cronjob.batch/skyplan-drift",
        "role.rbac.authorization.k8s.io/skyplan-state",
        "serviceaccount/skyplan",
    ] {
        assert!(said.contains(object), "{object} missing from: {said}");
    }
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn the_examples_config_applies_and_finds_no_drift_as_its_service_account() {
    let cluster = RealCluster::get();
    let namespace = cluster.namespace("nightly");
    cluster.ready_node("node-1", json!({}), "10.9.2.1");
    let pod = Pod::of_service_account(&cluster, &namespace);
    apply_the_examples_rbac(&cluster, &namespace);
    let grant = Pod::grant_apply(&cluster, &namespace);
    let config = std::fs::read_to_string(example().join("config/skyplan.toml")).unwrap();
    // The test's own nodes, not every worker of the shared server.
    let worker = "selector = \"node-role.kubernetes.io/worker\"";
    assert!(config.contains(worker), "the example selects the workers");
    let config = config.replace(
        worker,
        &format!("selector = \"{}\"", cluster.node_selector()),
    );
    let project = Project::new();
    project.config(&config.replace("/tmp/skyplan", "state"));

    let valid = pod.run(&project, &["validate"]);
    assert_eq!(valid.code, 0, "{valid:?}");
    let apply = pod.run(&project, &["apply", "--auto-approve"]);
    assert_eq!(apply.code, 0, "{apply:?}");
    // What the CronJob runs, with only what the example's RBAC grants.
    grant.revoke(&cluster);
    let drift = pod.run(&project, &["drift", "--format", "json"]);
    assert_eq!(
        drift_status(&drift, "nodes.workers"),
        "in-sync",
        "{drift:?}"
    );
    cluster.object(&["secret", "skyplan-state-nightly", "-n", &namespace]);
}
