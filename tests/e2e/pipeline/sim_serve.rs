//! `skyplan sim serve`, whichever cloud it serves: a client may stop it with SIGTERM as soon as
//! it has read the URL, and it still ends cleanly, having written its world.

use crate::support::{serving, sim_serve, terminate};

/// The listener for SIGTERM is in place before the URL is announced: a signal right after the
/// announcement ends the server through its shutdown (exit 0, the world file written), not
/// through the signal's default action. Repeated, as the window it closes is narrow.
#[test]
fn sigterm_right_after_the_announcement_ends_every_simulator_cleanly() {
    let dir = tempfile::tempdir().expect("temp dir");
    for provider in ["cloudscale", "cloudstack", "phoenixnap", "kubernetes"] {
        for round in 0..10 {
            let world = dir.path().join(format!("{provider}-{round}.json"));
            let (mut child, _url) = serving(&mut sim_serve(provider, &world));
            terminate(&mut child);
            assert!(
                world.exists(),
                "{provider}, round {round}: no world file after SIGTERM"
            );
        }
    }
}

/// `sim serve --provider kubernetes --kubeconfig-out FILE` writes a private kubeconfig for the
/// served cluster, which a `[cluster]` table then reaches skyplan's way.
#[test]
fn a_served_kubernetes_simulator_writes_its_kubeconfig() {
    let project = crate::support::Project::new();
    let kubeconfig = project.path().join("sim.kubeconfig");
    let mut command = sim_serve("kubernetes", &project.path().join("kube.json"));
    command.arg("--kubeconfig-out").arg(&kubeconfig);
    let (mut child, url) = serving(&mut command);
    let written = std::fs::read_to_string(&kubeconfig).expect("the kubeconfig is written");
    assert!(written.contains(&format!("server: {url}")), "{written}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&kubeconfig).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "a kubeconfig is private");
    project.config(&format!(
        "[cluster.sim]\nprovider = \"kubernetes\"\nkubeconfig = \"{}\"\n",
        kubeconfig.display()
    ));
    let plan = project.run(&["plan"]);
    terminate(&mut child);
    assert_eq!(plan.code, 0, "the cluster is reached with it: {plan:?}");
}
