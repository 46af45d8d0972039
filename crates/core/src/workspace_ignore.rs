//! `ignore-changes` in a plan and in a drift check.
//!
//! Leaving an attribute out of the plan is not enough: a provider's operations carry the whole
//! desired object (an update of a listener writes its CIDRs with its timeouts), so apply would
//! write the config's value over the one kept by hand. So a change with ignored attributes is
//! planned again from the spec the resource would have if its config said what the cloud has
//! at those paths (each ignored attribute's `before`, written into its table and resolved by
//! its section: `Origin::with_values`). That keeps every provider's meaning in its section and
//! its diff, needs nothing of any provider, and is checked: the second plan must differ from
//! the first only by what was ignored (and the consequences that went with it), or the plan
//! fails saying which value cannot be kept — it never writes an ignored attribute silently.
//! Where no config can say what the cloud has (a node policy: one label, a value per node),
//! the provider plans with the ignored attributes left alone itself
//! (`Provider::plan_keeping_ignored`), checked the same way.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::config::{Config, Resource};
use crate::plan::{AttributeChange, Ignored, ResourceChange};
use crate::provider::{DriftCheck, PlanOptions, Provider, ProviderError, Refreshed, Target};

/// The change with what `ignore-changes` covers left as the cloud has it, and what was left.
pub(crate) fn without_ignored(
    config: &Config,
    provider: &dyn Provider,
    target: &Target,
    refreshed: &Refreshed,
    options: &PlanOptions,
    change: ResourceChange,
) -> Result<(ResourceChange, Option<Ignored>), ProviderError> {
    let Some(resource) = target.resource else {
        return Ok((change, None));
    };
    let origin = &resource.origin;
    if origin.ignore_changes.is_empty() {
        return Ok((change, None));
    }
    let (ignored, kept): (Vec<AttributeChange>, Vec<AttributeChange>) = (change.attributes)
        .iter()
        .cloned()
        .partition(|a| origin.ignores(&a.path));
    if ignored.is_empty() {
        return Ok((change, None));
    }
    let planned = match provider.plan_keeping_ignored(target, refreshed, options) {
        Some(planned) => planned?,
        None => {
            let spec = origin
                .with_values(config, target.address, &live_values(&ignored))
                .map_err(|why| cannot_keep(resource, &ignored, &why))?;
            let kept_live = Resource {
                spec,
                ..resource.clone()
            };
            let again = Target {
                resource: Some(&kept_live),
                ..*target
            };
            provider.plan(&again, refreshed, options)?
        }
    };
    check_again(resource, &ignored, &kept, &planned)?;
    let ignored = Ignored {
        address: target.address.clone(),
        attributes: ignored,
    };
    Ok((planned, Some(ignored)))
}

/// Each ignored attribute's path with the cloud's value, once per path.
fn live_values(ignored: &[AttributeChange]) -> Vec<(&str, &Value)> {
    let mut seen = BTreeSet::new();
    (ignored.iter())
        .filter(|a| seen.insert(a.path.as_str()))
        .map(|a| (a.path.as_str(), &a.before))
        .collect()
}

/// The plan made with the cloud's values must show none of the ignored attributes, nothing the
/// first did not, and still every attribute written apart from them.
fn check_again(
    resource: &Resource,
    ignored: &[AttributeChange],
    kept: &[AttributeChange],
    planned: &ResourceChange,
) -> Result<(), ProviderError> {
    let origin = &resource.origin;
    for attribute in &planned.attributes {
        if origin.ignores(&attribute.path) {
            let why = format!("{} still differs with the cloud's value", attribute.path);
            return Err(cannot_keep(resource, ignored, &why));
        }
        if !kept.iter().any(|k| k.path == attribute.path) {
            let why = format!("keeping them would change {}", attribute.path);
            return Err(cannot_keep(resource, ignored, &why));
        }
    }
    let written: BTreeSet<String> = (ignored.iter())
        .filter_map(|a| origin.written_at(&a.path))
        .collect();
    let lost = kept.iter().find(|k| {
        !planned.attributes.iter().any(|a| a.path == k.path)
            && origin
                .written_at(&k.path)
                .is_some_and(|at| written.contains(&at))
    });
    if let Some(lost) = lost {
        let why = format!(
            "{} is set by the same key and would no longer change; ignore it too",
            lost.path
        );
        return Err(cannot_keep(resource, ignored, &why));
    }
    Ok(())
}

fn cannot_keep(resource: &Resource, ignored: &[AttributeChange], why: &str) -> ProviderError {
    let paths: BTreeSet<&str> = ignored.iter().map(|a| a.path.as_str()).collect();
    let paths: Vec<&str> = paths.into_iter().collect();
    let error = ProviderError::new(
        &resource.address,
        format!(
            "ignore-changes cannot keep {} as the cloud has it: {why}",
            paths.join(", ")
        ),
    );
    match resource.origin.ignore_changes.first() {
        Some(entry) => error.at(&entry.location),
        None => error,
    }
}

/// A drift check without what `ignore-changes` covers: a difference the team accepted is no
/// drift.
pub(crate) fn drift_without_ignored(resource: Option<&Resource>, check: DriftCheck) -> DriftCheck {
    match (resource, check) {
        (Some(resource), DriftCheck::Compared(attributes)) => DriftCheck::Compared(
            (attributes.into_iter())
                .filter(|a| !resource.origin.ignores(&a.path))
                .collect(),
        ),
        (_, check) => check,
    }
}
