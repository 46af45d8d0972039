//! Snapshots of the rendered plan: the human text and the JSON, from one plan of every class.

use super::*;
use crate::plan::Plan;

/// One plan of every class: four cloudscale load balancers (a create, a no-op, a flavor
/// change, an algorithm and CIDR change), as the cloudscale diff planned them. Kept as data:
/// these tests are about rendering, and the pipeline knows no provider.
fn plan() -> Plan {
    serde_json::from_str(include_str!("testdata/plan.json")).expect("the plan fixture")
}

#[test]
fn human_plan() {
    insta::assert_snapshot!(render_text(&PlanView::new(&plan()), Style::Plain));
}

#[test]
fn json_plan() {
    insta::assert_json_snapshot!(PlanView::new(&plan()), {
        ".skyplan_version" => "[version]",
    });
}

#[test]
fn colour_is_only_added_when_asked() {
    let view = PlanView::new(&plan());
    assert!(!render_text(&view, Style::Plain).contains('\u{1b}'));
    assert!(render_text(&view, Style::Colour).contains('\u{1b}'));
}
