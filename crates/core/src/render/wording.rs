//! The sentences the review formats of a plan share (Markdown, GitHub annotations, HTML), so
//! that a pull-request comment, its annotations and the HTML report say the same thing.

use super::view::{ChangeView, PlanView, WindowView};
use crate::model::Impact;
use crate::plan::Action;

/// The changed resources, in the plan's order (by address).
pub(super) fn changed(view: &PlanView) -> impl Iterator<Item = &ChangeView> {
    view.changes.iter().filter(|c| c.action != Action::NoOp)
}

/// `Plan: 2 to create, 4 to update, 0 to replace, 0 to delete, 1 unchanged.`
pub(super) fn counts(view: &PlanView) -> String {
    let s = &view.summary;
    let moves = match s.moved {
        0 => String::new(),
        n => format!(", {n} to move"),
    };
    format!(
        "Plan: {} to create, {} to update, {} to replace, {} to delete, {} unchanged{moves}.",
        s.create, s.update, s.replace, s.delete, s.no_op
    )
}

/// `Impact: pool-recreate; estimated downtime 60-120 s.`, the downtime only where there is one.
pub(super) fn impact(view: &PlanView) -> String {
    match downtime(view.impact, &view.summary.estimated_downtime_s) {
        Some(downtime) => format!("Impact: {}; estimated downtime {downtime}.", view.impact),
        None => format!("Impact: {}.", view.impact),
    }
}

/// The downtime worth showing: none below `minimal`, and no "no downtime" sentence either.
pub(super) fn downtime(impact: Impact, downtime: &crate::model::Downtime) -> Option<String> {
    (impact >= Impact::Minimal && downtime.max > 0).then(|| downtime.to_string())
}

/// `Downtime 60-125 s: one disruption after another, pool tcp 60-120 s, then floating IP up to
/// 5 s` — why a resource's downtime is more than any one attribute's; `None` for one disruption.
pub(super) fn downtime_steps(change: &ChangeView) -> Option<String> {
    if change.downtime_adds_up.is_empty() {
        return None;
    }
    let steps: Vec<String> = change
        .downtime_adds_up
        .iter()
        .map(|step| format!("{} {}", step.what, step.estimated_downtime_s))
        .collect();
    Some(format!(
        "Downtime {}: one disruption after another, {}",
        change.estimated_downtime_s,
        steps.join(", then ")
    ))
}

/// Whether apply may do the change now: `—` where no policy was consulted, `now`, or why not
/// and when the next window that allows it opens.
pub(super) fn window_fit(window: Option<&WindowView>) -> String {
    let Some(window) = window else {
        return "—".to_string();
    };
    if window.now {
        return "now".to_string();
    }
    let next = window
        .next_window
        .as_deref()
        .map(|at| format!("next window opens {}", opening(at)));
    let parts: Vec<String> = window.reason.iter().cloned().chain(next).collect();
    if parts.is_empty() {
        "not now".to_string()
    } else {
        parts.join("; ")
    }
}

/// `Sat 2026-11-28 02:00 (+01:00)`: an RFC 3339 opening as a reviewer reads it, in the
/// window's own offset; as given when it does not parse.
fn opening(at: &str) -> String {
    let Ok(local) = at.parse::<jiff::civil::DateTime>() else {
        return at.to_string();
    };
    let offset = at
        .rfind(['+', '-', 'Z'])
        .filter(|&i| i > 10)
        .map(|i| format!(" ({})", &at[i..]))
        .unwrap_or_default();
    format!("{}{offset}", local.strftime("%a %Y-%m-%d %H:%M"))
}

/// What apply does to a refused change and how to do it anyway.
pub(super) fn refusal(change: &ChangeView) -> String {
    format!(
        "apply holds this back; name it with {} to do it anyway",
        refusal_flag(change)
    )
}

/// The flag that does a refused change anyway: `--replace ADDR`, `--allow-delete ADDR`.
pub(super) fn refusal_flag(change: &ChangeView) -> String {
    let flag = match change.action {
        Action::Delete => "allow-delete",
        _ => "replace",
    };
    format!("--{flag} {}", change.address)
}

/// `the forbidden change to A: its details say…`, `the forbidden changes to A, B: each one's…`
pub(super) fn refused_sentence(addresses: &[String]) -> String {
    match addresses.len() {
        1 => format!(
            "apply holds back the forbidden change to {} and does the rest: its details say how to do it anyway",
            addresses[0]
        ),
        _ => format!(
            "apply holds back the forbidden changes to {} and does the rest: each one's details say how to do it anyway",
            addresses.join(", ")
        ),
    }
}

/// `will be created`, … as a verb phrase for a change; a refused change cannot be made.
pub(super) fn verdict(change: &ChangeView) -> &'static str {
    if change.refused {
        return "cannot be changed";
    }
    match change.action {
        Action::Create => "will be created",
        Action::Update => "will be updated in place",
        Action::Replace => "will be destroyed and created again",
        Action::Delete => "will be deleted",
        Action::NoOp => "is left alone",
    }
}

/// `Rollout: 3 waves of at most 2 disrupted (per zone); each change waits up to 300 s to be
/// healthy.`, `… with no limit` without one, `…; no health gate.` without the gate; without
/// waves, that there is nothing to roll out.
pub(super) fn rollout_heading(rollout: &super::view::RolloutView) -> String {
    if rollout.waves.is_empty() {
        return "Rollout: no disruptive change, nothing to roll out.".to_string();
    }
    let waves = super::counted(rollout.waves.len(), "wave");
    let limit = match rollout.max_disrupted {
        Some(n) => format!(" of at most {n} disrupted"),
        None => " with no limit on what is disrupted at once".to_string(),
    };
    let per = match rollout.per {
        Some(per) => format!(" (per {per})"),
        None => String::new(),
    };
    let gate = match rollout.health_timeout_s {
        Some(seconds) => format!("; each change waits up to {seconds} s to be healthy"),
        None => "; no health gate".to_string(),
    };
    format!("Rollout: {waves}{limit}{per}{gate}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(now: bool, reason: Option<&str>, next: Option<&str>) -> WindowView {
        WindowView {
            now,
            reason: reason.map(String::from),
            next_window: next.map(String::from),
        }
    }

    #[test]
    fn a_rollout_without_waves_says_there_is_nothing_to_roll_out() {
        let mut rollout = super::super::view::RolloutView {
            max_disrupted: Some(1),
            per: None,
            health_timeout_s: Some(300),
            waves: vec![],
        };
        let nothing = "Rollout: no disruptive change, nothing to roll out.";
        assert_eq!(rollout_heading(&rollout), nothing);
        rollout.waves.push(super::super::view::WaveView {
            addresses: vec!["load-balancer.a".into()],
            estimated_s: crate::model::Downtime::new(60, 120),
            fits_window: true,
        });
        assert_eq!(
            rollout_heading(&rollout),
            "Rollout: 1 wave of at most 1 disrupted; each change waits up to 300 s to be healthy."
        );
    }

    #[test]
    fn window_fit_says_now_or_why_not_and_when() {
        assert_eq!(window_fit(None), "—");
        assert_eq!(window_fit(Some(&window(true, None, None))), "now");
        assert_eq!(
            window_fit(Some(&window(
                false,
                Some("pool-recreate is above what apply may do now (minimal)"),
                Some("2026-11-28T02:00:00+01:00")
            ))),
            "pool-recreate is above what apply may do now (minimal); next window opens Sat 2026-11-28 02:00 (+01:00)"
        );
        assert_eq!(
            window_fit(Some(&window(
                false,
                None,
                Some("2026-11-28T02:00:00+01:00")
            ))),
            "next window opens Sat 2026-11-28 02:00 (+01:00)"
        );
        assert_eq!(window_fit(Some(&window(false, None, None))), "not now");
    }
}
