//! The one decision whether the maintenance policy lets apply perform a change at an instant.
//! Apply holds back by it before it starts, admits each resource by it as that resource
//! starts, and the plan shows it per change: the three can never disagree.

use std::fmt;
use std::time::Duration;

use jiff::{Timestamp, Zoned};

use super::window::MaintenancePolicy;
use crate::model::Impact;
use crate::plan::durations::{seconds, Durations};
use crate::plan::{Action, ResourceChange};

/// The policy at one instant, with the measured durations that say how long a change takes.
#[derive(Debug, Clone, Copy)]
pub struct WindowCheck<'a> {
    pub policy: &'a MaintenancePolicy,
    pub now: Timestamp,
    pub durations: &'a Durations,
}

/// Why the policy does not let apply perform a change now, and when it will.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowHold {
    /// E.g. `pool-recreate is above what apply may do now (minimal)`.
    pub why: String,
    /// The next window that allows it; `None` when no window ever does.
    pub opens: Option<Opening>,
}

/// When a window opens, as an instant in the policy's time zone and in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub at: Zoned,
    /// E.g. `next window opens Sat 2026-11-28 02:00 Europe/Zurich (in 14 hours)`.
    pub described: String,
}

impl fmt::Display for WindowHold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.opens {
            Some(opening) => write!(f, "{}; {}", self.why, opening.described),
            None => write!(f, "{}", self.why),
        }
    }
}

/// How long a change keeps its resource disturbed: its downtime estimate's worst case.
fn estimated_duration(change: &ResourceChange) -> Duration {
    Duration::from_secs(change.downtime().max.into())
}

/// How long a change needs in a window, and how that was found: the slowest recent runs of its
/// operations once every kind among them was measured, the estimate otherwise.
pub fn window_duration(change: &ResourceChange, durations: &Durations) -> (Duration, String) {
    match durations.of_change(change) {
        Some(measured) => (
            Duration::from_millis(measured.worst_ms),
            format!(
                "it took up to {} in the last {}",
                seconds(measured.worst_ms),
                crate::render::counted(measured.runs, "run")
            ),
        ),
        None => (
            estimated_duration(change),
            format!("it may take {}", change.downtime()),
        ),
    }
}

impl WindowCheck<'_> {
    /// `None` when apply may perform `change` now: a no-op, or one within the class allowed
    /// now that (when it needs the open window) ends before the window closes — a forbidden
    /// change named with `--replace` or `--allow-delete` only inside a window it fits in.
    /// Otherwise why not, and when.
    pub fn check(&self, change: &ResourceChange) -> Option<WindowHold> {
        if change.action == Action::NoOp {
            return None;
        }
        let (policy, now) = (self.policy, self.now);
        let impact = change.impact();
        if impact == Impact::Forbidden && change.requested {
            return self.check_named(change);
        }
        let allowed = policy.allowed_at(now);
        if impact > policy.inside_window() {
            return Some(WindowHold {
                why: format!(
                    "{impact} is above what any window allows ({})",
                    policy.inside_window()
                ),
                opens: None,
            });
        }
        let why = if impact > allowed {
            format!("{impact} is above what apply may do now ({allowed})")
        } else if impact > policy.outside_window() {
            let (needs, how_long) = window_duration(change, self.durations);
            if policy.fits(now, needs) {
                return None;
            }
            format!("{how_long} and would outlast the open window")
        } else {
            return None;
        };
        Some(WindowHold {
            why,
            opens: policy.next_opening(now).map(|at| Opening {
                at,
                described: policy.describe_next(now),
            }),
        })
    }
}

impl WindowCheck<'_> {
    /// A forbidden change named on the command line: naming it lifts *forbidden*, not the
    /// window. It is the most disruptive change there is, so it waits for an open window
    /// (whatever class that window allows) and must fit in it; without a `[maintenance]`
    /// table it may run at once.
    fn check_named(&self, change: &ResourceChange) -> Option<WindowHold> {
        let (policy, now) = (self.policy, self.now);
        let (flag, what) = match change.action {
            Action::Delete => ("--allow-delete", "a removal"),
            _ => ("--replace", "a replacement"),
        };
        let why = if policy.open_window(now).is_none() {
            if !policy.has_windows() {
                return None;
            }
            format!("{what} is done only inside a maintenance window")
        } else {
            let (needs, how_long) = window_duration(change, self.durations);
            if policy.fits(now, needs) {
                return None;
            }
            format!("{how_long} and would outlast the open window")
        };
        Some(WindowHold {
            why: format!("forbidden, named with {flag}: {why}"),
            opens: policy.next_opening(now).map(|at| Opening {
                at,
                described: policy.describe_next(now),
            }),
        })
    }
}

#[cfg(test)]
#[path = "window_check_tests.rs"]
mod tests;
