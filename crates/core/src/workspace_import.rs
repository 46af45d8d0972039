//! `skyplan import ADDR ID`: the state entry records what the cloud holds, not what the
//! config asks for.
//!
//! The state's attributes are the spec last applied, which drift holds the cloud to. Nothing
//! was applied yet at an import: recording the config's spec would make every difference
//! between the config and the cloud look like a change made behind skyplan's back (drift
//! exits 2 until `apply --refresh-only`), while the plan is where those differences belong.
//! So the import records the spec the resource would have if its config said what the cloud
//! has — each attribute the plan finds different written back into its table with the cloud's
//! value and resolved by its section, as `ignore-changes` does (`Origin::with_values`): every
//! provider's meaning stays in its section and its diff. An attribute the config cannot write
//! as the cloud has it (no key holds it, or writing it would change something else) keeps the
//! config's value: the cloud's values are taken one attribute at a time, each kept only when
//! the plan made with it differs in nothing but fewer attributes.

use serde_json::Value;

use crate::config::{Config, Resource};
use crate::plan::AttributeChange;
use crate::provider::{PlanOptions, Provider, ProviderError, Refreshed, Target};
use crate::state::ResourceState;

/// The state entry for the import `target` names (its `prior` the claimed ID): the provider's
/// import of the resource as the cloud holds it.
pub(crate) fn imported(
    config: &Config,
    provider: &dyn Provider,
    target: &Target,
    refreshed: &Refreshed,
) -> Result<ResourceState, ProviderError> {
    let Some(resource) = target.resource else {
        return provider.import(target, refreshed);
    };
    let as_live = as_the_cloud_has_it(config, provider, target, resource, refreshed);
    let target = Target {
        resource: Some(&as_live),
        ..*target
    };
    provider.import(&target, refreshed)
}

/// `resource` with the cloud's value written in wherever the config can say it.
fn as_the_cloud_has_it(
    config: &Config,
    provider: &dyn Provider,
    target: &Target,
    resource: &Resource,
    refreshed: &Refreshed,
) -> Resource {
    let options = PlanOptions::default();
    let plan = |resource: &Resource| {
        let again = Target {
            resource: Some(resource),
            ..*target
        };
        provider
            .plan(&again, refreshed, &options)
            .map(|change| change.attributes)
            .map_err(|e| e.to_string())
    };
    let first = match plan(resource) {
        Ok(attributes) => attributes,
        Err(why) => {
            // The next plan says it at the resource's place; the import records the config.
            tracing::warn!(address = %target.address, "import: not planned ({why}): the config's values are recorded");
            return resource.clone();
        }
    };
    let rewrite = |values: &[(&str, &Value)]| {
        let spec = resource
            .origin
            .with_values(config, target.address, values)?;
        Ok(Resource {
            spec,
            ..resource.clone()
        })
    };
    closest_to_live(resource.clone(), first, rewrite, plan)
}

/// Starting from `start` (planned as `differences`), takes the cloud's value (`before`) of one
/// differing attribute after another: `rewrite` writes the values taken so far into the
/// config, `plan` plans the result. A value is kept when the plan made with it shows a strict
/// subset of the attributes the last kept one did: it removed its difference and added none.
fn closest_to_live<R>(
    start: R,
    differences: Vec<AttributeChange>,
    rewrite: impl Fn(&[(&str, &Value)]) -> Result<R, String>,
    plan: impl Fn(&R) -> Result<Vec<AttributeChange>, String>,
) -> R {
    let mut best = start;
    let mut left = paths(&differences);
    let mut taken: Vec<(&str, &Value)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for difference in &differences {
        if !seen.insert(difference.path.as_str()) {
            continue;
        }
        let mut trying = taken.clone();
        trying.push((difference.path.as_str(), &difference.before));
        let Ok(candidate) = rewrite(&trying) else {
            continue;
        };
        let Ok(planned) = plan(&candidate) else {
            continue;
        };
        let planned = paths(&planned);
        if planned.len() < left.len() && planned.is_subset(&left) {
            taken = trying;
            best = candidate;
            left = planned;
        }
    }
    best
}

fn paths(attributes: &[AttributeChange]) -> std::collections::BTreeSet<String> {
    attributes.iter().map(|a| a.path.clone()).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::model::{Downtime, Impact};

    /// A resource as a map of paths to values, planned against `live`.
    type Fake = BTreeMap<String, Value>;

    fn differences(resource: &Fake, live: &Fake) -> Vec<AttributeChange> {
        (resource.iter())
            .filter(|(path, value)| live.get(*path) != Some(*value))
            .map(|(path, value)| AttributeChange {
                path: path.clone(),
                before: live.get(path).cloned().unwrap_or(Value::Null),
                after: value.clone(),
                impact: Impact::None,
                reason: String::new(),
                downtime: Downtime::ZERO,
                group: String::new(),
                effects: vec![],
            })
            .collect()
    }

    fn fake(pairs: &[(&str, Value)]) -> Fake {
        (pairs.iter())
            .map(|(p, v)| (p.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn every_value_the_config_can_write_is_taken_from_the_cloud() {
        let config = fake(&[
            ("algorithm", json!("round_robin")),
            ("name", json!("web")),
            ("timeout", json!(5)),
        ]);
        let live = fake(&[
            ("algorithm", json!("source_ip")),
            ("name", json!("web")),
            ("timeout", json!(7)),
        ]);
        let rewrite = |values: &[(&str, &Value)]| {
            let mut written = config.clone();
            for (path, value) in values {
                written.insert(path.to_string(), (*value).clone());
            }
            Ok(written)
        };
        let plan = |r: &Fake| Ok(differences(r, &live));
        let result = closest_to_live(config.clone(), differences(&config, &live), rewrite, plan);
        assert_eq!(result, live);
    }

    #[test]
    fn a_value_no_key_holds_or_that_changes_another_keeps_the_configs() {
        let config = fake(&[
            ("algorithm", json!("round_robin")),
            ("members", json!(["10.0.0.1"])),
            ("tags.owner", json!("load-balancer.web")),
        ]);
        let live = fake(&[
            ("algorithm", json!("source_ip")),
            ("members", json!(["m-10.0.0.1"])),
            ("tags.owner", Value::Null),
        ]);
        let rewrite = |values: &[(&str, &Value)]| {
            let mut written = config.clone();
            for (path, value) in values {
                match *path {
                    "tags.owner" => return Err("`tags.owner` is not a key of its table".into()),
                    // What the cloud names a member is no address: written, it means another
                    // member and a second difference.
                    "members" => {
                        written.insert("members".into(), json!(["m-10.0.0.1"]));
                        written.insert("algorithm".into(), json!("least_connections"));
                    }
                    _ => {
                        written.insert(path.to_string(), (*value).clone());
                    }
                }
            }
            Ok(written)
        };
        let plan = |r: &Fake| Ok(differences(r, &live));
        let result = closest_to_live(config.clone(), differences(&config, &live), rewrite, plan);
        let mut expected = config.clone();
        expected.insert("algorithm".into(), json!("source_ip"));
        assert_eq!(result, expected);
    }

    #[test]
    fn nothing_differing_leaves_the_config_as_it_is() {
        let config = fake(&[("algorithm", json!("round_robin"))]);
        let rewrite = |_: &[(&str, &Value)]| -> Result<Fake, String> { panic!("nothing to write") };
        let plan = |_: &Fake| -> Result<Vec<AttributeChange>, String> { panic!("nothing to plan") };
        assert_eq!(
            closest_to_live(config.clone(), vec![], rewrite, plan),
            config
        );
    }
}
