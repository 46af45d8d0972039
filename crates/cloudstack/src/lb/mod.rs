//! `[load-balancer.NAME]` with provider "cloudstack" (direct mode): LB rules on a public IP.
//!
//! INTERFACE (used by `provider.rs`): [`LbOp`], [`plan`], [`drift`], [`apply`]; and
//! [`import`] for `skyplan import ADDR ID`.
//!
//! - `impact.rs` — the impact table (impact.md's direct-mode column), one row per change.
//! - `desired.rs` — the spec resolved against the inventory: network, members, rules, and the
//!   checks of what the server would refuse.
//! - `found.rs` — the live public IP and rules of the load balancer; the state's IDs.
//! - `diff.rs` — desired vs live → classified changes and ops (`ops.rs`).
//! - `execute.rs` — runs the ops, one API call each, journaled; `request.rs` — their
//!   parameters.

pub mod ccm;
pub mod desired;
pub mod diff;
pub mod execute;
pub mod found;
pub mod impact;
pub mod ops;
pub mod request;
#[cfg(test)]
mod tests;
pub mod verify;

use super::live::{ApplyContext, ClusterRef, PlanInput};
use crate::spec::{CloudstackLoadBalancerSpec, PublicIp};
use skyplan_core::plan::{Action, ResourceChange};
use skyplan_core::provider::{DriftCheck, ProviderError};
use skyplan_core::state::ResourceState;

pub use ops::LbOp;

/// Desired vs live for one load balancer. `cluster` is the members' cluster when the spec
/// names one. Pure.
pub fn plan(
    input: &PlanInput<'_, CloudstackLoadBalancerSpec>,
    cluster: Option<ClusterRef<'_>>,
) -> Result<ResourceChange, ProviderError> {
    let prior = input.prior.and_then(applied_spec);
    compare(input, input.desired, prior.as_ref(), cluster, true)
}

/// Live vs last applied. Pure.
pub fn drift(
    input: &PlanInput<'_, CloudstackLoadBalancerSpec>,
    cluster: Option<ClusterRef<'_>>,
) -> Result<DriftCheck, ProviderError> {
    // What was last applied is what the cloud should still hold; a load balancer found only by
    // its tag is held to the config.
    let applied = input.prior.and_then(applied_spec);
    let Some(expected) = applied.as_ref().or(input.desired) else {
        return Ok(DriftCheck::NotApplied);
    };
    // The expected spec is its own prior: what plan says only once (firewall-cidrs ignored on
    // a VPC tier) is no drift.
    let change = compare(input, Some(expected), Some(expected), cluster, false)?;
    Ok(match change.action {
        Action::Create if input.prior.is_some() => DriftCheck::Missing,
        Action::Create => DriftCheck::NotApplied,
        _ => DriftCheck::Compared(change.attributes),
    })
}

/// Runs the change's operations; returns the new state entry (`None` once deleted).
pub async fn apply(
    ctx: &ApplyContext<'_>,
    change: &ResourceChange,
    prior: Option<&ResourceState>,
) -> Result<Option<ResourceState>, ProviderError> {
    execute::apply(ctx, change, prior).await
}

/// The state entry for an existing public IP and its rules taken under management:
/// `input.prior.id` names the IP by its ID or address; the config's spec becomes the applied
/// one. The IP counts as skyplan's (released on delete) only if it carries the ownership tag.
/// Refused in direct mode with `public-ip = "auto"` for an IP without this address's tag:
/// after a lost state nothing would find it again (the tag is what finds an auto address, and
/// tagging it would make it skyplan's to release), and the next plan would associate another.
pub fn import(
    input: &PlanInput<'_, CloudstackLoadBalancerSpec>,
) -> Result<ResourceState, ProviderError> {
    let fail = |message: String| ProviderError::new(input.address, message);
    let (Some(spec), Some(prior)) = (input.desired, input.prior) else {
        return Err(fail(
            "import needs the load balancer in the config and an ID".into(),
        ));
    };
    let ip = input
        .live
        .public_ip(&prior.id)
        .or_else(|| input.live.public_ip_by_address(&prior.id))
        .ok_or_else(|| fail(format!("no public IP {} in the account", prior.id)))?;
    let tagged = found::owned_by(&ip.tags, &input.address.to_string());
    if spec.public_ip == PublicIp::Auto && !ccm::views::is_ccm(spec) && !tagged {
        return Err(fail(format!(
            "public-ip: \"auto\" finds an address again after a lost state only by skyplan's tag, which {} does not carry (skyplan did not associate it): the next plan would associate another; write public-ip = \"{}\" to import it",
            ip.ipaddress, ip.ipaddress
        )));
    }
    let names: Vec<String> = spec.ports.iter().map(|p| spec.rule_name(p)).collect();
    let ids = found::LbIds {
        public_ip: Some(ip.id.clone()),
        address: Some(ip.ipaddress.clone()),
        ip_associated_by_skyplan: tagged,
        network: ip.associatednetworkid.clone(),
        rules: input
            .live
            .rules_on(&ip.id)
            .filter(|r| names.contains(&r.name))
            .map(|r| (r.name.clone(), r.id.clone()))
            .collect(),
    };
    Ok(ResourceState {
        provider: super::PROVIDER.to_string(),
        id: ip.id.clone(),
        ids: serde_json::to_value(&ids).expect("ids serialize"),
        attributes: serde_json::to_value(spec).expect("specs serialize"),
        depends_on: vec![],
    })
}

/// The spec recorded at the last apply; unreadable (an older format) counts as unknown.
fn applied_spec(prior: &ResourceState) -> Option<CloudstackLoadBalancerSpec> {
    serde_json::from_value(prior.attributes.clone()).ok()
}

fn compare(
    input: &PlanInput<'_, CloudstackLoadBalancerSpec>,
    spec: Option<&CloudstackLoadBalancerSpec>,
    prior: Option<&CloudstackLoadBalancerSpec>,
    cluster: Option<ClusterRef<'_>>,
    replace_allowed: bool,
) -> Result<ResourceChange, ProviderError> {
    let address = input.address;
    let fail = |message: String| ProviderError::new(address, message);
    let ids = input.prior.map(found::LbIds::from_state);
    let bases: Vec<&str> = spec
        .iter()
        .chain(prior.iter())
        .map(|s| s.name.as_str())
        .collect();
    let wanted_ip = spec.map(|s| &s.public_ip);
    let owner = address.to_string();
    let found = found::find(input.live, &owner, &bases, wanted_ip, ids.as_ref()).map_err(fail)?;
    let desired = spec
        .map(|spec| desired::desired(spec, input.live, cluster))
        .transpose()
        .map_err(fail)?;
    if let Some(desired) = &desired {
        desired::check_ports(desired, found.ip).map_err(fail)?;
        desired::check_taken_ports(desired, &found, input.live).map_err(fail)?;
    }
    diff::diff(&diff::DiffInput {
        address,
        desired: spec.zip(desired.as_ref()),
        prior,
        found: &found,
        live: input.live,
        replace: input.replace && replace_allowed,
        allow_delete: input.allow_delete && replace_allowed,
    })
    .map_err(fail)
}
