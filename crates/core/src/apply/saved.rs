//! A saved plan's window decisions (`plan::file::SavedOutlook`): what `plan --out` printed
//! apply would hold back, and for when. Applying (or showing) the file later holds back again
//! what was held back then — apply does no more than the reviewed plan said it would — and
//! checks the maintenance window again for the rest, at the time it runs: a window that has
//! closed since holds back more, one that has opened lets nothing more through.

use std::collections::BTreeMap;

use super::hold::{HeldReason, HoldBack};
use crate::model::Address;
use crate::plan::file::{SavedHold, SavedOutlook};

/// The decisions of `holds`, taken for `decided_at`, as the plan file keeps them.
pub fn outlook_of(holds: &HoldBack, decided_at: jiff::Timestamp) -> SavedOutlook {
    SavedOutlook {
        decided_at: decided_at.to_string(),
        held: (holds.held.iter())
            .map(|held| SavedHold {
                address: held.address.clone(),
                reason: held.reason.to_string(),
            })
            .collect(),
    }
}

/// What the saved plan held back, each to be held back again with the reason it had then.
pub fn held_then(outlook: &SavedOutlook) -> BTreeMap<Address, HeldReason> {
    (outlook.held.iter())
        .map(|held| (held.address.clone(), HeldReason::Saved(held.reason.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::hold::hold_back_with;
    use crate::apply::test_changes::{at, change, policy};
    use crate::apply::window_check::WindowCheck;
    use crate::model::{Downtime, Impact};
    use crate::plan::durations::Durations;
    use crate::plan::Plan;

    /// A pool recreation and a member change, checked against the Saturday window at `now`.
    fn holds_at(now: &str, earlier: &BTreeMap<Address, HeldReason>) -> HoldBack {
        let plan = Plan {
            changes: vec![
                change("web", Impact::PoolRecreate, Downtime::new(60, 120)),
                change("api", Impact::Minimal, Downtime::new(0, 5)),
            ],
            ..Plan::default()
        };
        let (policy, durations) = (policy(), Durations::default());
        let window = WindowCheck {
            policy: &policy,
            now: at(now),
            durations: &durations,
        };
        hold_back_with(&plan, &[], &window, earlier, |_| vec![])
    }

    fn held(holds: &HoldBack) -> Vec<String> {
        holds.held.iter().map(|h| h.address.to_string()).collect()
    }

    const FRIDAY_NOON: &str = "2026-11-27T12:00:00+01:00";
    const SATURDAY_0230: &str = "2026-11-28T02:30:00+01:00";

    #[test]
    fn the_saved_decisions_are_what_the_plan_held_back_for_when() {
        let holds = holds_at(FRIDAY_NOON, &BTreeMap::new());
        let saved = outlook_of(&holds, at(FRIDAY_NOON));
        assert_eq!(saved.decided_at, "2026-11-27T11:00:00Z");
        assert_eq!(saved.held.len(), 1);
        assert_eq!(saved.held[0].address.to_string(), "load-balancer.web");
        assert!(
            (saved.held[0].reason).starts_with("pool-recreate is above what apply may do now"),
            "{saved:?}"
        );
    }

    #[test]
    fn applied_when_it_was_planned_the_same_is_held_back() {
        let saved = outlook_of(&holds_at(FRIDAY_NOON, &BTreeMap::new()), at(FRIDAY_NOON));
        let again = holds_at(FRIDAY_NOON, &held_then(&saved));
        assert_eq!(held(&again), ["load-balancer.web"]);
        // The window's own reason, now as then: not "held back when the plan was made".
        assert!(matches!(again.held[0].reason, HeldReason::Window(_)));
    }

    #[test]
    fn inside_a_window_that_opened_since_what_was_held_back_stays_held_back() {
        let saved = outlook_of(&holds_at(FRIDAY_NOON, &BTreeMap::new()), at(FRIDAY_NOON));
        let later = holds_at(SATURDAY_0230, &held_then(&saved));
        assert_eq!(held(&later), ["load-balancer.web"]);
        let reason = later.held[0].reason.to_string();
        assert!(
            reason.starts_with("held back when the plan was made (pool-recreate is above"),
            "{reason}"
        );
    }

    #[test]
    fn once_the_window_closed_since_what_it_no_longer_allows_is_held_back() {
        let saved = outlook_of(
            &holds_at(SATURDAY_0230, &BTreeMap::new()),
            at(SATURDAY_0230),
        );
        assert!(saved.held.is_empty());
        let later = holds_at(FRIDAY_NOON, &held_then(&saved));
        assert_eq!(held(&later), ["load-balancer.web"]);
    }
}
