//! `[cluster.NAME]` with provider "cloudstack": a CKS cluster.
//!
//! INTERFACE (used by `provider.rs`): [`ClusterOp`], [`plan`], [`drift`], [`apply`].

use std::fmt;

use serde::{Deserialize, Serialize};

use super::live::{ApplyContext, PlanInput};
use crate::model::ClusterSpec;
use crate::plan::ResourceChange;
use crate::provider::{DriftCheck, ProviderError};
use crate::state::ResourceState;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum ClusterOp {
    Todo,
}

impl fmt::Display for ClusterOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Desired vs live for one cluster, every constraint of the CKS table checked. Pure.
pub fn plan(input: &PlanInput<'_, ClusterSpec>) -> Result<ResourceChange, ProviderError> {
    Err(ProviderError::new(input.address, "not built yet"))
}

/// Live vs last applied. Pure.
pub fn drift(input: &PlanInput<'_, ClusterSpec>) -> Result<DriftCheck, ProviderError> {
    Err(ProviderError::new(input.address, "not built yet"))
}

/// Runs the change's operations; returns the new state entry (`None` once deleted).
pub async fn apply(
    _ctx: &ApplyContext<'_>,
    change: &ResourceChange,
    _prior: Option<&ResourceState>,
) -> Result<Option<ResourceState>, ProviderError> {
    Err(ProviderError::new(&change.address, "not built yet"))
}

/// The cluster's kubeconfig text (`getKubernetesClusterConfig` → `configdata`).
pub async fn kubeconfig(
    _client: &super::client::CloudstackClient,
    _cluster_id: &str,
) -> Result<String, ProviderError> {
    Err(ProviderError::new(super::PROVIDER, "not built yet"))
}
