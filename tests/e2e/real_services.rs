//! Services against the real kube-apiserver, with a served simulated cloudscale API and no
//! cloud controller: what skyplan writes is marked as its own and never forgotten, a namespace
//! is checked at plan time, a node port another Service holds is caught at plan time.

use std::process::Command;

use serde_json::Value;

use crate::real_support::{managers, RealCluster};
use crate::support::{curl, run, Output, Project, SimServer, SIM_TOKEN};

/// A project over the real cluster and `cloud`, with `body` after the two tables.
fn project(cluster: &RealCluster, cloud: &SimServer, body: &str) -> Project {
    cluster.project(&format!(
        "[provider.cloudscale]\nendpoint = \"{}\"\n\n{body}",
        cloud.base_url
    ))
}

fn skyplan(project: &Project, args: &[&str]) -> Output {
    let mut command: Command = project.command(args);
    command
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .env("SKYPLAN_CCM_WAIT_S", "2");
    run(&mut command)
}

/// A server named like the node `node`, on the cloud's default private network at `ip`, as
/// the CCM finds a node's server (by name, without a providerID).
fn add_server(cloud: &SimServer, node: &str) {
    let network = cloud
        .list("/networks")
        .into_iter()
        .find(|n| n["name"] == "default")
        .expect("the default private network");
    let server = serde_json::json!({
        "name": node, "flavor": "flex-8-4", "image": "debian-12", "zone": "lpg1",
        "interfaces": [{"network": "public"}, {"network": network["uuid"]}],
    });
    let url = format!("{}/servers", cloud.base_url);
    let auth = format!("Authorization: Bearer {SIM_TOKEN}");
    let json = "Content-Type: application/json";
    let body = server.to_string();
    curl(&["-X", "POST", "-H", &auth, "-H", json, "-d", &body, &url]).expect("create server");
}

/// `load-balancer.web` in controller mode for the Service `namespace/web`.
fn ccm_load_balancer(namespace: &str) -> String {
    format!(
        "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
         service = \"{namespace}/web\"\nmode = \"ccm\"\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\n"
    )
}

/// The scenario of issue 19: controller mode with no controller able to act. The apply writes
/// the Service, waits, and fails — and what it wrote is skyplan's, in the state and marked.
#[test]
fn a_service_written_before_a_failed_wait_is_marked_recorded_and_its_removal_planned() {
    let Some(cluster) = RealCluster::get() else {
        return;
    };
    let cloud = SimServer::start(&Project::new().path().join("cloud.json"));
    let node = cluster.ready_node("node-1", serde_json::json!({}), "10.9.1.1");
    add_server(&cloud, &node);
    let namespace = cluster.namespace("shop");
    let project = project(&cluster, &cloud, &ccm_load_balancer(&namespace));

    let apply = skyplan(&project, &["apply", "--auto-approve"]);
    assert_eq!(
        apply.code, 1,
        "no controller acts on the Service: {apply:?}"
    );
    assert!(apply.stderr.contains("did not converge"), "{apply:?}");
    let service = cluster.service(&namespace, "web");
    assert_eq!(
        service["metadata"]["annotations"]["skyplan.address"], "load-balancer.web",
        "{service:#}"
    );
    assert_eq!(managers(&service), ["skyplan"], "{service:#}");
    let state = skyplan(&project, &["state", "list"]);
    assert!(state.stdout.contains("load-balancer.web"), "{state:?}");

    // Removed from the config, the Service is not forgotten: its removal is planned.
    project.config(&format!(
        "{}\n[provider.cloudscale]\nendpoint = \"{}\"\n",
        cluster.cluster_toml(),
        cloud.base_url
    ));
    let plan = skyplan(&project, &["plan", "--json"]);
    let plan: Value = serde_json::from_str(&plan.stdout).unwrap_or_else(|_| panic!("{plan:?}"));
    let web = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "load-balancer.web")
        .unwrap_or_else(|| panic!("the removal is planned: {plan:#}"));
    assert_eq!(web["action"], "delete", "{web:#}");
    assert_eq!(web["impact"], "forbidden", "{web:#}");
}
