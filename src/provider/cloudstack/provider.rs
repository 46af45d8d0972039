//! The CloudStack [`Provider`]: connects (the cloud-config INI or the embedded simulator),
//! refreshes one [`Inventory`] for all targets, and hands each resource to its kind's planner
//! and executor.

use std::path::Path;

use futures::future::BoxFuture;
use futures::FutureExt;

use crate::config::CloudstackEndpoint;
use crate::plan::ResourceChange;
use crate::provider::{DriftCheck, PlanOptions, Provider, ProviderError, Target};
use crate::state::journal::Journal;
use crate::state::ResourceState;

use super::PROVIDER;

pub struct CloudstackProvider {}

impl CloudstackProvider {
    pub async fn connect(
        _endpoint: &CloudstackEndpoint,
        _state_dir: &Path,
    ) -> Result<CloudstackProvider, ProviderError> {
        Err(ProviderError::new(PROVIDER, "not built yet"))
    }
}

impl Provider for CloudstackProvider {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn refresh<'a>(
        &'a self,
        _targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        async { Ok(()) }.boxed()
    }

    fn plan(
        &self,
        target: &Target,
        _options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        Err(ProviderError::new(target.address, "not built yet"))
    }

    fn drift(&self, target: &Target) -> Result<DriftCheck, ProviderError> {
        Err(ProviderError::new(target.address, "not built yet"))
    }

    fn import(&self, target: &Target) -> Result<ResourceState, ProviderError> {
        Err(ProviderError::new(target.address, "not built yet"))
    }

    fn apply<'a>(
        &'a self,
        change: &'a ResourceChange,
        _prior: Option<&'a ResourceState>,
        _journal: &'a Journal,
    ) -> BoxFuture<'a, Result<Option<ResourceState>, ProviderError>> {
        async move { Err(ProviderError::new(&change.address, "not built yet")) }.boxed()
    }

    fn request_count(&self) -> u64 {
        0
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        async { Ok(()) }.boxed()
    }
}
