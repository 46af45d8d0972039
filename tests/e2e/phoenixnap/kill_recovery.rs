//! The kill test: an apply of a new PhoenixNAP load balancer killed at each of its API calls —
//! among them between the block's creation and its attachment — and run again converges with
//! exactly one block, attached, and the Service carrying its third address. The cloud and the
//! cluster are `sim serve` processes, so the kill takes only skyplan down, as with a real cloud.

use std::process::{Command, Stdio};

use crate::phoenixnap::support::{tags, third_address, Pnap, USAGE};
use crate::support::kube_sim::Kube;
use crate::support::kube_sim::KubeSim;
use crate::support::{run, Output, Project};

fn config(cloud: &str) -> String {
    format!(
        "[provider.phoenixnap]\nendpoint = \"{cloud}\"\nlocation = \"PHX\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"kubeconfig.yaml\"\ncontext = \"sim\"\n\n\
         [load-balancer.api]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"default/api\"\npublic-network = \"k8s-public\"\n"
    )
}

fn skyplan(project: &Project, args: &[&str], kill_at: Option<&str>) -> Output {
    let mut command: Command = project.command(args);
    command
        .env("PNAP_CLIENT_ID", "skyplan-sim-pnap-client")
        .env("PNAP_CLIENT_SECRET", "skyplan-sim-pnap-secret")
        .stdin(Stdio::null());
    if let Some(point) = kill_at {
        command.env("SKYPLAN_TEST_KILL_AT", point);
    }
    run(&mut command)
}

#[test]
fn pnap_kill_a_create_at_every_call_then_converge_with_one_block() {
    let mut killed_points = 0;
    for call in 1.. {
        let project = Project::new();
        let cloud = Pnap::start(&project.path().join("pnap-world.json"));
        let kube_sim = KubeSim::start(&project);
        kube_sim.write_kubeconfig(&project);
        let kube = Kube {
            url: kube_sim.url.clone(),
        };
        kube.create_service("api", &[80]);
        project.config(&config(&cloud.url));
        let point = format!("call:{call}");
        let first = skyplan(&project, &["apply", "--auto-approve"], Some(&point));
        if first.code == 0 {
            assert!(
                killed_points >= 3,
                "the create makes several calls: {first:?}"
            );
            break;
        }
        assert_eq!(first.code, -1, "{point}: killed: {first:?}");
        killed_points += 1;
        let again = skyplan(&project, &["apply", "--auto-approve"], None);
        assert_eq!(again.code, 0, "{point}: recovery: {again:?}");
        let plan = skyplan(&project, &["plan", "--detailed-exitcode"], None);
        assert_eq!(plan.code, 0, "{point}: converged: {plan:?}");
        let blocks = cloud.blocks();
        assert_eq!(blocks.len(), 1, "{point}: exactly one block: {blocks:#?}");
        assert!(tags(&blocks[0]).contains(&format!("usage={USAGE}")));
        assert_eq!(blocks[0]["status"], "assigned", "{point}");
        let service = kube.service("api");
        assert_eq!(
            service["spec"]["loadBalancerIP"],
            third_address(blocks[0]["cidr"].as_str().unwrap()).as_str(),
            "{point}"
        );
    }
    println!("PhoenixNAP kill test: {killed_points} kill points, 0 duplicate blocks");
}
