//! How long operations really take: apply records each finished operation's time by provider
//! and operation kind (`cloudscale/create-pool`), the state keeps the last few of each, and
//! the plan shows the measured figure beside its estimate. The maintenance-window fit uses the
//! measured duration of a change once every one of its operations has been measured.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ResourceChange;

/// How many recent runs of each operation kind are kept: a rolling window that follows a cloud
/// getting slower or faster, and a state that never grows with every apply.
pub const SAMPLES_KEPT: usize = 20;

/// The recent durations of each operation kind, in milliseconds, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Durations(BTreeMap<String, Vec<u64>>);

/// One kind's (or one change's) measured figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Measured {
    /// The median of the recent runs, in milliseconds.
    pub typical_ms: u64,
    /// The slowest recent run, in milliseconds: what a window must leave room for.
    pub worst_ms: u64,
    /// How many runs the figure is made of (the fewest of any kind, for a change).
    pub runs: usize,
}

impl Durations {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds one finished run of `kind`, dropping the oldest beyond [`SAMPLES_KEPT`].
    pub fn record(&mut self, kind: &str, took: Duration) {
        let samples = self.0.entry(kind.to_string()).or_default();
        samples.push(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
        let excess = samples.len().saturating_sub(SAMPLES_KEPT);
        samples.drain(..excess);
    }

    /// Every kind measured, with its figure, by kind.
    pub fn kinds(&self) -> impl Iterator<Item = (&str, Measured)> + '_ {
        self.0
            .keys()
            .filter_map(|kind| Some((kind.as_str(), self.of_kind(kind)?)))
    }

    pub fn of_kind(&self, kind: &str) -> Option<Measured> {
        let mut samples = self.0.get(kind)?.clone();
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        Some(Measured {
            typical_ms: samples[samples.len() / 2],
            worst_ms: *samples.last().expect("not empty"),
            runs: samples.len(),
        })
    }

    /// A change's operations one after the other, once every kind among them has been
    /// measured; `None` while one has not (the estimate stands then).
    pub fn of_change(&self, change: &ResourceChange) -> Option<Measured> {
        if change.operations.is_empty() {
            return None;
        }
        let mut total = Measured {
            typical_ms: 0,
            worst_ms: 0,
            runs: usize::MAX,
        };
        for operation in &change.operations {
            let kind = self.of_kind(&operation.kind)?;
            total.typical_ms = total.typical_ms.saturating_add(kind.typical_ms);
            total.worst_ms = total.worst_ms.saturating_add(kind.worst_ms);
            total.runs = total.runs.min(kind.runs);
        }
        Some(total)
    }
}

/// Milliseconds as seconds with one decimal, spelled like the estimates: `12.5 s`.
pub fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Address, ResourceKind};
    use crate::plan::Operation;
    use serde_json::json;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn rename(name: &str) -> Operation {
        Operation::new("cloudscale", &json!({"op": "rename-lb", "name": name}))
    }

    fn delete_pool() -> Operation {
        Operation::new("cloudscale", &json!({"op": "delete-pool", "pool": "tcp"}))
    }

    #[test]
    fn a_kind_names_provider_and_operation_only() {
        assert_eq!(rename("web").kind, "cloudscale/rename-lb");
        assert_eq!(rename("api").kind, "cloudscale/rename-lb");
    }

    #[test]
    fn a_kind_keeps_the_newest_runs_with_their_median_and_worst() {
        let mut durations = Durations::default();
        for n in 1..=(SAMPLES_KEPT as u64 + 5) {
            durations.record("cloudscale/rename-lb", ms(n * 100));
        }
        let measured = durations.of_kind("cloudscale/rename-lb").unwrap();
        assert_eq!(measured.runs, SAMPLES_KEPT);
        assert_eq!(measured.worst_ms, (SAMPLES_KEPT as u64 + 5) * 100);
        assert_eq!(measured.typical_ms, 1600, "the median of runs 6..=25");
        assert_eq!(durations.of_kind("cloudscale/create-lb"), None);
    }

    #[test]
    fn a_change_is_measured_once_every_operation_kind_is() {
        let mut change = ResourceChange::no_op(
            Address::new(ResourceKind::LoadBalancer, "web"),
            "cloudscale",
            None,
        );
        change.operations = vec![rename("web"), delete_pool(), rename("web")];
        let mut durations = Durations::default();
        durations.record("cloudscale/rename-lb", ms(100));
        durations.record("cloudscale/rename-lb", ms(300));
        assert_eq!(durations.of_change(&change), None, "delete-pool unmeasured");
        durations.record("cloudscale/delete-pool", ms(1000));
        let measured = durations.of_change(&change).unwrap();
        assert_eq!(measured.worst_ms, 300 + 1000 + 300);
        assert_eq!(measured.typical_ms, 300 + 1000 + 300);
        assert_eq!(measured.runs, 1);
    }

    #[test]
    fn the_state_form_is_a_map_of_samples() {
        let mut durations = Durations::default();
        durations.record("cloudscale/rename-lb", ms(250));
        let json = serde_json::to_value(&durations).unwrap();
        assert_eq!(json, serde_json::json!({"cloudscale/rename-lb": [250]}));
        assert_eq!(
            serde_json::from_value::<Durations>(json).unwrap(),
            durations
        );
    }
}
