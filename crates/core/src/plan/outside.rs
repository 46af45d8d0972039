//! What a plan says beside its changes: the attribute changes `ignore-changes` left out, and
//! for `--refresh-only` what changed outside skyplan with the state entry that accepts it.

use serde::{Deserialize, Serialize};

use super::AttributeChange;
use crate::model::Address;
use crate::state::ResourceState;

/// The attribute changes `ignore-changes` left out of one resource's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ignored {
    pub address: Address,
    /// As the provider planned them: `before` is the cloud's value, `after` the config's.
    pub attributes: Vec<AttributeChange>,
}

/// One resource as `--refresh-only` found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drifted {
    pub address: Address,
    pub provider: String,
    pub status: DriftedStatus,
    /// Each difference, `before` the state's value and `after` the cloud's.
    pub attributes: Vec<DriftedAttribute>,
    /// The state entry that records the cloud's object as it is (`None`: left as it is, and
    /// `unaccepted` says why).
    pub accepted: Option<ResourceState>,
    /// Why a drifted resource cannot be recorded as the cloud has it.
    pub unaccepted: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftedStatus {
    Drifted,
    /// In the state, gone from the cloud: left in the state for a plan to create again.
    Missing,
    /// In the config, never applied: nothing in the state to bring up to date.
    NotApplied,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftedAttribute {
    pub path: String,
    /// The state's value.
    pub before: serde_json::Value,
    /// The cloud's value.
    pub after: serde_json::Value,
    /// The class of restoring the state's value, and why (for the text, as `drift` shows it).
    #[serde(skip)]
    pub impact: crate::model::Impact,
    #[serde(skip)]
    pub reason: String,
}
