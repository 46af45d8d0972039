//! Node-metadata drift end to end: a node registered behind skyplan's back, uninitialised and
//! named like no VM, is reported with what the cloud controller would do and why it has not.

use crate::kubernetes::node_policies::CLUSTER;
use crate::support::kube_sim::KubeSim;
use crate::support::Project;

/// An applied project whose cluster is `sim serve --provider kubernetes` (no controller runs)
/// beside the embedded cloudscale.
fn served_cluster() -> (Project, KubeSim) {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    sim.write_kubeconfig(&project);
    project.config(&format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n{CLUSTER}"
    ));
    project.apply_ok();
    (project, sim)
}

#[test]
fn an_uninitialised_node_is_drift_with_its_reason() {
    let (project, sim) = served_cluster();
    let out = project.run(&["drift"]);
    assert_eq!(out.code, 0, "the fresh nodes are initialised: {out:?}");

    sim.add_uninitialised_node("node-4");
    let out = project.run(&["drift", "--format", "json"]);
    assert_eq!(out.code, 2, "{out:?}");
    let text = out.stdout.clone();
    assert!(
        text.contains(
            "nodes.node-4.taints.node.cloudprovider.kubernetes.io/uninitialized:NoSchedule"
        ),
        "{text}"
    );
    assert!(
        text.contains("the cloud controller has not initialised it — it is not running, or no VM is named node-4"),
        "{text}"
    );
    let out = project.run(&["drift"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stdout.contains("node-4"), "{out:?}");
}

/// The embedded world: a server stopped behind skyplan's back. Its node's VM is reported
/// stopped (the node lifecycle controller taints such a node `shutdown`), and nothing else.
#[test]
fn a_node_whose_vm_was_stopped_is_drift() {
    let project = Project::new();
    project.config(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n",
    );
    project.apply_ok();
    let out = project.run(&["drift"]);
    assert_eq!(
        out.code, 0,
        "the embedded nodes match their servers: {out:?}"
    );

    let path = project.world_path();
    let mut world: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let servers = world["servers"].as_array_mut().unwrap();
    let server = servers.iter_mut().find(|s| s["name"] == "node-2").unwrap();
    server["status"] = serde_json::json!("stopped");
    std::fs::write(&path, serde_json::to_string(&world).unwrap()).unwrap();

    let out = project.run(&["drift", "--format", "json"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stdout.contains("VM stopped"), "{}", out.stdout);
    assert!(out.stdout.contains("node-2"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("node-1"),
        "only node-2 drifted: {}",
        out.stdout
    );
}

/// A node initialised by the cloudscale CCM once, whose server has since been deleted, in a
/// cluster whose controller is not running (`sim serve` runs none): its VM is reported gone,
/// with what the node lifecycle controller would do.
#[test]
fn a_node_whose_vm_is_gone_is_drift() {
    let (project, sim) = served_cluster();
    let gone = "cloudscale://0b7fd4a2-5bd9-4b4c-9a3d-0c9f0c5e2f11";
    sim.add_node(serde_json::json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-9", "labels": {
            "kubernetes.io/hostname": "node-9",
            "node.kubernetes.io/instance-type": "flex-8-4",
            "topology.kubernetes.io/zone": "lpg1",
            "topology.kubernetes.io/region": "lpg"}},
        "spec": {"providerID": gone}
    }));
    let out = project.run(&["drift", "--format", "json"]);
    assert_eq!(out.code, 2, "{out:?}");
    let text = &out.stdout;
    assert!(text.contains("nodes.node-9.vm"), "{text}");
    assert!(
        text.contains(&format!(
            "VM gone: no VM of cloudscale has providerID {gone}"
        )),
        "{text}"
    );
    assert!(!text.contains("node-1"), "only node-9 drifted: {text}");
}
