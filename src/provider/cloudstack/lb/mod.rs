//! `[load-balancer.NAME]` with provider "cloudstack" (direct mode): LB rules on a public IP.
//!
//! INTERFACE (used by `provider.rs`): [`LbOp`], [`plan`], [`drift`], [`apply`].

use std::fmt;

use serde::{Deserialize, Serialize};

use super::live::{ApplyContext, ClusterRef, PlanInput};
use crate::model::CsLoadBalancerSpec;
use crate::plan::ResourceChange;
use crate::provider::{DriftCheck, ProviderError};
use crate::state::ResourceState;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum LbOp {
    Todo,
}

impl fmt::Display for LbOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Desired vs live for one load balancer. `cluster` is the members' cluster when the spec
/// names one. Pure.
pub fn plan(
    input: &PlanInput<'_, CsLoadBalancerSpec>,
    _cluster: Option<ClusterRef<'_>>,
) -> Result<ResourceChange, ProviderError> {
    Err(ProviderError::new(input.address, "not built yet"))
}

/// Live vs last applied. Pure.
pub fn drift(
    input: &PlanInput<'_, CsLoadBalancerSpec>,
    _cluster: Option<ClusterRef<'_>>,
) -> Result<DriftCheck, ProviderError> {
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
