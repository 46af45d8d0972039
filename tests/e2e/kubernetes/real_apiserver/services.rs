//! Services against the real kube-apiserver, with a served simulated cloudscale API and no
//! cloud controller: what skyplan writes is marked as its own and never forgotten, a namespace
//! is checked at plan time, a node port another Service holds is caught at plan time.

use std::process::Command;

use serde_json::Value;

use crate::kubernetes::real_apiserver::{managers, unwrapped, RealCluster};
use crate::support::{create_server, run, Output, Project, SimServer, SIM_TOKEN};

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

/// The private address of the server `name`.
fn private_ip(cloud: &SimServer, name: &str) -> String {
    let servers = cloud.list("/servers");
    let server = servers
        .iter()
        .find(|s| s["name"] == name)
        .expect("the server");
    let interfaces = server["interfaces"].as_array().unwrap();
    let private = interfaces
        .iter()
        .find(|i| i["type"] == "private")
        .expect("a private interface");
    private["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `load-balancer.web` in controller mode for the Service `namespace/web`, over this test's
/// nodes only (other tests' nodes come and go in the same server).
fn ccm_load_balancer(cluster: &RealCluster, namespace: &str) -> String {
    format!(
        "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
         service = \"{namespace}/web\"\nmode = \"ccm\"\nnode-selector = \"skyplan-test={}\"\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\n",
        cluster.prefix
    )
}

/// The scenario of issue 19: controller mode with no controller able to act. The apply writes
/// the Service, waits, and fails — and what it wrote is skyplan's, in the state and marked.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_service_written_before_a_failed_wait_is_marked_recorded_and_its_removal_planned() {
    let cluster = RealCluster::get();
    let cloud = SimServer::start(&Project::new().path().join("cloud.json"));
    let node = cluster.ready_node("node-1", serde_json::json!({}), "10.9.1.1");
    create_server(&cloud.base_url, &node);
    let namespace = cluster.namespace("shop");
    let project = project(&cluster, &cloud, &ccm_load_balancer(&cluster, &namespace));

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

    assert_removal_planned(&cluster, &cloud, &project);
}

/// Removed from the config, `load-balancer.web`'s Service is not forgotten: its removal is
/// planned, forbidden without --allow-delete.
fn assert_removal_planned(cluster: &RealCluster, cloud: &SimServer, project: &Project) {
    project.config(&format!(
        "{}\n[provider.cloudscale]\nendpoint = \"{}\"\n",
        cluster.cluster_toml(),
        cloud.base_url
    ));
    let plan = skyplan(project, &["plan", "--json"]);
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

/// The same, killed right after the Service write (before the wait): the journal's intent of
/// the write records the resource for the next run.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_service_written_by_a_killed_apply_is_recorded_from_the_journal() {
    let cluster = RealCluster::get();
    let cloud = SimServer::start(&Project::new().path().join("cloud.json"));
    let node = cluster.ready_node("node-1", serde_json::json!({}), "10.9.3.1");
    create_server(&cloud.base_url, &node);
    let namespace = cluster.namespace("killed");
    let project = project(&cluster, &cloud, &ccm_load_balancer(&cluster, &namespace));
    let mut apply = project.command(&["apply", "--auto-approve"]);
    apply
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .env("SKYPLAN_TEST_KILL_AT", "call:1");
    let killed = run(&mut apply);
    assert_eq!(killed.code, -1, "killed by SIGKILL: {killed:?}");
    let service = cluster.service(&namespace, "web");
    assert_eq!(
        service["metadata"]["annotations"]["skyplan.address"],
        "load-balancer.web"
    );

    let plan = skyplan(&project, &["plan"]);
    assert!(
        unwrapped(&plan.stderr).contains("load-balancer.web: recorded from the interrupted apply"),
        "{plan:?}"
    );
    assert_removal_planned(&cluster, &cloud, &project);
}

/// The Service `namespace/web` of type NodePort, made with kubectl: the apiserver allocates
/// its node port. Returns the port.
fn node_port_service(cluster: &RealCluster, namespace: &str) -> u64 {
    cluster.create(&serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"type": "NodePort", "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}
    }));
    let service = cluster.service(namespace, "web");
    service["spec"]["ports"][0]["nodePort"]
        .as_u64()
        .expect("an allocated node port")
}

/// The `create member NAME` operations of a change, sorted.
fn members(change: &Value, verb: &str) -> Vec<String> {
    let prefix = format!("{verb} member ");
    let mut names: Vec<String> = change["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o.as_str()?.strip_prefix(&prefix).map(String::from))
        .collect();
    names.sort();
    names
}

fn change_of(plan: &Value, address: &str) -> Value {
    let changes = plan["changes"].as_array().unwrap();
    let change = changes.iter().find(|c| c["address"] == address);
    change
        .cloned()
        .unwrap_or_else(|| panic!("no {address} in {plan:#}"))
}

/// Direct mode: the members are the selected nodes' addresses on the node port the apiserver
/// allocated; a node policy setting the exclude label takes a node out, in the same plan.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn direct_mode_members_follow_the_allocated_node_port_and_the_exclude_label() {
    let cluster = RealCluster::get();
    let cloud = SimServer::start(&Project::new().path().join("cloud.json"));
    let selected = serde_json::json!({"role": "web"});
    let nodes: Vec<String> = (1..=2)
        .map(|i| {
            cluster.ready_node(
                &format!("node-{i}"),
                selected.clone(),
                &format!("10.9.2.{i}"),
            )
        })
        .collect();
    for node in &nodes {
        create_server(&cloud.base_url, node);
    }

    let namespace = cluster.namespace("direct");
    let port = node_port_service(&cluster, &namespace);
    // The CCM's members are the servers' private addresses (not the Nodes' own).
    let member = |node: &str| format!("{}:{port}", private_ip(&cloud, node));
    let lb = format!(
        "[load-balancer.direct]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
         service = \"{namespace}/web\"\nnode-selector = \"skyplan-test={}\"\n\
         [[load-balancer.direct.ports]]\nname = \"http\"\nport = 80\n",
        cluster.prefix
    );
    let project = project(&cluster, &cloud, &lb);
    let plan = skyplan(&project, &["plan", "--json"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    let direct = change_of(&plan.json(), "load-balancer.direct");
    assert_eq!(
        members(&direct, "create"),
        [member(&nodes[0]), member(&nodes[1])],
        "{direct:#}"
    );
    assert_eq!(skyplan(&project, &["apply", "--auto-approve"]).code, 0);

    let exclude = format!(
        "[nodes.edge]\ncluster = \"prod\"\nnames = [\"{}\"]\n\
         labels = {{ \"node.kubernetes.io/exclude-from-external-load-balancers\" = \"true\" }}\n",
        nodes[1]
    );
    project.config(&format!(
        "{}\n[provider.cloudscale]\nendpoint = \"{}\"\n\n{lb}\n{exclude}",
        cluster.cluster_toml(),
        cloud.base_url
    ));
    let plan = skyplan(&project, &["plan", "--json"]);
    let direct = change_of(&plan.json(), "load-balancer.direct");
    assert_eq!(direct["impact"], "minimal", "{direct:#}");
    assert_eq!(
        members(&direct, "delete"),
        [member(&nodes[1])],
        "{direct:#}"
    );
    let apply = skyplan(&project, &["apply", "--auto-approve"]);
    assert_eq!(apply.code, 0, "{apply:?}");
    let again = skyplan(&project, &["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "nothing left to plan: {again:?}");
}

/// Controller mode asking for a node port another Service holds: the apiserver would refuse
/// the write (422); the plan says so first, naming the holder.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_node_port_held_by_another_service_is_caught_at_plan_time() {
    let cluster = RealCluster::get();
    let cloud = SimServer::start(&Project::new().path().join("cloud.json"));
    let namespace = cluster.namespace("held");
    let port = node_port_service(&cluster, &namespace);
    let lb = format!(
        "[load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
         service = \"{namespace}/api\"\nmode = \"ccm\"\nnode-selector = \"skyplan-test={}\"\n\
         [[load-balancer.api.ports]]\nname = \"http\"\nport = 80\nnode-port = {port}\n",
        cluster.prefix
    );
    let project = project(&cluster, &cloud, &lb);
    let plan = skyplan(&project, &["plan"]);
    assert_eq!(plan.code, 1, "{plan:?}");
    let message = crate::kubernetes::real_apiserver::unwrapped(&plan.stderr);
    assert!(message.contains(&port.to_string()), "{message}");
    assert!(
        message.contains(&format!("{namespace}/web")),
        "names the holder: {message}"
    );
}

/// A binding to a namespace the cluster does not have: the apiserver would answer the write
/// with 404; the plan says so first, at the `service` key.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_namespace_that_does_not_exist_is_a_plan_error_at_the_service_key() {
    let cluster = RealCluster::get();
    let cloud = SimServer::start(&Project::new().path().join("cloud.json"));
    let namespace = cluster.name("nons");
    let project = project(&cluster, &cloud, &ccm_load_balancer(&cluster, &namespace));
    let plan = skyplan(&project, &["plan"]);
    assert_eq!(plan.code, 1, "{plan:?}");
    // The cluster table (lines 1-4), a blank line, the provider table (6-7), a blank line, the
    // load balancer's header, provider, zone, cluster: its `service` key is on line 13.
    let expected = format!(
        "skyplan.toml:13:1: load-balancer.web: namespace `{namespace}` does not exist in cluster.prod"
    );
    assert!(unwrapped(&plan.stderr).contains(&expected), "{plan:?}");
}
