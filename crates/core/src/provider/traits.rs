//! The one interface every provider implements, so refresh, plan and apply stay provider-blind.

use std::collections::BTreeSet;

use futures::future::BoxFuture;

use super::discover::{Adopting, Discovered, Generated};
use super::{Health, ProviderError, Refreshed};
use crate::config::Resource;
use crate::model::Address;
use crate::plan::{AttributeChange, ResourceChange, Verification};
use crate::state::journal::Journal;
use crate::state::ResourceState;

/// One resource a provider is asked about: in the config, in the state, or both.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub address: &'a Address,
    pub resource: Option<&'a Resource>,
    pub prior: Option<&'a ResourceState>,
}

/// What the user asked for by name on the command line.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub replace: BTreeSet<Address>,
    pub allow_delete: BTreeSet<Address>,
}

/// What the cloud holds of a resource, compared with what skyplan last applied.
#[derive(Debug, Clone, PartialEq)]
pub enum DriftCheck {
    /// Never applied and not in the cloud: nothing to compare.
    NotApplied,
    /// Applied, but gone from the cloud.
    Missing,
    /// Each difference, as the change that would restore it (empty: in sync).
    Compared(Vec<AttributeChange>),
}

/// What `apply` did to one resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The resource's new state entry (`None` once it is deleted or gone).
    pub entry: Option<ResourceState>,
    /// What the cloud showed once the change settled, held to the plan's prediction; `None`
    /// when the provider does not verify or the change left nothing to verify (a deletion).
    pub verification: Option<Verification>,
}

impl Applied {
    /// A change applied with nothing verified.
    pub fn unverified(entry: Option<ResourceState>) -> Applied {
        Applied {
            entry,
            verification: None,
        }
    }
}

pub trait Provider: Send + Sync {
    fn name(&self) -> &'static str;

    /// Reads the live state of the targets, with as few API calls as the cloud allows, and
    /// returns it: the pipeline hands it back to this provider's plan, drift, import,
    /// kubeconfig and apply. The provider keeps none of it, beyond the run's caches it shares
    /// with other providers (a cluster's nodes, a cloud's VMs: each listed once per run).
    fn refresh<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>>;

    /// Desired vs `refreshed` live state for one target. Pure: no IO.
    fn plan(
        &self,
        target: &Target,
        refreshed: &Refreshed,
        options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError>;

    /// [`Provider::plan`] with what the target's `ignore-changes` covers left as the cloud has
    /// it, for a kind whose ignored values no config can write (a node policy: a label's value
    /// differs from node to node). `None` (the default): core writes the cloud's values into
    /// the resource's table and plans that. Either way core checks the result. Pure.
    fn plan_keeping_ignored(
        &self,
        _target: &Target,
        _refreshed: &Refreshed,
        _options: &PlanOptions,
    ) -> Option<Result<ResourceChange, ProviderError>> {
        None
    }

    /// What changed in the cloud behind skyplan's back, from the `refreshed` live state. Pure.
    fn drift(&self, target: &Target, refreshed: &Refreshed) -> Result<DriftCheck, ProviderError>;

    /// The state entry for an existing cloud object taken under management (`skyplan import`):
    /// `target.prior` names the object by its ID; the config's spec becomes the applied one.
    fn import(
        &self,
        target: &Target,
        refreshed: &Refreshed,
    ) -> Result<ResourceState, ProviderError>;

    /// [`Provider::refresh`] plus what [`Provider::discover`] needs: every object of the
    /// provider's accounts and clusters, not only those of the targets (the same collection
    /// reads; a provider whose refresh already reads whole collections adds only what it
    /// skips — a cluster's Services). Targets without a resource whose `prior` names an ID
    /// (`ids` null) are objects to be imported: read as a target of `import` is.
    fn survey<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        self.refresh(targets)
    }

    /// A [`Provider::survey`] from which `generate` and `import` can read any object
    /// `discover` lists without its being a target: what a refresh reads one object at a time
    /// for its targets (a pool's members), read for every object. `None` (the default): the
    /// pipeline surveys again with the objects to adopt among the targets. Worth it where
    /// adopting everything is the common case and the second survey would repeat the first.
    fn survey_deep<'a>(
        &'a self,
        _targets: &'a [Target<'a>],
    ) -> Option<BoxFuture<'a, Result<Refreshed, ProviderError>>> {
        None
    }

    /// The objects in `surveyed` that no target manages, and the Services the targets are
    /// bound to. Pure. A provider that cannot list what it does not manage finds nothing.
    fn discover(
        &self,
        _targets: &[Target],
        _surveyed: &Refreshed,
    ) -> Result<Discovered, ProviderError> {
        Ok(Discovered::default())
    }

    /// The config that adopts the object `target.prior` names (by its ID, `ids` null) as
    /// `target.address`, from a survey that had it among its targets: written so that its plan
    /// after import is empty. `adopting` names the other objects adopted in the same run (a
    /// load balancer's cluster). Pure.
    fn generate(
        &self,
        target: &Target,
        _surveyed: &Refreshed,
        _adopting: &Adopting,
    ) -> Result<Generated, ProviderError> {
        Err(ProviderError::new(
            target.address,
            format!("provider `{}` cannot generate config", self.name()),
        ))
    }

    /// Performs the change's operations in order, recording each in the journal before and
    /// after its cloud call, and returns what it left and what the cloud showed once settled.
    /// `refreshed` is the refresh the change was planned from (what the cloud held before).
    fn apply<'a>(
        &'a self,
        change: &'a ResourceChange,
        prior: Option<&'a ResourceState>,
        refreshed: &'a Refreshed,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<Applied, ProviderError>>;

    /// What the cloud reports of the resource `change` was applied to, read once, now:
    /// `entry` is the state entry apply left (its ids name the objects). The rollout's health
    /// gate calls it after each disruptive change until it is healthy or time runs out, so a
    /// read is a few requests at most. What it holds as healthy is the provider's table in
    /// impact.md's terms: a load balancer `running` with its members up, rules `Active` with
    /// their VMs `Running`, an IP block `assigned` with the Service's ingress set, nodes
    /// `Ready`. A resource deleted by the change (`entry` `None`) is healthy.
    fn health<'a>(
        &'a self,
        change: &'a ResourceChange,
        entry: Option<&'a ResourceState>,
    ) -> BoxFuture<'a, Result<Health, ProviderError>>;

    /// A managed cluster's kubeconfig, found through `refreshed`, for `skyplan kubeconfig`.
    /// Never printed: the caller writes it to the file the user named.
    fn kubeconfig<'a>(
        &'a self,
        target: &'a Target<'a>,
        _refreshed: &'a Refreshed,
    ) -> BoxFuture<'a, Result<crate::model::Secret, ProviderError>> {
        let message = format!("provider `{}` has no kubeconfig to give", self.name());
        Box::pin(async move { Err(ProviderError::new(target.address, message)) })
    }

    /// Told what an interrupted apply's journal recorded, before refresh: a provider whose cloud
    /// cannot mark an object as skyplan's in the call that creates it finds such objects
    /// through this.
    fn recover(&self, _interrupted: &crate::state::journal::Interrupted) {}

    /// API requests made so far, for figures and tests.
    fn request_count(&self) -> u64;

    /// Releases what the provider holds (an embedded simulator flushes its world).
    fn close(&self) -> BoxFuture<'_, Result<(), ProviderError>>;
}
