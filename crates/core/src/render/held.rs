//! What apply will hold back, shown in the plan: each change's `held_back` reason and
//! `window` entry come from the decisions apply itself takes (`apply::hold`,
//! `apply::window_check`), so the plan and the apply can never disagree.

use std::collections::HashMap;

use super::view::{ChangeView, PlanView, WindowView};
use crate::apply::hold::{self, HoldBack};
use crate::apply::window_check::WindowCheck;
use crate::plan::{Action, Plan, ResourceChange};

/// What a plan alone shows held back: a forbidden change nobody named. The workspace knows
/// more (exclusions, the window, dependents): [`PlanView::with_holds`].
pub(super) fn refused(change: &ResourceChange) -> Option<String> {
    hold::forbidden(change).map(|reason| reason.to_string())
}

impl PlanView {
    /// Each change apply holds back says why; the others say nothing.
    pub fn with_holds(mut self, holds: &HoldBack) -> PlanView {
        let reasons: HashMap<String, String> = holds
            .held
            .iter()
            .map(|h| (h.address.to_string(), h.reason.to_string()))
            .collect();
        for shown in &mut self.changes {
            shown.held_back = reasons.get(&shown.address).cloned();
        }
        self
    }

    /// Each change says whether the maintenance policy lets apply do it at `window.now`, and
    /// if not, when the next window that allows it opens. Nothing without a `[maintenance]`
    /// table, nothing for a no-op.
    pub fn with_windows(mut self, plan: &Plan, window: &WindowCheck) -> PlanView {
        if !window.policy.has_windows() {
            return self;
        }
        for (change, shown) in plan.changes.iter().zip(&mut self.changes) {
            if change.action == Action::NoOp {
                continue;
            }
            shown.window = Some(match window.check(change) {
                None => WindowView {
                    now: true,
                    reason: None,
                    next_window: None,
                },
                Some(hold) => WindowView {
                    now: false,
                    reason: Some(hold.why),
                    next_window: hold.opens.map(|opens| {
                        let at = opens.at;
                        at.timestamp().display_with_offset(at.offset()).to_string()
                    }),
                },
            });
        }
        self
    }
}

/// The line under a change apply holds back; under one the maintenance policy lets apply do
/// now, that it may (so each change of a plan with windows says which it is).
pub(super) fn held_line(change: &ChangeView) -> Option<String> {
    if let Some(reason) = &change.held_back {
        return Some(format!("    ! held back: {reason}"));
    }
    let now = change.window.as_ref().is_some_and(|w| w.now);
    now.then(|| "    ✓ apply may do it now (the maintenance policy allows it)".to_string())
}

/// The plan's last line when apply holds something back.
pub(super) fn held_summary(view: &PlanView) -> Option<String> {
    let changed = view
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .count();
    let held: Vec<&str> = view
        .changes
        .iter()
        .filter(|c| c.held_back.is_some())
        .map(|c| c.address.as_str())
        .collect();
    match held.len() {
        0 => None,
        n if n == changed => Some(format!(
            "! apply will hold back every change ({}): nothing can be applied now.",
            held.join(", ")
        )),
        n => Some(format!(
            "! apply will hold back {n} of {changed} changes ({}) and do the rest.",
            held.join(", ")
        )),
    }
}

#[cfg(test)]
#[path = "held_tests.rs"]
mod tests;
