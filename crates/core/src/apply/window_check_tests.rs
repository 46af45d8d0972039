use super::*;
use crate::apply::test_changes::{at, change, policy};
use crate::model::{Downtime, Impact};

fn check(change: &ResourceChange, now: &str, durations: &Durations) -> Option<WindowHold> {
    WindowCheck {
        policy: &policy(),
        now: at(now),
        durations,
    }
    .check(change)
}

fn pools() -> ResourceChange {
    change("pools", Impact::PoolRecreate, Downtime::new(60, 120))
}

fn calm() -> ResourceChange {
    change("calm", Impact::Minimal, Downtime::new(0, 5))
}

#[test]
fn outside_a_window_disruptive_changes_wait_for_it() {
    // Friday noon in Zurich.
    let friday = "2026-11-27T11:00:00Z";
    assert_eq!(check(&calm(), friday, &Durations::default()), None);
    let held = check(&pools(), friday, &Durations::default()).expect("held");
    assert_eq!(
        held.why,
        "pool-recreate is above what apply may do now (minimal)"
    );
    assert_eq!(
        held.opens.as_ref().unwrap().at.to_string(),
        "2026-11-28T02:00:00+01:00[Europe/Zurich]"
    );
    assert!(
        held.to_string()
            .ends_with("; next window opens Sat 2026-11-28 02:00 Europe/Zurich (in 14 hours)"),
        "{held}"
    );
}

#[test]
fn inside_a_window_they_run_if_they_fit() {
    // Saturday 03:00 Zurich: two hours of window left.
    assert_eq!(
        check(&pools(), "2026-11-28T02:00:00Z", &Durations::default()),
        None
    );
    // Saturday 04:59 Zurich: a minute left, a pool recreation may take two.
    let held = check(&pools(), "2026-11-28T03:59:00Z", &Durations::default()).expect("held");
    assert_eq!(
        held.why,
        "it may take 60-120 s and would outlast the open window"
    );
    assert_eq!(
        held.opens.as_ref().unwrap().at.to_string(),
        "2026-12-05T02:00:00+01:00[Europe/Zurich]",
        "the next window is next Saturday's"
    );
}

#[test]
fn a_measured_duration_wins_over_the_estimate() {
    // Saturday 04:58 Zurich: two minutes left, a pool recreation is estimated at two.
    let now = "2026-11-28T03:58:00Z";
    let mut change = pools();
    change.operations = vec![crate::plan::Operation::new(
        "cloudscale",
        &serde_json::json!({"op": "delete-pool", "pool": "tcp"}),
    )];
    assert_eq!(
        check(&change, now, &Durations::default()),
        None,
        "the estimate fits"
    );
    let mut slow = Durations::default();
    slow.record("cloudscale/delete-pool", Duration::from_secs(150));
    let held = check(&change, now, &slow).expect("held");
    assert_eq!(
        held.why,
        "it took up to 150.0 s in the last 1 run and would outlast the open window"
    );
    let mut fast = Durations::default();
    fast.record("cloudscale/delete-pool", Duration::from_secs(3));
    assert_eq!(
        check(&change, "2026-11-28T03:59:30Z", &fast),
        None,
        "30 s left: the estimate would not fit, 3 s does"
    );
}

#[test]
fn no_window_allows_a_forbidden_change_unless_it_was_named() {
    let mut forbidden = change("zone", Impact::Forbidden, Downtime::new(60, 120));
    // Inside the window, still above what it allows.
    let held = check(&forbidden, "2026-11-28T02:00:00Z", &Durations::default()).expect("held");
    assert_eq!(held.opens, None);
    assert_eq!(
        held.to_string(),
        "forbidden is above what any window allows (pool-recreate)"
    );
    forbidden.requested = true;
    assert_eq!(
        check(&forbidden, "2026-11-28T02:00:00Z", &Durations::default()),
        None,
        "--replace names it: apply does it inside the window"
    );
}

/// Naming a forbidden change lifts *forbidden*, not the window: it waits for one, and must fit.
#[test]
fn a_named_forbidden_change_waits_for_an_open_window_it_fits_in() {
    let mut named = change("zone", Impact::Forbidden, Downtime::new(60, 120));
    named.requested = true;
    let friday = check(&named, "2026-11-27T11:00:00Z", &Durations::default()).expect("held");
    assert_eq!(
        friday.to_string(),
        "forbidden, named with --replace: a replacement is done only inside a maintenance window; next window opens Sat 2026-11-28 02:00 Europe/Zurich (in 14 hours)"
    );
    let last_minute = check(&named, "2026-11-28T03:59:00Z", &Durations::default()).expect("held");
    assert_eq!(
        last_minute.why,
        "forbidden, named with --replace: it may take 60-120 s and would outlast the open window"
    );
    named.action = Action::Delete;
    let removal = check(&named, "2026-11-27T11:00:00Z", &Durations::default()).expect("held");
    assert!(
        removal
            .why
            .starts_with("forbidden, named with --allow-delete: a removal is done only inside"),
        "{removal}"
    );
    let unrestricted = WindowCheck {
        policy: &MaintenancePolicy::unrestricted(),
        now: at("2026-11-27T11:00:00Z"),
        durations: &Durations::default(),
    };
    assert_eq!(unrestricted.check(&named), None, "without windows, at once");
}

#[test]
fn a_no_op_is_never_held() {
    let mut unchanged = pools();
    unchanged.action = Action::NoOp;
    assert_eq!(
        check(&unchanged, "2026-11-27T11:00:00Z", &Durations::default()),
        None
    );
}
