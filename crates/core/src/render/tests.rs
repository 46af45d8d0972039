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

/// The fixture with a CIDR change left out by `ignore-changes`, and a refresh-only drift entry.
fn plan_with_ignored_and_drift() -> Plan {
    use crate::plan::{AttributeChange, Drifted, DriftedAttribute, DriftedStatus, Ignored};
    let mut plan = plan();
    let address = plan.changes[0].address.clone();
    plan.ignored.push(Ignored {
        address: address.clone(),
        attributes: vec![AttributeChange {
            path: "allowed-cidrs".into(),
            before: serde_json::json!(["192.0.2.0/24"]),
            after: serde_json::json!(["10.0.0.0/8"]),
            impact: crate::model::Impact::Minimal,
            reason: "listener updated in place".into(),
            downtime: crate::model::Downtime::ZERO,
            group: "listener".into(),
        }],
    });
    plan.drift.push(Drifted {
        address,
        provider: "cloudscale".into(),
        status: DriftedStatus::Drifted,
        attributes: vec![DriftedAttribute {
            path: "timeouts.client-data-ms".into(),
            before: serde_json::json!(50000),
            after: serde_json::json!(20000),
            impact: crate::model::Impact::None,
            reason: String::new(),
        }],
        accepted: None,
        unaccepted: Some("a reason".into()),
    });
    plan
}

#[test]
fn ignored_attributes_in_the_text() {
    let text = render_text(&PlanView::new(&plan_with_ignored_and_drift()), Style::Plain);
    let ignored: Vec<&str> = text.lines().filter(|l| l.starts_with("ignored:")).collect();
    insta::assert_snapshot!(ignored.join("\n"));
}

#[test]
fn ignored_attributes_and_drift_in_the_json() {
    let view = PlanView::new(&plan_with_ignored_and_drift());
    let ignored: Vec<_> = (view.changes.iter())
        .filter(|c| !c.ignored.is_empty())
        .map(|c| serde_json::json!({ "address": c.address, "ignored": c.ignored }))
        .collect();
    insta::assert_json_snapshot!(serde_json::json!({ "changes": ignored, "drift": view.drift }));
}
