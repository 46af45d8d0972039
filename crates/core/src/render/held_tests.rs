//! The plan's held-back changes and window entries, from the decisions apply takes.

use super::*;
use crate::apply::test_changes::{at, policy};
use crate::apply::window::MaintenancePolicy;
use crate::plan::durations::Durations;
use crate::render::{render_text, Style};

/// The render tests' plan: load-balancer.api created (none), load-balancer.shop a forbidden
/// flavor change, load-balancer.web a pool recreation, one no-op.
fn plan() -> Plan {
    serde_json::from_str(include_str!("testdata/plan.json")).expect("the plan fixture")
}

/// The plan as `plan --now` shows it at `now` under the Saturday-window policy.
fn view_at(policy: &MaintenancePolicy, now: &str) -> PlanView {
    let plan = plan();
    let durations = Durations::default();
    let window = WindowCheck {
        policy,
        now: at(now),
        durations: &durations,
    };
    let holds = hold::hold_back(&plan, &[], &window, |_| vec![]);
    PlanView::new(&plan)
        .with_holds(&holds)
        .with_windows(&plan, &window)
}

const FRIDAY_NOON: &str = "2026-11-27T11:00:00Z";

#[test]
fn human_plan_outside_the_window() {
    insta::assert_snapshot!(render_text(&view_at(&policy(), FRIDAY_NOON), Style::Plain));
}

#[test]
fn json_changes_outside_the_window() {
    let view = view_at(&policy(), FRIDAY_NOON);
    let entries: Vec<serde_json::Value> = view
        .changes
        .iter()
        .map(|c| {
            serde_json::json!({
                "address": c.address,
                "held_back": c.held_back,
                "window": c.window,
            })
        })
        .collect();
    insta::assert_json_snapshot!(entries);
}

#[test]
fn inside_the_window_only_the_forbidden_change_is_held() {
    let view = view_at(&policy(), "2026-11-28T02:00:00Z");
    let held: Vec<&str> = view
        .changes
        .iter()
        .filter(|c| c.held_back.is_some())
        .map(|c| c.address.as_str())
        .collect();
    assert_eq!(held, ["load-balancer.shop"]);
    let web = view
        .changes
        .iter()
        .find(|c| c.address == "load-balancer.web")
        .unwrap();
    assert_eq!(
        web.window,
        Some(WindowView {
            now: true,
            reason: None,
            next_window: None
        })
    );
}

#[test]
fn without_a_maintenance_table_no_change_has_a_window_entry() {
    let view = view_at(&MaintenancePolicy::unrestricted(), FRIDAY_NOON);
    assert!(view.changes.iter().all(|c| c.window.is_none()));
    let text = render_text(&view, Style::Plain);
    assert!(
        text.contains(
            "! apply will hold back 1 of 3 changes (load-balancer.shop) and do the rest."
        ),
        "{text}"
    );
}

#[test]
fn a_plan_alone_shows_its_forbidden_changes_held_back() {
    let view = PlanView::new(&plan());
    let shop = view
        .changes
        .iter()
        .find(|c| c.address == "load-balancer.shop")
        .unwrap();
    assert_eq!(
        shop.held_back.as_deref(),
        Some("forbidden: flavor; name it with --replace load-balancer.shop to do it anyway")
    );
    assert!(view
        .changes
        .iter()
        .filter(|c| c.address != "load-balancer.shop")
        .all(|c| c.held_back.is_none()));
}

/// The rollout of the fixture at Saturday 04:57 Zurich with at most one disrupted at once:
/// its one runnable disruptive change (shop is forbidden, api calm) is one wave that fits.
#[test]
fn rollout_in_every_format() {
    use crate::apply::rollout::plan_rollout;
    use crate::config::Rollout;
    let plan = plan();
    let durations = Durations::default();
    let policy = policy();
    let window = WindowCheck {
        policy: &policy,
        now: at("2026-11-28T03:57:00Z"),
        durations: &durations,
    };
    let rollout = Rollout {
        max_disrupted: Some(1),
        ..Rollout::default()
    };
    let holds = hold::hold_back(&plan, &[], &window, |_| vec![]);
    let waves = plan_rollout(&holds.runnable.changes, &rollout, &window, |_| vec![]);
    let view = PlanView::new(&plan)
        .with_holds(&holds)
        .with_windows(&plan, &window)
        .with_rollout(&waves);
    insta::assert_json_snapshot!("rollout_json", view.rollout);
    insta::assert_snapshot!("rollout_text", render_text(&view, Style::Plain));
    insta::assert_snapshot!(
        "rollout_markdown",
        crate::render::render_plan_markdown(&view)
    );
}
