//! Which changes the maintenance policy lets apply perform now, and which it holds back.

use std::time::Duration;

use jiff::Timestamp;

use super::window::MaintenancePolicy;
use crate::model::Impact;
use crate::plan::durations::{seconds, Durations};
use crate::plan::{Action, Plan, ResourceChange};

/// A change apply does not perform now, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub address: String,
    pub impact: Impact,
    pub reason: String,
}

/// How long a change keeps its resource disturbed: its downtime estimate's worst case.
pub fn estimated_duration(change: &ResourceChange) -> Duration {
    Duration::from_secs(change.downtime().max.into())
}

/// How long a change needs in a window, and how that was found: the slowest recent runs of its
/// operations once every kind among them was measured, the estimate otherwise.
pub fn window_duration(change: &ResourceChange, durations: &Durations) -> (Duration, String) {
    match durations.of_change(change) {
        Some(measured) => (
            Duration::from_millis(measured.worst_ms),
            format!(
                "it took up to {} in the last {} run(s)",
                seconds(measured.worst_ms),
                measured.runs
            ),
        ),
        None => (
            estimated_duration(change),
            format!("it may take up to {}", change.downtime()),
        ),
    }
}

/// Splits `plan` into the changes the policy allows at `now` and those it holds back: a change
/// above the class allowed now, or one that needs the open window but would outlast it (by
/// its measured duration once there is one, `durations`). Each change is a whole resource, so
/// what remains can be applied on its own.
pub fn hold_back(
    plan: &Plan,
    policy: &MaintenancePolicy,
    now: Timestamp,
    durations: &Durations,
) -> (Plan, Vec<Held>) {
    let allowed = policy.allowed_at(now);
    let mut runnable = Plan::default();
    let mut held = Vec::new();
    for change in &plan.changes {
        let impact = change.impact();
        let reason = if change.action == Action::NoOp || change.requested {
            None
        } else if impact > allowed {
            Some(format!(
                "{impact} is above what apply may do now ({allowed}); {}",
                policy.describe_next(now)
            ))
        } else if impact > policy.outside_window() {
            let (needs, how_long) = window_duration(change, durations);
            (!policy.fits(now, needs)).then(|| {
                format!(
                    "{how_long} and would outlast the open window; {}",
                    policy.describe_next(now)
                )
            })
        } else {
            None
        };
        match reason {
            Some(reason) => held.push(Held {
                address: change.address.to_string(),
                impact,
                reason,
            }),
            None => runnable.changes.push(change.clone()),
        }
    }
    (runnable, held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Maintenance;
    use crate::model::{Address, Downtime, ResourceKind};
    use crate::plan::AttributeChange;

    fn policy() -> MaintenancePolicy {
        MaintenancePolicy::new(&Maintenance {
            timezone: "Europe/Zurich".into(),
            windows: vec!["Sat 02:00-05:00".into()],
            outside_window: Impact::Minimal,
            inside_window: Impact::PoolRecreate,
        })
        .unwrap()
    }

    fn change(name: &str, impact: Impact, downtime: Downtime) -> ResourceChange {
        let mut change = ResourceChange::no_op(
            Address::new(ResourceKind::LoadBalancer, name),
            "cloudscale",
            None,
        );
        change.action = Action::Update;
        change.attributes.push(AttributeChange {
            path: "x".into(),
            before: serde_json::Value::Null,
            after: serde_json::Value::Null,
            impact,
            reason: String::new(),
            downtime,
            group: "g".into(),
        });
        change
    }

    fn plan() -> Plan {
        Plan {
            changes: vec![
                change("calm", Impact::Minimal, Downtime::new(0, 5)),
                change("pools", Impact::PoolRecreate, Downtime::new(60, 120)),
            ],
            ..Plan::default()
        }
    }

    fn at(time: &str) -> Timestamp {
        time.parse().unwrap()
    }

    fn none() -> Durations {
        Durations::default()
    }

    #[test]
    fn outside_a_window_disruptive_changes_wait_for_it() {
        // Friday noon in Zurich.
        let (runnable, held) = hold_back(&plan(), &policy(), at("2026-11-27T11:00:00Z"), &none());
        assert_eq!(runnable.changes.len(), 1);
        assert_eq!(held[0].address, "load-balancer.pools");
        assert!(
            held[0]
                .reason
                .contains("next window opens Sat 2026-11-28 02:00"),
            "{}",
            held[0].reason
        );
    }

    #[test]
    fn inside_a_window_they_run_if_they_fit() {
        // Saturday 03:00 Zurich: two hours of window left.
        let (runnable, held) = hold_back(&plan(), &policy(), at("2026-11-28T02:00:00Z"), &none());
        assert_eq!((runnable.changes.len(), held.len()), (2, 0));
        // Saturday 04:59 Zurich: a minute left, a pool recreation may take two.
        let (runnable, held) = hold_back(&plan(), &policy(), at("2026-11-28T03:59:00Z"), &none());
        assert_eq!((runnable.changes.len(), held.len()), (1, 1));
        assert!(held[0].reason.contains("outlast"));
    }

    #[test]
    fn a_measured_duration_wins_over_the_estimate() {
        // Saturday 04:58 Zurich: two minutes left, a pool recreation is estimated at two.
        let now = at("2026-11-28T03:58:00Z");
        let mut plan = plan();
        plan.changes[1].operations = vec![crate::plan::Operation::new(
            "cloudscale",
            &serde_json::json!({"op": "delete-pool", "pool": "tcp"}),
        )];
        let (_, held) = hold_back(&plan, &policy(), now, &none());
        assert!(held.is_empty(), "the estimate fits");
        let mut slow = none();
        slow.record("cloudscale/delete-pool", Duration::from_secs(150));
        let (_, held) = hold_back(&plan, &policy(), now, &slow);
        assert_eq!(held.len(), 1);
        assert!(
            held[0]
                .reason
                .starts_with("it took up to 150.0 s in the last 1 run(s) and would outlast"),
            "{}",
            held[0].reason
        );
        let mut fast = none();
        fast.record("cloudscale/delete-pool", Duration::from_secs(3));
        let (_, held) = hold_back(&plan, &policy(), at("2026-11-28T03:59:30Z"), &fast);
        assert!(
            held.is_empty(),
            "30 s left: the estimate would not fit, 3 s does"
        );
    }
}
