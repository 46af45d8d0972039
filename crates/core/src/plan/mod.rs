//! The plan: what apply will do, resource by resource, with each change's impact class,
//! reason and downtime. Pure data; built by the providers' diff, rendered by `render`,
//! carried out by `apply`.

pub mod durations;
mod effect;
pub mod file;
mod operation;
mod outside;
mod record;
pub mod verification;

pub use verification::Verification;

pub use effect::{unknown, unknown_reason, Effect};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use operation::Operation;
pub use outside::{Drifted, DriftedAttribute, DriftedStatus, Ignored};
pub use record::Record;

use crate::model::{Address, Downtime, Impact};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Create,
    Update,
    Replace,
    Delete,
    NoOp,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Replace => "replace",
            Action::Delete => "delete",
            Action::NoOp => "no-op",
        }
    }
}

/// One cause of a change: the attribute that differs and what changing it does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributeChange {
    /// Config-shaped path, e.g. `ports.http.algorithm`; empty for the whole resource.
    pub path: String,
    pub before: Value,
    pub after: Value,
    pub impact: Impact,
    pub reason: String,
    pub downtime: Downtime,
    /// Changes in the same group happen in one disruption (e.g. two fields of one pool that is
    /// recreated once); their downtimes overlap instead of adding up.
    pub group: String,
    /// What the change does to objects the user does not write, in controller mode: the
    /// controller's predicted changes to the cloud objects. The class above is never lower than
    /// any of theirs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<Effect>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceChange {
    pub address: Address,
    pub provider: String,
    pub action: Action,
    pub attributes: Vec<AttributeChange>,
    /// The cloud operations, in apply order.
    pub operations: Vec<Operation>,
    /// The desired attributes to record in the state once applied (`None` when deleted).
    pub record: Option<Record>,
    /// The user asked for this destructive change by name (`--replace`, `--allow-delete`).
    pub requested: bool,
    /// The address the state knew the resource by, when a `[[moved]]` entry of the config
    /// renamed it for this plan: apply records the rename, whatever its action (a pure rename
    /// is a no-op). Not written when `None`, so plans without moves read as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<Address>,
    /// Where the resource is, as its provider knows it (its zone, the cluster it serves):
    /// what `[rollout] max-disrupted-per` groups by. Core names no cloud; a provider that
    /// does not say leaves it `None`, and it is not written then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
}

/// Where a resource is, for grouping a rollout by cluster or zone.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Placement {
    /// The cluster it serves or belongs to, e.g. `cluster.lab`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The cloud's zone, e.g. `lpg1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

impl ResourceChange {
    pub fn no_op(address: Address, provider: &str, record: Option<Record>) -> Self {
        ResourceChange {
            address,
            provider: provider.to_string(),
            action: Action::NoOp,
            attributes: vec![],
            operations: vec![],
            record,
            requested: false,
            moved_from: None,
            placement: None,
        }
    }

    /// The highest class among the resource's changes.
    pub fn impact(&self) -> Impact {
        self.attributes
            .iter()
            .map(|a| a.impact)
            .max()
            .unwrap_or_default()
    }

    /// Downtime of the resource: changes of one group overlap, groups run one after another.
    pub fn downtime(&self) -> Downtime {
        self.downtime_steps()
            .into_iter()
            .fold(Downtime::ZERO, |total, (_, d)| total.then(d))
    }

    /// Each group of changes with the downtime its changes share, in plan order: the steps
    /// whose sum is [`ResourceChange::downtime`].
    pub fn downtime_steps(&self) -> Vec<(&str, Downtime)> {
        let mut groups: Vec<(&str, Downtime)> = Vec::new();
        for attribute in &self.attributes {
            match groups.iter_mut().find(|(g, _)| *g == attribute.group) {
                Some((_, d)) => *d = d.alongside(attribute.downtime),
                None => groups.push((&attribute.group, attribute.downtime)),
            }
        }
        groups
    }

    /// A forbidden change that the user did not ask for by name: apply must refuse it.
    pub fn is_refused(&self) -> bool {
        self.impact() == Impact::Forbidden && !self.requested
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Plan {
    /// Sorted by address; resources without changes are included as no-ops.
    pub changes: Vec<ResourceChange>,
    /// What `ignore-changes` left out of each change that had some, by address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<Ignored>,
    /// `--refresh-only`: what changed outside skyplan, sorted by address (every change is
    /// then a no-op).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<Drifted>,
}

impl Plan {
    pub fn impact(&self) -> Impact {
        self.changes
            .iter()
            .map(ResourceChange::impact)
            .max()
            .unwrap_or_default()
    }

    /// Load balancers change in parallel, so the plan's downtime is the worst resource's.
    pub fn downtime(&self) -> Downtime {
        self.changes
            .iter()
            .map(ResourceChange::downtime)
            .fold(Downtime::ZERO, Downtime::alongside)
    }

    /// Whether apply has anything to do: a change, or a move to record in the state.
    pub fn has_changes(&self) -> bool {
        (self.changes.iter()).any(|c| c.action != Action::NoOp || c.moved_from.is_some())
    }

    /// The resources a `[[moved]]` entry renamed, whatever else changes.
    pub fn moves(&self) -> impl Iterator<Item = &ResourceChange> {
        self.changes.iter().filter(|c| c.moved_from.is_some())
    }

    pub fn count(&self, action: Action) -> usize {
        self.changes.iter().filter(|c| c.action == action).count()
    }

    pub fn refused(&self) -> impl Iterator<Item = &ResourceChange> {
        self.changes.iter().filter(|c| c.is_refused())
    }

    /// What `ignore-changes` left out of the change of `address`.
    pub fn ignored_of(&self, address: &Address) -> &[AttributeChange] {
        (self.ignored.iter())
            .find(|i| &i.address == address)
            .map_or(&[], |i| i.attributes.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;

    fn attribute(group: &str, impact: Impact, downtime: Downtime) -> AttributeChange {
        AttributeChange {
            path: "x".into(),
            before: Value::Null,
            after: Value::Null,
            impact,
            reason: String::new(),
            downtime,
            group: group.into(),
            effects: Vec::new(),
        }
    }

    #[test]
    fn resource_class_is_the_highest_and_groups_add_up() {
        let mut change = ResourceChange::no_op(
            Address::new(ResourceKind::LoadBalancer, "a"),
            "cloudscale",
            None,
        );
        change.action = Action::Update;
        change.attributes = vec![
            attribute("pool tcp", Impact::PoolRecreate, Downtime::new(60, 120)),
            attribute("pool tcp", Impact::PoolRecreate, Downtime::new(60, 120)),
            attribute("listener", Impact::Minimal, Downtime::new(0, 15)),
        ];
        assert_eq!(change.impact(), Impact::PoolRecreate);
        assert_eq!(change.downtime(), Downtime::new(60, 135));
        assert!(!change.is_refused());
    }
}
