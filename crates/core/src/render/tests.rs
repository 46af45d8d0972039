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

/// Controller mode: the user's attribute, the controller's effects indented under it, a value
/// known only after apply shown as such — in text and, as a marker, in JSON.
#[test]
fn effects_are_rendered_under_their_attribute_and_unknown_values_as_such() {
    use crate::model::{Address, Downtime, Impact, ResourceKind};
    use crate::plan::{unknown, Action, AttributeChange, Effect, ResourceChange};
    use serde_json::json;
    let effect = |path: &str, before, after, reason: &str| Effect {
        path: path.into(),
        before,
        after,
        impact: Impact::Minimal,
        reason: reason.into(),
    };
    let mut change = ResourceChange::no_op(
        Address::new(ResourceKind::LoadBalancer, "store"),
        "cloudscale",
        None,
    );
    change.action = Action::Update;
    change.attributes = vec![AttributeChange {
        path: "traffic-policy".into(),
        before: json!("Cluster"),
        after: json!("Local"),
        impact: Impact::Minimal,
        reason: "members are recreated".into(),
        downtime: Downtime::new(0, 20),
        group: "pool tcp/http".into(),
        effects: vec![
            effect(
                "ports.http.monitor-port",
                json!([30000]),
                json!([unknown("allocated by the apiserver")]),
                "members of pool tcp/http: members are recreated",
            ),
            effect(
                "health-monitor.type",
                json!("tcp"),
                json!("http"),
                "health monitor of pool tcp/http: recreated",
            ),
        ],
    }];
    let plan = Plan {
        changes: vec![change],
    };
    let text = render_text(&PlanView::new(&plan), Style::Plain);
    insta::assert_snapshot!(text);
    assert!(!text.contains("[0]"));
    let json = serde_json::to_value(PlanView::new(&plan)).unwrap();
    let effects = &json["changes"][0]["attributes"][0]["effects"];
    assert_eq!(
        effects[0]["after"],
        json!([{"unknown": "allocated by the apiserver"}])
    );
    assert_eq!(effects[1]["path"], "health-monitor.type");
}
