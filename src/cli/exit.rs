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
