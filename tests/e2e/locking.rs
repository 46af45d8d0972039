//! Two runs against one state: the second is refused with the holder's details, or waits for
//! it with --lock-timeout.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{Project, SimServer, SIM_TOKEN};

/// A project whose apply takes a few seconds: a slowly settling simulated cloud.
fn slow_project() -> (Project, SimServer) {
    let project = Project::new();
    let sim = SimServer::start_settling(&project.path().join("world.json"), 700);
    project.config(&format!(
        "[provider.cloudscale]\nendpoint = \"{}\"\n\n\
         [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n",
        sim.base_url
    ));
    (project, sim)
}

fn wait_for_lock(project: &Project) {
    let lock = project.path().join("state/skyplan.lock");
    let started = Instant::now();
    while !lock.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the first apply never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_apply_is_refused_with_the_holders_details_or_waits() {
    let (project, _sim) = slow_project();
    let mut first = project
        .command(&["apply", "--auto-approve"])
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lock(&project);

    let refused = crate::support::run(
        project
            .command(&["apply", "--auto-approve"])
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN),
    );
    assert_eq!(refused.code, 1, "{refused:?}");
    let holder = format!("pid {}", first.id());
    for detail in ["locked by", holder.as_str(), "`apply`", "force-unlock"] {
        assert!(
            refused.stderr.contains(detail),
            "no `{detail}` in {refused:?}"
        );
    }

    let waited = crate::support::run(
        project
            .command(&["plan", "--lock-timeout", "60s", "--detailed-exitcode"])
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN),
    );
    assert!(first.wait().unwrap().success());
    assert_eq!(
        waited.code, 0,
        "waited for the apply, then found nothing to do: {waited:?}"
    );
}
