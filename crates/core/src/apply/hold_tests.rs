use super::*;
use crate::apply::test_changes::{at, change, policy};
use crate::apply::window::MaintenancePolicy;
use crate::model::{Downtime, ResourceKind};
use crate::plan::durations::Durations;

const FRIDAY_NOON: &str = "2026-11-27T11:00:00Z";
const SATURDAY_0300: &str = "2026-11-28T02:00:00Z";

fn lb(name: &str) -> Address {
    Address::new(ResourceKind::LoadBalancer, name)
}

fn lab() -> Address {
    Address::new(ResourceKind::Cluster, "lab")
}

/// `load-balancer.edge` and `load-balancer.web` on cluster.lab; `load-balancer.tail` behind
/// `load-balancer.edge` (a chain, to see the hold travel more than one step).
fn depends_on(address: &Address) -> Vec<Address> {
    match address.to_string().as_str() {
        "load-balancer.edge" | "load-balancer.web" => vec![lab()],
        "load-balancer.tail" => vec![lb("edge")],
        _ => vec![],
    }
}

fn cluster_change(impact: Impact) -> ResourceChange {
    let mut cluster = change("x", impact, Downtime::new(0, 60));
    cluster.address = lab();
    cluster
}

fn deleted(address: Address, requested: bool) -> ResourceChange {
    let mut gone = change("x", Impact::Forbidden, Downtime::new(0, 0));
    gone.address = address;
    gone.action = Action::Delete;
    gone.attributes[0].path = String::new();
    gone.requested = requested;
    gone
}

fn minimal(name: &str) -> ResourceChange {
    change(name, Impact::Minimal, Downtime::new(0, 5))
}

fn hold(plan: &[ResourceChange], excluded: &[Address], now: &str) -> HoldBack {
    hold_with(plan, excluded, &policy(), now)
}

fn hold_with(
    plan: &[ResourceChange],
    excluded: &[Address],
    policy: &MaintenancePolicy,
    now: &str,
) -> HoldBack {
    let plan = Plan {
        changes: plan.to_vec(),
        ..Plan::default()
    };
    let window = WindowCheck {
        policy,
        now: at(now),
        durations: &Durations::default(),
    };
    hold_back(&plan, excluded, &window, depends_on)
}

fn held(holds: &HoldBack) -> Vec<(String, String)> {
    holds
        .held
        .iter()
        .map(|h| (h.address.to_string(), h.reason.to_string()))
        .collect()
}

fn runnable(holds: &HoldBack) -> Vec<String> {
    holds
        .runnable
        .changes
        .iter()
        .map(|c| c.address.to_string())
        .collect()
}

#[test]
fn a_forbidden_change_holds_back_itself_and_nothing_independent() {
    let mut zone = change("shop", Impact::Forbidden, Downtime::new(60, 120));
    zone.attributes[0].path = "zone".into();
    let holds = hold(&[minimal("docs"), zone], &[], FRIDAY_NOON);
    assert_eq!(
        held(&holds),
        [(
            "load-balancer.shop".to_string(),
            "forbidden: zone; name it with --replace load-balancer.shop to do it anyway"
                .to_string()
        )]
    );
    assert_eq!(holds.held[0].impact, Impact::Forbidden);
    assert_eq!(runnable(&holds), ["load-balancer.docs"]);
}

#[test]
fn what_depends_on_a_held_change_is_held_transitively() {
    let plan = [
        cluster_change(Impact::Forbidden),
        minimal("edge"),
        minimal("tail"),
        minimal("web"),
        minimal("other"),
    ];
    let holds = hold(&plan, &[], FRIDAY_NOON);
    let reasons = held(&holds);
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(reasons[0].1.starts_with("forbidden: x;"), "{reasons:?}");
    assert_eq!(
        reasons[1..],
        [
            (
                "load-balancer.edge".into(),
                "depends on cluster.lab, held back".into()
            ),
            (
                "load-balancer.tail".into(),
                "depends on load-balancer.edge, held back".into()
            ),
            (
                "load-balancer.web".into(),
                "depends on cluster.lab, held back".into()
            ),
        ]
    );
    assert_eq!(runnable(&holds), ["load-balancer.other"]);
}

#[test]
fn a_dependency_held_back_does_not_hold_what_it_does_not_precede() {
    // The load balancer is held; the cluster it depends on goes first anyway.
    let holds = hold(
        &[cluster_change(Impact::Minimal), minimal("edge")],
        &[lb("edge")],
        FRIDAY_NOON,
    );
    assert_eq!(
        held(&holds),
        [(
            "load-balancer.edge".to_string(),
            "excluded with --exclude".to_string()
        )]
    );
    assert_eq!(runnable(&holds), ["cluster.lab"]);
}

#[test]
fn a_delete_held_back_keeps_what_its_resource_depends_on() {
    // The load balancer's removal is refused, so the cluster it runs on cannot go either,
    // even though --allow-delete names the cluster.
    // Inside the window: a named removal waits for one (see the window tests).
    let holds = hold(
        &[deleted(lab(), true), deleted(lb("edge"), false)],
        &[],
        SATURDAY_0300,
    );
    assert_eq!(
        held(&holds),
        [
            (
                "cluster.lab".to_string(),
                "load-balancer.edge depends on it and is held back, so it stays".to_string()
            ),
            (
                "load-balancer.edge".to_string(),
                "forbidden: removed from the config; name it with --allow-delete load-balancer.edge to do it anyway"
                    .to_string()
            ),
        ]
    );
    assert!(runnable(&holds).is_empty());
}

#[test]
fn a_dependency_delete_held_back_lets_its_dependents_go() {
    // The cluster's removal is refused; deleting its load balancer first is what apply would
    // do anyway, so that goes ahead.
    let holds = hold(
        &[deleted(lab(), false), deleted(lb("edge"), true)],
        &[],
        SATURDAY_0300,
    );
    assert_eq!(holds.held.len(), 1);
    assert_eq!(holds.held[0].address, lab());
    assert_eq!(runnable(&holds), ["load-balancer.edge"]);
}

#[test]
fn excluded_wins_over_forbidden_and_no_ops_are_never_held() {
    let mut unchanged = minimal("edge");
    unchanged.action = Action::NoOp;
    let holds = hold(
        &[cluster_change(Impact::Forbidden), unchanged],
        &[lab()],
        FRIDAY_NOON,
    );
    assert_eq!(
        held(&holds),
        [(
            "cluster.lab".to_string(),
            "excluded with --exclude".to_string()
        )]
    );
    assert_eq!(
        runnable(&holds),
        ["load-balancer.edge"],
        "the no-op is kept"
    );
}

#[test]
fn the_window_holds_back_what_it_does_not_allow_and_its_dependents() {
    let plan = [
        cluster_change(Impact::PoolRecreate),
        minimal("edge"),
        minimal("other"),
    ];
    let holds = hold(&plan, &[], FRIDAY_NOON);
    let reasons = held(&holds);
    assert_eq!(reasons[0].0, "cluster.lab");
    assert!(
        reasons[0].1.starts_with(
            "pool-recreate is above what apply may do now (minimal); next window opens Sat 2026-11-28 02:00 Europe/Zurich"
        ),
        "{reasons:?}"
    );
    assert!(matches!(holds.held[0].reason, HeldReason::Window(_)));
    assert_eq!(
        reasons[1],
        (
            "load-balancer.edge".to_string(),
            "depends on cluster.lab, held back".to_string()
        )
    );
    assert_eq!(runnable(&holds), ["load-balancer.other"]);
    // Inside the window, nothing waits.
    assert!(hold(&plan, &[], SATURDAY_0300).held.is_empty());
    // Without a [maintenance] table, nothing waits either.
    let unrestricted = hold_with(&plan, &[], &MaintenancePolicy::unrestricted(), FRIDAY_NOON);
    assert!(unrestricted.held.is_empty());
}

#[test]
fn a_named_removal_outside_the_window_is_held_back_by_the_window() {
    let holds = hold(&[deleted(lb("edge"), true)], &[], FRIDAY_NOON);
    assert_eq!(
        held(&holds),
        [(
            "load-balancer.edge".to_string(),
            "forbidden, named with --allow-delete: a removal is done only inside a maintenance window; next window opens Sat 2026-11-28 02:00 Europe/Zurich (in 14 hours)"
                .to_string()
        )]
    );
}
