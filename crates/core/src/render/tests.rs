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
        effects: Vec::new(),
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
        ..Plan::default()
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
        ..Plan::default()
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

/// A list against a value known only after apply is one line: nothing to diff it against.
#[test]
fn a_list_against_an_unknown_value_is_one_line_not_a_diff() {
    use crate::model::{Address, Downtime, Impact, ResourceKind};
    use crate::plan::{unknown, Action, AttributeChange, ResourceChange};
    use serde_json::json;
    let mut change = ResourceChange::no_op(
        Address::new(ResourceKind::LoadBalancer, "edge"),
        "cloudstack",
        None,
    );
    change.action = Action::Update;
    change.attributes = vec![AttributeChange {
        path: "members".into(),
        before: json!(["lab-node-331d1d", "lab-node-5ec6ad", "lab-node-dd42ac"]),
        after: unknown("the 2 workers of cluster.lab, known once it is applied"),
        impact: Impact::Minimal,
        reason: "LB rule edge-tcp-80: assigned after the cluster".into(),
        downtime: Downtime::new(0, 5),
        group: "LB rule edge-tcp-80".into(),
        effects: vec![],
    }];
    let plan = Plan {
        changes: vec![change],
        ..Plan::default()
    };
    let text = render_text(&PlanView::new(&plan), Style::Plain);
    assert!(
        text.contains("    ~ members: [\"lab-node-331d1d\",\"lab-node-5ec6ad\",\"lab-node-dd42ac\"] → (the 2 workers of cluster.lab, known once it is applied)  [minimal, up to 5 s]\n"),
        "{text}"
    );
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
            effects: Vec::new(),
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

/// The fixture with `docs` (a no-op) and `web` (an update) renamed by `[[moved]]` entries.
fn with_moves() -> Plan {
    let mut plan = plan();
    for change in &mut plan.changes {
        change.moved_from = match change.address.to_string().as_str() {
            "load-balancer.docs" => Some("load-balancer.documentation".parse().unwrap()),
            "load-balancer.web" => Some("load-balancer.www".parse().unwrap()),
            _ => None,
        };
    }
    plan
}

#[test]
fn a_move_is_shown_in_every_format_and_counted_apart() {
    let plan = with_moves();
    let view = PlanView::new(&plan);
    let text = render_text(&view, Style::Plain);
    assert!(
        text.contains("# load-balancer.documentation has moved to load-balancer.docs\n"),
        "{text}"
    );
    assert!(
        text.contains("load-balancer.web will be updated in place: pool-recreate, downtime 60-120 s\n    # (moved from load-balancer.www)\n"),
        "{text}"
    );
    assert!(text.contains(", 1 unchanged, 2 to move.\n"), "{text}");
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(json["summary"]["moved"], 2);
    let docs = (json["changes"].as_array().unwrap().iter())
        .find(|c| c["address"] == "load-balancer.docs")
        .unwrap();
    assert_eq!(docs["moved_from"], "load-balancer.documentation");
    assert_eq!(docs["action"], "no-op");
    let markdown = render_plan_markdown(&view);
    assert!(
        markdown.contains("`load-balancer.documentation` → `load-balancer.docs`"),
        "{markdown}"
    );
    assert!(
        markdown.contains("Moved from `load-balancer.www`"),
        "{markdown}"
    );
}

#[test]
fn a_plan_without_moves_writes_no_move_keys() {
    let json = serde_json::to_string(&PlanView::new(&plan())).unwrap();
    assert!(!json.contains("moved"), "{json}");
}

#[test]
fn a_plan_that_only_moves_has_changes_for_apply() {
    let mut plan = with_moves();
    plan.changes
        .retain(|c| c.address.to_string() == "load-balancer.docs");
    assert!(plan.has_changes());
    let text = render_text(&PlanView::new(&plan), Style::Plain);
    assert!(!text.contains("No changes"), "{text}");
    assert!(
        text.contains(
            "Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 1 unchanged, 1 to move."
        ),
        "{text}"
    );
}
