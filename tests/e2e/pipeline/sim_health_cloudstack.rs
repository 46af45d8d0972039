//! `skyplan sim serve --provider cloudstack` with `unhealthy-after-change` on one LB rule:
//! skyplan applies a load balancer through the served cloud; the VMs of the picked rule then
//! report `Stopped` while the fault is on, and `Running` once the simulator is started without
//! it — as the rule's instances show them, and as the provider's health read (what the
//! rollout's health gate calls) reports them.

use std::path::Path;

use serde_json::Value;
use skyplan_cloudstack::provider::CloudstackProvider;
use skyplan_cloudstack::spec::CloudstackEndpoint;
use skyplan_core::plan::ResourceChange;
use skyplan_core::provider::{Health, Provider};
use skyplan_core::state::ResourceState;

use crate::cloudstack::support::{text, CsProject, CsSimServer};

const WEB: &str = "[load-balancer.web]
provider = \"cloudstack\"
network = \"k8s-net\"
members = [\"web-1\", \"web-2\"]

[[load-balancer.web.ports]]
port = 80
protocol = \"tcp\"
node-port = 30080

[[load-balancer.web.ports]]
port = 443
protocol = \"tcp\"
node-port = 30443
";

/// The state each VM of the rule `name` shows in `listLoadBalancerRuleInstances`.
fn member_states(sim: &CsSimServer, name: &str) -> Vec<String> {
    let rules = sim.call("listLoadBalancerRules", &[("name", name)]);
    let rule = &rules["listloadbalancerrulesresponse"]["loadbalancerrule"][0];
    let id = text(rule, "id");
    let members = sim.call("listLoadBalancerRuleInstances", &[("id", &id)]);
    let vms = members["listloadbalancerruleinstancesresponse"]["loadbalancerruleinstance"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    vms.iter().map(|vm| text(vm, "state")).collect()
}

/// One health read of `load-balancer.web`, as apply left it in the state, through the
/// project's cloud-config.
fn health_of_web(project: &CsProject) -> Health {
    let state = std::fs::read_to_string(project.path().join("state/skyplan.state.json"))
        .expect("the state");
    let state: Value = serde_json::from_str(&state).expect("JSON");
    let entry: ResourceState =
        serde_json::from_value(state["resources"]["load-balancer.web"].clone()).expect("entry");
    let change = ResourceChange::no_op("load-balancer.web".parse().unwrap(), "cloudstack", None);
    let endpoint = CloudstackEndpoint::CloudConfig(project.path().join("cloud-config.ini"));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let provider = CloudstackProvider::connect(&endpoint, None)
            .await
            .expect("connect");
        provider.health(&change, Some(&entry)).await.expect("read")
    })
}

fn serve(world: &Path, faults: &str) -> CsSimServer {
    CsSimServer::start_with(world, &["--faults", faults])
}

#[test]
fn the_vms_of_a_changed_rule_the_fault_picks_are_stopped_until_served_without_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("cloudstack.json");
    let sim = serve(&world, "unhealthy-after-change=web-tcp-80");
    let project = CsProject::new().with_env("SKYPLAN_CLOUDSTACK_JOB_POLL_MS", "20");
    project.config_served(&sim.base_url, WEB);
    project.apply_ok();
    assert_eq!(member_states(&sim, "web-tcp-80"), ["Stopped", "Stopped"]);
    assert_eq!(member_states(&sim, "web-tcp-443"), ["Running", "Running"]);
    let problems = [
        "VM web-1 of rule web-tcp-80: Stopped",
        "VM web-2 of rule web-tcp-80: Stopped",
    ];
    let expected = Health::Unhealthy(problems.map(String::from).to_vec());
    assert_eq!(health_of_web(&project), expected);
    sim.terminate();

    // The fault's picks are not kept in the world: served without it, the VMs report their
    // own state again.
    let sim = serve(&world, "none");
    project.config_served(&sim.base_url, WEB);
    assert_eq!(member_states(&sim, "web-tcp-80"), ["Running", "Running"]);
    assert_eq!(health_of_web(&project), Health::Healthy);
}

/// Load balancers `api` and `web` (one port each) with `algorithm`, one at a time.
fn two_rolled_out(algorithm: &str) -> String {
    let mut text = "[rollout]\nmax-disrupted = 1\nhealth-timeout = \"1s\"\n\n".to_string();
    for (name, port, node_port) in [("api", 8080, 30808), ("web", 80, 30080)] {
        text.push_str(&format!(
            "[load-balancer.{name}]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n\
             members = [\"web-1\", \"web-2\"]\nalgorithm = \"{algorithm}\"\n\n\
             [[load-balancer.{name}.ports]]\nport = {port}\nprotocol = \"tcp\"\nnode-port = {node_port}\n\n"
        ));
    }
    text
}

#[test]
fn a_rule_whose_vms_stop_after_its_change_stops_the_rollout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("cloudstack.json");
    let sim = serve(&world, "none");
    let project = CsProject::new().with_env("SKYPLAN_CLOUDSTACK_JOB_POLL_MS", "20");
    project.config_served(&sim.base_url, &two_rolled_out("roundrobin"));
    project.apply_ok();
    sim.terminate();

    let sim = serve(&world, "unhealthy-after-change=api-tcp-8080");
    project.config_served(&sim.base_url, &two_rolled_out("source"));
    let out = project.apply(&[]);
    assert_eq!(out.code, 5, "{out:?}");
    assert!(
        out.stderr.contains(
            "rollout stopped: load-balancer.api was not healthy in time: VM web-1 of rule api-tcp-8080: Stopped"
        ),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("not started: load-balancer.web: the rollout stopped before it"),
        "{out:?}"
    );
    sim.terminate();

    let sim = serve(&world, "none");
    project.config_served(&sim.base_url, &two_rolled_out("source"));
    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Apply complete: 1 change,"), "{out:?}");
}
