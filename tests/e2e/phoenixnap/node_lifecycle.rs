//! PhoenixNAP servers behind an embedded cluster's nodes: the simulated CCM initialises them
//! (providerID `phoenixnap://<id>`, type and location labels), and node-metadata drift —
//! skyplan's own reading of the CCM — finds them in order, then reports a server powered off
//! (reported), or gone (its node deleted by the CCM's node lifecycle).

use crate::phoenixnap::support::with_cloud;
use crate::support::kube_sim::with_cluster;
use crate::support::Project;

const CONFIG: &str = "[provider.phoenixnap]\nendpoint = \"embedded\"\nlocation = \"PHX\"\n\n\
                      [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

fn server_id(project: &Project, hostname: &str) -> String {
    with_cloud(project, |cloud| {
        cloud
            .get("/bmc/v1/servers")
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["hostname"] == hostname)
            .map(|s| s["id"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no server {hostname}"))
    })
}

#[test]
fn nodes_match_their_servers_until_one_is_powered_off_or_gone() {
    let project = Project::new();
    project.config(CONFIG);
    project.apply_ok();
    let out = project.run(&["drift"]);
    assert_eq!(out.code, 0, "the nodes match their servers: {out:?}");
    let id = server_id(&project, "node-2");
    let node = with_cluster(&project, |kube| {
        let url = format!("{}/api/v1/nodes/node-2", kube.url);
        let body = crate::support::http::get(&url).ok().expect("GET node");
        serde_json::from_str::<serde_json::Value>(&body).unwrap()
    });
    assert_eq!(node["spec"]["providerID"], format!("phoenixnap://{id}"));
    assert_eq!(
        node["metadata"]["labels"]["topology.kubernetes.io/region"],
        "PHX"
    );
    assert!(node["metadata"]["labels"]["topology.kubernetes.io/zone"].is_null());

    with_cloud(&project, |cloud| {
        cloud
            .send(
                "POST",
                &format!("/bmc/v1/servers/{id}/actions/power-off"),
                None,
            )
            .expect("power off")
    });
    let out = project.run(&["drift", "--format", "json"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stdout.contains("node-2"), "{out:?}");
    assert!(out.stdout.to_lowercase().contains("stopped"), "{out:?}");

    let gone = server_id(&project, "node-3");
    with_cloud(&project, |cloud| {
        cloud
            .send("DELETE", &format!("/bmc/v1/servers/{gone}"), None)
            .expect("delete server")
    });
    let out = project.run(&["drift", "--format", "json"]);
    assert_eq!(out.code, 2, "{out:?}");
    // The CCM's node lifecycle deletes the node of a server that is gone (a 403 for its id);
    // what remains is node-2's stopped server.
    assert!(out.stdout.contains("nodes.node-2.vm"), "{out:?}");
    assert!(!out.stdout.contains("node-3"), "{out:?}");
    let status = with_cluster(&project, |kube| {
        let url = format!("{}/api/v1/nodes/node-3", kube.url);
        crate::support::http::get(&url).send().status == 404
    });
    assert!(status, "node-3 was deleted with its server");
}
