//! PhoenixNAP credentials against `sim serve` (the real wire protocol, a token endpoint that
//! refuses what it does not know): from the CCM's cloud-sa.json, the environment winning over
//! it, and a refused secret reported without showing it.

use std::process::Stdio;

use crate::phoenixnap::support::Pnap;
use crate::support::kube_sim::Kube;
use crate::support::kube_sim::KubeSim;
use crate::support::{run, Output, Project};

fn config(cloud: &str) -> String {
    format!(
        "[provider.phoenixnap]\nendpoint = \"{cloud}\"\nlocation = \"PHX\"\ncloud-sa-json = \"cloud-sa.json\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"kubeconfig.yaml\"\ncontext = \"sim\"\n\n\
         [load-balancer.api]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"default/api\"\npublic-network = \"k8s-public\"\n"
    )
}

fn plan(project: &Project, env: &[(&str, &str)]) -> Output {
    let mut command = project.command(&["-vv", "plan"]);
    command
        .env_remove("PNAP_CLIENT_ID")
        .env_remove("PNAP_CLIENT_SECRET")
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    run(&mut command)
}

#[test]
fn credentials_come_from_cloud_sa_json_and_the_environment_wins() {
    let project = Project::new();
    let cloud = Pnap::start(&project.path().join("pnap-world.json"));
    let kube_sim = KubeSim::start(&project);
    kube_sim.write_kubeconfig(&project);
    Kube {
        url: kube_sim.url.clone(),
    }
    .create_service("api", &[80]);
    project.config(&config(&cloud.url));
    project.write(
        "cloud-sa.json",
        r#"{"clientID": "skyplan-sim-pnap-client", "clientSecret": "skyplan-sim-pnap-secret"}"#,
    );
    let from_file = plan(&project, &[]);
    assert_eq!(from_file.code, 0, "{from_file:?}");
    assert!(
        from_file.stdout.contains("will be created"),
        "{from_file:?}"
    );

    let wrong = "not-the-secret-4711";
    let refused = plan(&project, &[("PNAP_CLIENT_SECRET", wrong)]);
    assert_eq!(
        refused.code, 1,
        "the environment wins and is refused: {refused:?}"
    );
    assert!(refused.stderr.contains("PhoenixNAP token"), "{refused:?}");
    assert!(refused.stderr.contains("401"), "{refused:?}");
    for output in [&from_file, &refused] {
        let text = format!("{}{}", output.stdout, output.stderr);
        assert!(!text.contains(wrong), "the secret is never shown: {text}");
        assert!(!text.contains("skyplan-sim-pnap-secret"), "{text}");
    }

    std::fs::remove_file(project.path().join("cloud-sa.json")).unwrap();
    let missing = plan(&project, &[]);
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(missing.stderr.contains("cloud-sa.json"), "{missing:?}");
}
