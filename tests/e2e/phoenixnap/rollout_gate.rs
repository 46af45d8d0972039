//! The rollout's health gate on PhoenixNAP: a load balancer moved to another Service gets a new
//! block, and counts as done only once the block is `assigned` and the CCM has written the
//! Service's ingress. With the embedded CCM off, nobody writes it: the gate fails, exit 5.

use crate::support::kube_sim::with_cluster;
use crate::support::{run, Output, Project};

use super::support::{config, project_with_service};

/// The load balancer applied for `default/api`, then configured for `default/api2` (a new
/// block, a new address: pool-recreate) in a rollout.
fn moved_to_api2() -> Project {
    let project = project_with_service();
    with_cluster(&project, |kube| kube.create_service("api2", &[80]));
    project.apply_ok();
    let moved = config("").replace("\"default/api\"", "\"default/api2\"");
    project.config(&format!(
        "[rollout]\nmax-disrupted = 1\nhealth-timeout = \"2s\"\n\n{moved}"
    ));
    project
}

fn apply(project: &Project, ccm: &str) -> Output {
    let mut command = project.command(&["apply", "--auto-approve"]);
    run(command.env("SKYPLAN_SIM_PNAP_CCM", ccm))
}

#[test]
fn the_gate_waits_for_the_controller_to_write_the_services_ingress() {
    let project = moved_to_api2();
    let out = apply(&project, "on");
    assert_eq!(out.code, 0, "{out:?}");
    let service = with_cluster(&project, |kube| kube.service("api2"));
    let ingress = &service["status"]["loadBalancer"]["ingress"][0]["ip"];
    assert_eq!(ingress, &service["spec"]["loadBalancerIP"], "{service:#}");
}

#[test]
fn without_the_controller_the_ingress_never_comes_and_the_rollout_stops() {
    let project = moved_to_api2();
    let out = apply(&project, "off");
    assert_eq!(out.code, 5, "{out:?}");
    assert!(
        out.stderr.contains(
            "rollout stopped: load-balancer.api was not healthy in time: Service default/api2: no status.loadBalancer.ingress"
        ),
        "{out:?}"
    );
}
