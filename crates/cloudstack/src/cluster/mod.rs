//! `[cluster.NAME]` with provider "cloudstack": a CKS cluster.
//!
//! INTERFACE (used by `provider.rs`): [`ClusterOp`], [`plan`], [`drift`], [`apply`],
//! [`kubeconfig`].
//!
//! - `desired.rs` — the config's names → catalog objects (an unknown one is an error listing
//!   what exists);
//! - `checks.rs` — plan-time constraints (limits, versions, offerings);
//! - `impact.rs` — **the CKS impact table**, one row per kind of change;
//! - `diff.rs` — desired vs live → the changes and the operations, in an order CloudStack
//!   accepts; `ops.rs` — [`ClusterOp`], one API call each;
//! - `execute.rs` — runs the operations, journalled, adopting a create whose answer was lost.

mod checks;
mod desired;
mod diff;

pub use desired::{node_types, unknown_name_key};
mod execute;
pub mod impact;
mod ops;
#[cfg(test)]
pub(crate) mod tests;
pub mod verify;

pub use execute::{apply, kubeconfig};
pub use ops::ClusterOp;

use super::api::KubernetesCluster;
use super::live::{Inventory, PlanInput};
use crate::spec::CloudstackClusterSpec;
use diff::{diff, DiffInput};
use skyplan_core::plan::{Action, ResourceChange};
use skyplan_core::provider::{DriftCheck, ProviderError};
use skyplan_core::state::ResourceState;

/// The live cluster of a resource: the one the state names, else the one with its name in the
/// account (CKS names are unique per account), so a create whose answer was lost is adopted
/// instead of duplicated. Destroyed clusters are history, not live.
pub fn find_live<'a>(
    inventory: &'a Inventory,
    prior_id: Option<&str>,
    name: Option<&str>,
) -> Option<&'a KubernetesCluster> {
    let alive = |c: &&KubernetesCluster| c.state != "Destroyed";
    prior_id
        .and_then(|id| inventory.clusters.iter().filter(alive).find(|c| c.id == id))
        .or_else(|| {
            let name = name?;
            inventory
                .clusters
                .iter()
                .filter(alive)
                .find(|c| c.name == name)
        })
}

/// The spec recorded at the last apply; unreadable (an older format) counts as unknown.
fn applied_spec(prior: &ResourceState) -> Option<CloudstackClusterSpec> {
    serde_json::from_value(prior.attributes.clone()).ok()
}

fn compare(
    input: &PlanInput<'_, CloudstackClusterSpec>,
    desired: Option<&CloudstackClusterSpec>,
    prior: Option<&CloudstackClusterSpec>,
    replace: bool,
    allow_delete: bool,
) -> Result<ResourceChange, ProviderError> {
    let name = desired.or(prior).map(|s| s.name.as_str());
    let live = find_live(input.live, input.prior.map(|p| p.id.as_str()), name);
    diff(&DiffInput {
        address: input.address,
        desired,
        prior,
        live,
        inventory: input.live,
        replace,
        allow_delete,
    })
    .map_err(|message| ProviderError::new(input.address, message))
}

/// Desired vs live for one cluster, every constraint of the CKS table checked. Pure.
pub fn plan(input: &PlanInput<'_, CloudstackClusterSpec>) -> Result<ResourceChange, ProviderError> {
    let prior = input.prior.and_then(applied_spec);
    compare(
        input,
        input.desired,
        prior.as_ref(),
        input.replace,
        input.allow_delete,
    )
}

/// Live vs last applied, as the change that would restore it. Pure.
pub fn drift(input: &PlanInput<'_, CloudstackClusterSpec>) -> Result<DriftCheck, ProviderError> {
    // What was last applied is what the cloud should still hold; a cluster found only by its
    // name is held to the config.
    let applied = input.prior.and_then(applied_spec);
    let Some(expected) = applied.as_ref().or(input.desired) else {
        return Ok(DriftCheck::NotApplied);
    };
    let id = input.prior.map(|p| p.id.as_str());
    if find_live(input.live, id, Some(&expected.name)).is_none() {
        return Ok(match input.prior {
            Some(_) => DriftCheck::Missing,
            None => DriftCheck::NotApplied,
        });
    }
    // No prior spec: what cannot be read back (the description) is compared with the cloud.
    let change = compare(input, Some(expected), None, false, false)?;
    debug_assert_ne!(change.action, Action::Create);
    Ok(DriftCheck::Compared(change.attributes))
}
