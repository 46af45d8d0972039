//! The JSON plan of contract.md (`plan --json`, `show --json`).

use serde::Serialize;
use serde_json::Value;

use crate::model::{Downtime, Impact};
use crate::plan::durations::{Durations, Measured};
use crate::plan::{Action, Effect, Plan, ResourceChange};

pub const FORMAT_VERSION: &str = "1.0";

#[derive(Debug, Clone, Serialize)]
pub struct PlanView {
    pub format_version: &'static str,
    pub skyplan_version: &'static str,
    pub impact: Impact,
    pub summary: Summary,
    pub changes: Vec<ChangeView>,
    pub drift: Vec<Value>,
    /// The waves apply rolls the disruptive changes out in, with `[rollout]` (or a rollout
    /// flag); not written otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutView>,
}

/// `rollout`: the limit and the waves, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RolloutView {
    pub max_disrupted: Option<usize>,
    /// `cluster` or `zone` when the limit is per group; `null` when in total.
    pub per: Option<crate::config::RolloutPer>,
    /// How long each disruptive change may wait for the cloud to report it healthy, in
    /// seconds; `null` when the health gate is off.
    pub health_timeout_s: Option<u64>,
    pub waves: Vec<WaveView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaveView {
    pub addresses: Vec<String>,
    pub estimated_s: Downtime,
    pub fits_window: bool,
}

impl From<&crate::apply::rollout::RolloutPlan> for RolloutView {
    fn from(plan: &crate::apply::rollout::RolloutPlan) -> Self {
        RolloutView {
            max_disrupted: plan.max_disrupted,
            per: plan.per,
            health_timeout_s: plan.health_timeout.map(|t| t.as_secs()),
            waves: (plan.waves.iter())
                .map(|wave| WaveView {
                    addresses: wave.addresses.iter().map(ToString::to_string).collect(),
                    estimated_s: wave.estimate,
                    fits_window: wave.fits_window,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub create: usize,
    pub update: usize,
    pub replace: usize,
    pub delete: usize,
    pub no_op: usize,
    /// Resources a `[[moved]]` entry renames in the state, whatever their action; not written
    /// when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub moved: usize,
    pub by_impact: ByImpact,
    pub estimated_downtime_s: Downtime,
}

/// Changed resources (no-ops excluded) counted by their class.
#[derive(Debug, Clone, Serialize)]
pub struct ByImpact {
    pub none: usize,
    pub minimal: usize,
    #[serde(rename = "pool-recreate")]
    pub pool_recreate: usize,
    pub forbidden: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangeView {
    pub address: String,
    /// The address the state knew it by, when a `[[moved]]` entry renames it (apply records
    /// the rename); not written otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<String>,
    pub provider: String,
    pub action: Action,
    pub impact: Impact,
    pub estimated_downtime_s: Downtime,
    /// When the estimate adds up disruptions that happen one after another (a pool recreated,
    /// then a floating IP moved): each with its own downtime. Empty when there is one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub downtime_adds_up: Vec<DowntimeStep>,
    /// A forbidden change nobody asked for by name: apply holds it back (`held_back`).
    pub refused: bool,
    pub attributes: Vec<AttributeView>,
    pub operations: Vec<String>,
    /// How long its operations took in recent applies, once each kind has been measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_duration: Option<Measured>,
    /// Why apply holds it back (forbidden, excluded, outside the window, or after a change
    /// held back); `None` when apply does it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_back: Option<String>,
    /// What `ignore-changes` left out of it: the cloud's value stays.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<IgnoredView>,
    /// Whether apply may do it at the plan's clock under the maintenance policy (`None` for a
    /// no-op, or where no policy was consulted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowView>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One disruption of a resource's change: what is disrupted and for how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DowntimeStep {
    pub what: String,
    pub estimated_downtime_s: Downtime,
}

/// A change against the maintenance policy: may apply do it now, and if not, why and when the
/// next window that allows it opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WindowView {
    /// Apply may do it now.
    pub now: bool,
    /// Why it may not (its class above what the policy allows now, or it would outlast the
    /// open window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When the next window that allows it opens (RFC 3339), if it may not now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_window: Option<String>,
}

/// An attribute change `ignore-changes` left out: `before` the cloud's value, `after` the
/// config's.
#[derive(Debug, Clone, Serialize)]
pub struct IgnoredView {
    pub path: String,
    pub before: Value,
    pub after: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct AttributeView {
    pub path: String,
    pub before: Value,
    pub after: Value,
    pub impact: Impact,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_downtime_s: Option<Downtime>,
    /// In controller mode: what the controller is predicted to do to the cloud objects
    /// because of this attribute (its class is the highest of theirs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<Effect>,
}

impl PlanView {
    pub fn new(plan: &Plan) -> PlanView {
        let changed = || plan.changes.iter().filter(|c| c.action != Action::NoOp);
        let count = |impact| changed().filter(|c| c.impact() == impact).count();
        PlanView {
            format_version: FORMAT_VERSION,
            skyplan_version: env!("CARGO_PKG_VERSION"),
            impact: plan.impact(),
            summary: Summary {
                create: plan.count(Action::Create),
                update: plan.count(Action::Update),
                replace: plan.count(Action::Replace),
                delete: plan.count(Action::Delete),
                no_op: plan.count(Action::NoOp),
                moved: plan.moves().count(),
                by_impact: ByImpact {
                    none: count(Impact::None),
                    minimal: count(Impact::Minimal),
                    pool_recreate: count(Impact::PoolRecreate),
                    forbidden: count(Impact::Forbidden),
                },
                estimated_downtime_s: plan.downtime(),
            },
            changes: (plan.changes.iter())
                .map(|change| {
                    ChangeView::new(change).with_ignored(plan.ignored_of(&change.address))
                })
                .collect(),
            drift: plan.drift.iter().map(drift_entry).collect(),
            rollout: None,
        }
    }

    /// The view with the rollout's waves (see [`crate::apply::rollout`]).
    pub fn with_rollout(mut self, rollout: &crate::apply::rollout::RolloutPlan) -> PlanView {
        self.rollout = Some(rollout.into());
        self
    }

    /// The view with each change's measured duration beside its estimate, where recent
    /// applies measured every kind of operation it performs.
    pub fn measured(plan: &Plan, durations: &Durations) -> PlanView {
        let mut view = PlanView::new(plan);
        for (change, shown) in plan.changes.iter().zip(&mut view.changes) {
            if change.action != Action::NoOp {
                shown.measured_duration = durations.of_change(change);
            }
        }
        view
    }
}

/// A `--refresh-only` plan's drift entry: the differences, the state's value before and the
/// cloud's after, and whether apply can record it (never the state entry itself).
fn drift_entry(drifted: &crate::plan::Drifted) -> Value {
    let attributes: Vec<Value> = (drifted.attributes.iter())
        .map(|a| serde_json::json!({ "path": a.path, "before": a.before, "after": a.after }))
        .collect();
    let mut entry = serde_json::json!({
        "address": drifted.address,
        "provider": drifted.provider,
        "status": drifted.status,
        "attributes": attributes,
        "accepted": drifted.accepted.is_some(),
    });
    if let Some(why) = &drifted.unaccepted {
        entry["unaccepted"] = Value::from(why.as_str());
    }
    entry
}

impl ChangeView {
    fn with_ignored(mut self, ignored: &[crate::plan::AttributeChange]) -> ChangeView {
        self.ignored = (ignored.iter())
            .map(|a| IgnoredView {
                path: a.path.clone(),
                before: a.before.clone(),
                after: a.after.clone(),
            })
            .collect();
        self
    }

    fn new(change: &ResourceChange) -> ChangeView {
        ChangeView {
            address: change.address.to_string(),
            moved_from: change.moved_from.as_ref().map(ToString::to_string),
            provider: change.provider.clone(),
            action: change.action,
            impact: change.impact(),
            estimated_downtime_s: change.downtime(),
            downtime_adds_up: downtime_adds_up(change),
            refused: change.is_refused(),
            attributes: change
                .attributes
                .iter()
                .map(|a| AttributeView {
                    path: a.path.clone(),
                    before: a.before.clone(),
                    after: a.after.clone(),
                    impact: a.impact,
                    reason: a.reason.clone(),
                    estimated_downtime_s: (a.impact >= Impact::Minimal).then_some(a.downtime),
                    effects: a.effects.clone(),
                })
                .collect(),
            operations: change.operations.iter().map(|o| o.to_string()).collect(),
            measured_duration: None,
            held_back: super::held::refused(change),
            ignored: vec![],
            window: None,
        }
    }
}

/// The disruptions of a change, when more than one has downtime: they add up.
fn downtime_adds_up(change: &ResourceChange) -> Vec<DowntimeStep> {
    let steps: Vec<DowntimeStep> = change
        .downtime_steps()
        .into_iter()
        .filter(|(_, downtime)| downtime.max > 0)
        .map(|(what, downtime)| DowntimeStep {
            what: what.to_string(),
            estimated_downtime_s: downtime,
        })
        .collect();
    match steps.len() {
        0 | 1 => vec![],
        _ => steps,
    }
}
