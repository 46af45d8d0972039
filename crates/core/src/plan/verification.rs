//! What apply found when it held the cloud to the plan: after a change settles, the provider
//! compares what the cloud shows with what the plan predicted — which objects kept their IDs,
//! which were recreated, whether the load balancer runs — and says "as predicted" or the
//! difference. A cloud that did more than the plan's class is an under-prediction: apply
//! exits non-zero once it has finished, and the state keeps a bounded record of it.

use serde::{Deserialize, Serialize};

use crate::model::Impact;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    pub address: String,
    /// The class the plan showed for the change.
    pub predicted: Impact,
    /// The class of what the cloud did: the predicted one, or higher when a difference is
    /// (by the impact table's row for it).
    pub observed: Impact,
    /// What the cloud did that the plan did not say, e.g. "pool tcp/http was recreated".
    pub differences: Vec<String>,
}

impl Verification {
    pub fn as_predicted(&self) -> bool {
        self.differences.is_empty()
    }

    /// The cloud did something of a higher class than the plan showed.
    pub fn under_predicted(&self) -> bool {
        self.observed > self.predicted
    }

    /// "as predicted", or "predicted minimal, but pool tcp/http was recreated".
    pub fn summary(&self) -> String {
        if self.as_predicted() {
            return "as predicted".to_string();
        }
        format!(
            "predicted {}, but {}",
            self.predicted,
            self.differences.join("; ")
        )
    }
}

/// A verification that found a difference, as the state keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedMismatch {
    /// When apply found it (RFC 3339).
    pub at: String,
    #[serde(flatten)]
    pub verification: Verification,
}

/// How many mismatches the state keeps, the newest last: enough to see a pattern, never a
/// state that grows with every apply.
pub const MISMATCHES_KEPT: usize = 50;

/// Adds `mismatch`, dropping the oldest beyond [`MISMATCHES_KEPT`].
pub fn record_mismatch(kept: &mut Vec<RecordedMismatch>, mismatch: RecordedMismatch) {
    kept.push(mismatch);
    let excess = kept.len().saturating_sub(MISMATCHES_KEPT);
    kept.drain(..excess);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verification(differences: &[&str], observed: Impact) -> Verification {
        Verification {
            address: "load-balancer.web".into(),
            predicted: Impact::Minimal,
            observed,
            differences: differences.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn a_summary_says_as_predicted_or_the_difference() {
        let same = verification(&[], Impact::Minimal);
        assert_eq!(same.summary(), "as predicted");
        assert!(same.as_predicted() && !same.under_predicted());
        let worse = verification(&["pool tcp/http was recreated"], Impact::PoolRecreate);
        assert_eq!(
            worse.summary(),
            "predicted minimal, but pool tcp/http was recreated"
        );
        assert!(worse.under_predicted());
        let within = verification(&["the listener of pool tcp was recreated"], Impact::Minimal);
        assert!(!within.as_predicted() && !within.under_predicted());
    }

    #[test]
    fn the_record_keeps_the_newest() {
        let mut kept = Vec::new();
        for n in 0..MISMATCHES_KEPT + 3 {
            let mismatch = RecordedMismatch {
                at: n.to_string(),
                verification: verification(&["x"], Impact::PoolRecreate),
            };
            record_mismatch(&mut kept, mismatch);
        }
        assert_eq!(kept.len(), MISMATCHES_KEPT);
        assert_eq!(kept[0].at, "3");
        assert_eq!(kept.last().unwrap().at, (MISMATCHES_KEPT + 2).to_string());
    }

    #[test]
    fn a_recorded_mismatch_is_flat_json() {
        let mismatch = RecordedMismatch {
            at: "2026-11-23T19:00:00Z".into(),
            verification: verification(&["pool tcp was recreated"], Impact::PoolRecreate),
        };
        let json = serde_json::to_value(&mismatch).unwrap();
        assert_eq!(json["address"], "load-balancer.web");
        assert_eq!(json["predicted"], "minimal");
        assert_eq!(json["observed"], "pool-recreate");
        assert_eq!(
            serde_json::from_value::<RecordedMismatch>(json).unwrap(),
            mismatch
        );
    }
}
