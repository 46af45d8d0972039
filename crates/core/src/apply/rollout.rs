//! The rollout (`[rollout]`): disruptive changes — class `minimal` and above — cut into waves
//! of at most `max-disrupted` resources, in total or per cluster or zone. Pure: the plan shows
//! these waves, and apply runs exactly them, one after another with `pause` between.
//!
//! Waves follow apply's dependency order (`waves.rs`): each dependency layer's disruptive
//! changes are cut into waves of their own, so a change is never in an earlier wave than what
//! it depends on. Changes of class `none` are in no wave (only `--parallelism` limits them).
//!
//! With `max-disrupted-per`, the limit is per group, the group read from the change's
//! `placement` as its provider filled it. A change without that key (a provider that does not
//! say, a load balancer bound to no cluster) is in the one group `unplaced`: resources whose
//! place is unknown are limited together rather than not at all.
//!
//! Each wave has an estimate — its changes run side by side, so the slowest one's: measured
//! durations once known, else the plan's downtime estimate, as the window decisions use them —
//! and whether it fits the maintenance window at the time it would start (now, plus the waves
//! before it and their pauses), by the one window check apply uses.

use std::collections::BTreeMap;
use std::time::Duration;

use super::window_check::WindowCheck;
use crate::config::{Rollout, RolloutPer};
use crate::model::{Address, Downtime, Impact};
use crate::plan::durations::Durations;
use crate::plan::{Action, ResourceChange};

/// The group of a change without the placement `max-disrupted-per` asks for.
pub const UNPLACED: &str = "unplaced";

/// One wave: the disruptive changes that may be in flight together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wave {
    pub addresses: Vec<Address>,
    /// In seconds: the slowest change's (they run side by side).
    pub estimate: Downtime,
    /// Whether it ends within the maintenance policy when it starts after the waves before it.
    pub fits_window: bool,
}

/// The rollout as the plan shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutPlan {
    pub max_disrupted: Option<usize>,
    pub per: Option<RolloutPer>,
    /// How long each disruptive change may wait to be reported healthy (`None`: no gate).
    pub health_timeout: Option<Duration>,
    pub waves: Vec<Wave>,
}

impl RolloutPlan {
    /// The first wave that does not fit the window (0-based), if any.
    pub fn first_unfit(&self) -> Option<usize> {
        self.waves.iter().position(|w| !w.fits_window)
    }
}

/// Whether a change counts against `max-disrupted`: class `minimal` or above.
pub fn is_disruptive(change: &ResourceChange) -> bool {
    change.action != Action::NoOp && change.impact() >= Impact::Minimal
}

/// The group a change's limit counts in (`None`: the one total).
fn group(change: &ResourceChange, per: Option<RolloutPer>) -> Option<&str> {
    let placement = change.placement.as_ref();
    let key = match per? {
        RolloutPer::Cluster => placement.and_then(|p| p.cluster.as_deref()),
        RolloutPer::Zone => placement.and_then(|p| p.zone.as_deref()),
    };
    Some(key.unwrap_or(UNPLACED))
}

/// One dependency layer's disruptive changes cut into waves: each wave takes, in order, every
/// change whose group has room left (at most `max_disrupted` per group); the rest wait for
/// the next. Without a limit the layer is one wave.
pub fn cut_layer<'a>(
    layer: &[&'a ResourceChange],
    rollout: &Rollout,
) -> Vec<Vec<&'a ResourceChange>> {
    let mut left: Vec<&'a ResourceChange> =
        layer.iter().copied().filter(|c| is_disruptive(c)).collect();
    let Some(limit) = rollout.max_disrupted else {
        return match left.is_empty() {
            true => vec![],
            false => vec![left],
        };
    };
    let limit = limit.max(1);
    let mut waves = Vec::new();
    while !left.is_empty() {
        let mut counts: BTreeMap<Option<&str>, usize> = BTreeMap::new();
        let (wave, rest): (Vec<_>, Vec<_>) = left.into_iter().partition(|change| {
            let count = counts.entry(group(change, rollout.per)).or_default();
            *count += 1;
            *count <= limit
        });
        waves.push(wave);
        left = rest;
    }
    waves
}

/// Every wave of `work` (the changes apply would run), in order: by dependency layer, each
/// layer's disruptive changes cut by [`cut_layer`].
pub fn cut<'a>(
    work: &[&'a ResourceChange],
    rollout: &Rollout,
    depends_on: impl Fn(&Address) -> Vec<Address>,
) -> Vec<Vec<&'a ResourceChange>> {
    super::waves::waves(work, depends_on)
        .iter()
        .flat_map(|layer| cut_layer(layer, rollout))
        .collect()
}

/// How long a wave takes, in seconds: the slowest change's, by its measured durations once
/// known (typical and worst), else its downtime estimate.
pub fn estimate(wave: &[&ResourceChange], durations: &Durations) -> Downtime {
    let each = wave.iter().map(|change| match durations.of_change(change) {
        Some(measured) => Downtime::new(
            seconds_up(measured.typical_ms),
            seconds_up(measured.worst_ms),
        ),
        None => change.downtime(),
    });
    each.fold(Downtime::ZERO, |a, b| {
        Downtime::new(a.min.max(b.min), a.max.max(b.max))
    })
}

fn seconds_up(ms: u64) -> u32 {
    u32::try_from(ms.div_ceil(1000)).unwrap_or(u32::MAX)
}

/// The rollout of `plan`'s runnable changes (what apply would run: not held back, not
/// no-ops), each wave with its estimate and whether it fits the window at the time it would
/// start: `window.now`, plus the worst case of every wave before it and a pause after each.
pub fn plan_rollout(
    runnable: &[ResourceChange],
    rollout: &Rollout,
    window: &WindowCheck,
    depends_on: impl Fn(&Address) -> Vec<Address>,
) -> RolloutPlan {
    let work: Vec<&ResourceChange> = (runnable.iter())
        .filter(|c| c.action != Action::NoOp)
        .collect();
    let mut starts = window.now;
    let mut waves = Vec::new();
    for wave in cut(&work, rollout, depends_on) {
        let estimate = estimate(&wave, window.durations);
        let at = WindowCheck {
            now: starts,
            ..*window
        };
        let fits_window = wave.iter().all(|change| at.check(change).is_none());
        let took = Duration::from_secs(estimate.max.into()) + rollout.pause;
        starts += jiff::SignedDuration::try_from(took).unwrap_or_default();
        waves.push(Wave {
            addresses: wave.iter().map(|c| c.address.clone()).collect(),
            estimate,
            fits_window,
        });
    }
    RolloutPlan {
        max_disrupted: rollout.max_disrupted,
        per: rollout.per,
        health_timeout: rollout.health_gate.then_some(rollout.health_timeout),
        waves,
    }
}

#[cfg(test)]
#[path = "rollout_tests.rs"]
mod tests;
