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

#[test]
fn force_unlock_removes_a_lock_whose_holder_is_elsewhere() {
    let project = Project::new();
    project.config(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
         [[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n",
    );
    // A run on another machine holds the lock: skyplan cannot tell whether it is alive.
    std::fs::create_dir_all(project.path().join("state")).unwrap();
    let holder = serde_json::json!({
        "id": "5b0c7a2e-8f1d-4c3a-9e6b-2d4f8a1c0e77", "operation": "apply", "who": "ci",
        "host": "build-agent-7", "pid": 4242, "created": "2026-11-21T22:00:00Z", "skyplan_version": "0.1.0"
    });
    std::fs::write(
        project.path().join("state/skyplan.lock"),
        holder.to_string(),
    )
    .unwrap();

    let locked = project.run(&["plan"]);
    assert_eq!(locked.code, 1, "{locked:?}");
    assert!(
        locked.stderr.contains("build-agent-7")
            && locked
                .stderr
                .contains("5b0c7a2e-8f1d-4c3a-9e6b-2d4f8a1c0e77"),
        "{locked:?}"
    );
    assert_eq!(project.run(&["force-unlock", "not-the-id"]).code, 1);
    let unlocked = project.run(&["force-unlock", "5b0c7a2e-8f1d-4c3a-9e6b-2d4f8a1c0e77"]);
    assert_eq!(unlocked.code, 0, "{unlocked:?}");
    assert_eq!(project.run(&["plan"]).code, 0);
}
