//! The state file's contents: `State` (format version, lineage, serial, each resource's ids
//! and last-applied spec, verification mismatches, measured durations) and `ResourceState`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::Address;

/// The version of the state file format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct State {
    pub format_version: u32,
    /// The skyplan version that last wrote the file.
    pub skyplan_version: String,
    /// A uuid v4 fixed when the state is created, so two unrelated states with the same
    /// serial are never mistaken for one another.
    pub lineage: String,
    /// Incremented on every save.
    pub serial: u64,
    pub resources: BTreeMap<Address, ResourceState>,
    /// The differences apply's verifications found between the plan and the cloud, newest
    /// last, at most `MISMATCHES_KEPT`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<crate::plan::verification::RecordedMismatch>,
    /// How long each kind of operation took in the recent applies (per provider and kind).
    #[serde(
        default,
        skip_serializing_if = "crate::plan::durations::Durations::is_empty"
    )]
    pub durations: crate::plan::durations::Durations,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ResourceState {
    pub provider: String,
    /// The cloud id of the resource's root object.
    pub id: String,
    /// The provider's ids of the resource's sub-objects.
    pub ids: serde_json::Value,
    /// The desired spec as last applied.
    pub attributes: serde_json::Value,
    /// What the resource depended on when it was applied, so that once it is gone from the
    /// config it is still deleted before what it needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<Address>,
}

impl State {
    pub fn new() -> State {
        State {
            format_version: FORMAT_VERSION,
            skyplan_version: env!("CARGO_PKG_VERSION").to_string(),
            lineage: uuid::Uuid::new_v4().to_string(),
            serial: 0,
            resources: BTreeMap::new(),
            mismatches: Vec::new(),
            durations: Default::default(),
        }
    }

    /// The sha256 (hex) of the canonical JSON of the resources: equal for equal resources,
    /// whatever the serial, lineage or the order in which objects' keys were inserted.
    pub fn content_hash(&self) -> String {
        // Canonical because the map is a BTreeMap and serde_json's objects keep keys sorted
        // (its `preserve_order` feature is off; a test below fails if that ever changes).
        let json = serde_json::to_vec(&self.resources).expect("resources serialize to JSON");
        hex::encode(Sha256::digest(json))
    }
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::ResourceKind;

    fn state_with(attributes: serde_json::Value) -> State {
        let mut state = State::new();
        let resource = ResourceState {
            provider: "cloudscale".into(),
            id: "lb-1".into(),
            ids: json!({}),
            attributes,
            depends_on: vec![],
        };
        let address = Address::new(ResourceKind::LoadBalancer, "hello");
        state.resources.insert(address, resource);
        state
    }

    #[test]
    fn a_new_state_is_empty_with_a_fresh_lineage() {
        let (a, b) = (State::new(), State::new());
        assert_eq!((a.serial, a.format_version), (0, FORMAT_VERSION));
        assert!(a.resources.is_empty());
        assert_ne!(a.lineage, b.lineage);
    }

    #[test]
    fn content_hash_depends_on_resources_only() {
        let (mut a, b) = (
            state_with(json!({"zone": "lpg1"})),
            state_with(json!({"zone": "lpg1"})),
        );
        a.serial = 7;
        assert_eq!(a.content_hash(), b.content_hash());
        assert_eq!(a.content_hash().len(), 64);
        assert_ne!(
            a.content_hash(),
            state_with(json!({"zone": "rma1"})).content_hash()
        );
    }

    #[test]
    fn content_hash_ignores_the_order_keys_were_inserted_in() {
        let mut forward = serde_json::Map::new();
        forward.insert("a".into(), json!(1));
        forward.insert("b".into(), json!(2));
        let mut backward = serde_json::Map::new();
        backward.insert("b".into(), json!(2));
        backward.insert("a".into(), json!(1));
        assert_eq!(
            state_with(forward.into()).content_hash(),
            state_with(backward.into()).content_hash()
        );
    }
}
