//! Maintenance windows: disruptive changes wait for a window (`--now` sets the clock), the
//! rest of the plan applies at once.

use crate::support::Project;

fn config(algorithm: &str, api_members: &str) -> String {
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [maintenance]\ntimezone = \"Europe/Zurich\"\nwindows = [\"Sat 02:00-05:00\"]\noutside-window = \"minimal\"\ninside-window = \"pool-recreate\"\n\n\
         [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\nalgorithm = \"{algorithm}\"\n\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
         [load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [{api_members}]\n\n\
         [[load-balancer.api.ports]]\nname = \"grpc\"\nport = 443\nnode-port = 30443\n"
    )
}

const FRIDAY_NOON: &str = "2026-11-27T12:00:00+01:00";
const SATURDAY_0230: &str = "2026-11-28T02:30:00+01:00";
const SATURDAY_0459: &str = "2026-11-28T04:59:00+01:00";

fn applied() -> Project {
    let project = Project::new();
    project.config(&config("round_robin", "\"10.0.0.21\""));
    let out = project.apply(&["--now", FRIDAY_NOON]);
    assert_eq!(out.code, 0, "creating is allowed outside a window: {out:?}");
    // A pool recreation on web, a member added on api.
    project.config(&config("source_ip", "\"10.0.0.21\", \"10.0.0.22\""));
    project
}

fn algorithm(project: &Project) -> serde_json::Value {
    project.world().named("pools", "tcp/http").unwrap()["algorithm"].clone()
}

#[test]
fn outside_a_window_only_the_minimal_change_is_applied() {
    let project = applied();
    let out = project.apply(&["--now", FRIDAY_NOON]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("held back: load-balancer.web (pool-recreate)"),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("next window opens Sat 2026-11-28 02:00"),
        "{out:?}"
    );
    assert_eq!(
        algorithm(&project),
        "round_robin",
        "the pool was not recreated"
    );
    assert!(
        project
            .world()
            .named("members", "10.0.0.22:30443")
            .is_some(),
        "the minimal change went through"
    );
}

#[test]
fn inside_a_window_the_disruptive_change_is_applied() {
    let project = applied();
    let out = project.apply(&["--now", SATURDAY_0230]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(algorithm(&project), "source_ip");
}

#[test]
fn a_change_that_would_outlast_the_window_waits_for_the_next() {
    let project = applied();
    let out = project.apply(&["--now", SATURDAY_0459]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("outlast the open window"), "{out:?}");
    assert_eq!(algorithm(&project), "round_robin");
}
