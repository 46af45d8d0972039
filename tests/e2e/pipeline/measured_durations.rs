//! Plans you can trust, part three: apply times every operation by provider and kind, keeps
//! the recent runs in the state, shows the measured figure beside the plan's estimate, and
//! fits changes into a maintenance window by what they measured once they have been measured.

use crate::support::Project;

/// Outside a window nothing disruptive may run (`none`), so even a minimal change needs a
/// window and has to fit in it.
fn config(api_members: &str) -> String {
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [maintenance]\ntimezone = \"Europe/Zurich\"\nwindows = [\"Sat 02:00-05:00\"]\noutside-window = \"none\"\ninside-window = \"pool-recreate\"\n\n\
         [load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [{api_members}]\n\n\
         [[load-balancer.api.ports]]\nname = \"grpc\"\nport = 443\nnode-port = 30443\n"
    )
}

const FRIDAY_NOON: &str = "2026-11-27T12:00:00+01:00";
/// One minute of the window left: more than the estimate of adding a member (5 s).
const SATURDAY_0459: &str = "2026-11-28T04:59:00+01:00";

/// `api` created (class none, allowed at any time), then a member added to it (minimal).
fn created_then_grown() -> Project {
    let project = Project::new();
    project.config(&config("\"10.0.0.21\""));
    let out = project.apply(&["--now", FRIDAY_NOON]);
    assert_eq!(out.code, 0, "{out:?}");
    project.config(&config("\"10.0.0.21\", \"10.0.0.22\""));
    project
}

fn state_path(project: &Project) -> std::path::PathBuf {
    project.path().join("state/skyplan.state.json")
}

fn state(project: &Project) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(state_path(project)).unwrap()).unwrap()
}

#[test]
fn apply_records_each_operation_kind_and_plan_shows_it_beside_the_estimate() {
    let project = created_then_grown();
    let durations = &state(&project)["durations"];
    for kind in [
        "cloudscale/create-lb",
        "cloudscale/create-pool",
        "cloudscale/create-member",
        "cloudscale/create-monitor",
        "cloudscale/create-listener",
    ] {
        let runs = durations[kind].as_array().unwrap_or_else(|| {
            panic!("{kind} is timed: {durations:#}");
        });
        assert_eq!(runs.len(), 1, "{kind}: {durations:#}");
    }
    let plan = project.plan(&[]);
    let measured = &plan["changes"][0]["measured_duration"];
    assert_eq!(measured["runs"], 1, "{plan:#}");
    assert_eq!(
        measured["worst_ms"], durations["cloudscale/create-member"][0],
        "the one operation of the change, create-member: {plan:#}"
    );
    let out = project.run(&["plan"]);
    assert!(
        out.stdout
            .contains("downtime up to 5 s; measured typically "),
        "the measured figure beside the estimate: {out:?}"
    );
}

#[test]
fn a_window_too_short_for_the_measured_duration_holds_the_change_back() {
    let project = created_then_grown();
    // The cloud got slow: the last time a member was created it took ten minutes.
    let mut slow = state(&project);
    slow["durations"]["cloudscale/create-member"] = serde_json::json!([600_000]);
    std::fs::write(state_path(&project), slow.to_string()).unwrap();
    let out = project.apply(&["--now", SATURDAY_0459]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "held back: load-balancer.api (minimal): it took up to 600.0 s in the last 1 run and would outlast the open window"
        ),
        "{out:?}"
    );
    assert!(
        project
            .world()
            .named("members", "10.0.0.22:30443")
            .is_none(),
        "nothing was done"
    );
}

#[test]
fn a_change_that_measured_fast_fits_the_same_window() {
    let project = created_then_grown();
    let out = project.apply(&["--now", SATURDAY_0459]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(project
        .world()
        .named("members", "10.0.0.22:30443")
        .is_some());
    let runs = &state(&project)["durations"]["cloudscale/create-member"];
    assert_eq!(runs.as_array().unwrap().len(), 2, "one more run: {runs}");
}
