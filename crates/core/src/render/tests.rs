//! Snapshots of the rendered plan: the human text and the JSON, from one plan of every class.

use super::fixture::plan;
use super::*;
use crate::plan::Plan;

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

/// A change of two disruptions one after another: a pool recreated, then a floating IP
/// moved; and a minimal change with no downtime at all.
fn two_disruptions_and_a_quiet_one() -> Plan {
    use crate::model::{Address, Downtime, Impact, ResourceKind};
    use crate::plan::{Action, AttributeChange, ResourceChange};
    let attribute = |path: &str, impact, downtime, group: &str| AttributeChange {
        path: path.into(),
        before: serde_json::Value::Null,
        after: serde_json::json!(1),
        impact,
        reason: "why".into(),
        downtime,
        group: group.into(),
    };
    let mut hello = ResourceChange::no_op(
        Address::new(ResourceKind::LoadBalancer, "hello"),
        "cloudscale",
        None,
    );
    hello.action = Action::Update;
    hello.attributes = vec![
        attribute(
            "ports.http.name",
            Impact::PoolRecreate,
            Downtime::new(60, 120),
            "pool tcp",
        ),
        attribute(
            "allowed-cidrs",
            Impact::Minimal,
            Downtime::new(0, 5),
            "pool tcp",
        ),
        attribute(
            "floating-ips",
            Impact::Minimal,
            Downtime::new(0, 5),
            "floating IP 5.102.150.123/32",
        ),
    ];
    let mut nodes =
        ResourceChange::no_op(Address::new(ResourceKind::Nodes, "web"), "kubernetes", None);
    nodes.action = Action::Create;
    nodes.attributes = vec![attribute(
        "taints",
        Impact::Minimal,
        Downtime::ZERO,
        "node-1",
    )];
    Plan {
        changes: vec![hello, nodes],
    }
}

#[test]
fn a_header_downtime_above_every_row_says_what_adds_up() {
    let view = PlanView::new(&two_disruptions_and_a_quiet_one());
    let text = render_text(&view, Style::Plain);
    assert!(
        text.contains(
            "pool-recreate, downtime 60-125 s\n    downtime 60-125 s: one disruption after \
             another, pool tcp 60-120 s, then floating IP 5.102.150.123/32 up to 5 s\n"
        ),
        "{text}"
    );
    assert_eq!(view.changes[0].downtime_adds_up.len(), 2);
    assert!(view.changes[1].downtime_adds_up.is_empty());
    assert!(
        text.contains("will be created: minimal, no downtime\n"),
        "{text}"
    );
    assert!(!text.contains("downtime no downtime"), "{text}");
}
