//! Exit codes (contract.md), in one place.

pub const SUCCESS: u8 = 0;
/// An error, or apply refused or interrupted (Ctrl-C: what was not started is listed).
pub const ERROR: u8 = 1;
/// `plan --detailed-exitcode`: the plan has changes.
pub const CHANGES: u8 = 2;
/// `plan --fail-on CLASS`: a change is at or above CLASS.
pub const FAIL_ON: u8 = 3;
/// `apply`: some changes were applied, others held back (refused, excluded, or outside the
/// maintenance window); the report lists them.
pub const HELD_BACK: u8 = 4;
/// `apply` with a rollout: a change failed its health gate or did more than the plan said, and
/// the rollout stopped; the report names it, what was unhealthy and what was not started.
pub const STOPPED_BY_GATE: u8 = 5;

/// `skyplan plan`'s exit status.
pub const PLAN_STATUS: &str = "Exit status:
  0  success (with --detailed-exitcode: no changes)
  1  an error
  2  with --detailed-exitcode: the plan has changes
  3  with --fail-on CLASS: a change at or above CLASS";

/// `skyplan apply`'s exit status.
pub const APPLY_STATUS: &str = "Exit status:
  0  success: everything planned was applied
  1  an error, apply refused, nothing applied (every change held back), or interrupted
  4  applied, but some changes were held back (each listed with why)
  5  a rollout stopped by a health gate (or by a change that did more than planned)";

/// `skyplan drift`'s exit status.
pub const DRIFT_STATUS: &str = "Exit status:
  0  no drift
  1  an error
  2  drift found";

/// Every other command's exit status.
pub const OTHER_STATUS: &str = "Exit status:
  0  success
  1  an error";
