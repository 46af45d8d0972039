//! A load balancer bound to a Service in direct mode on the embedded default: skyplan manages
//! the cloud objects, the members are the cluster's nodes' private addresses on the Service's
//! node ports — so a node added to the cluster shows up in the next plan as members added.

use serde_json::{json, Value};

use crate::support::kube_sim::KubeSim;
use crate::support::{Project, SimServer};

/// `shop` in controller mode writes the Service `default/shop`; `direct` serves it directly.
fn config(with_direct: bool) -> String {
    let mut text = String::from(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n\
         [load-balancer.shop]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
         service = \"default/shop\"\nmode = \"ccm\"\n\
         [[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n\n",
    );
    if with_direct {
        text.push_str(
            "[load-balancer.direct]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
             service = \"default/shop\"\n\
             [[load-balancer.direct.ports]]\nname = \"http\"\nport = 80\n",
        );
    }
    text
}

pub(crate) fn change_of(plan: &Value, address: &str) -> Value {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == address)
        .cloned()
        .unwrap_or_else(|| panic!("no {address} in {plan:#}"))
}

/// The `create member NAME` operations of a change, sorted.
fn created_members(change: &Value) -> Vec<String> {
    let mut names: Vec<String> = change["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o.as_str()?.strip_prefix("create member ").map(String::from))
        .collect();
    names.sort();
    names
}

/// A server `node-4` on the private network, and its Node registered by name (the kubelet
/// does that; the CCM initialises it on the next run).
fn add_fourth_node(project: &Project) {
    let cloud = SimServer::start(&project.world_path());
    crate::support::create_server(&cloud.base_url, "node-4");
    cloud.terminate();

    // `sim serve` over the embedded cluster's world, changing it between runs as kubectl would.
    let kube = KubeSim::start_on(&project.path().join("state/embedded/kubernetes/prod.json"));
    kube.add_node(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-4"}}));
    kube.terminate();
}

#[test]
fn the_members_are_the_nodes_on_the_services_node_port_and_a_new_node_is_added() {
    let project = Project::new();
    project.config(&config(false));
    project.apply_ok();
    // The CCM's members of the Service's load balancer: the same nodes and node port.
    let mut ccm_members: Vec<String> = project
        .world()
        .all("members")
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    ccm_members.sort();
    assert_eq!(ccm_members.len(), 3, "three nodes: {ccm_members:?}");

    project.config(&config(true));
    let direct = change_of(&project.plan(&[]), "load-balancer.direct");
    assert_eq!(direct["action"], "create");
    assert_eq!(created_members(&direct), ccm_members);
    assert!(ccm_members.iter().all(|m| m.starts_with("10.0.0.")));
    project.apply_ok();

    add_fourth_node(&project);
    let direct = change_of(&project.plan(&[]), "load-balancer.direct");
    assert_eq!(direct["impact"], "minimal", "{direct:#}");
    let added = created_members(&direct);
    assert_eq!(added.len(), 1, "one member for node-4: {direct:#}");
    let node_port = ccm_members[0].rsplit(':').next().unwrap();
    assert!(added[0].ends_with(&format!(":{node_port}")), "{added:?}");
    assert!(!ccm_members.contains(&added[0]));
}
