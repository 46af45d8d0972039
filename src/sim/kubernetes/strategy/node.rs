//! What the apiserver checks on a Node: its name, its taints (known effects, unique by key and
//! effect) and that `spec.providerID` once set never changes.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::names::{self, NameRule};
use crate::sim::kubernetes::status::FieldError;

type Errors = Vec<FieldError>;

const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

pub fn prepare_create(node: &mut Value) -> Result<(), Errors> {
    if !node["spec"].is_object() {
        node["spec"] = json!({});
    }
    let mut errors = names::validate(node, NameRule::Dns1123Subdomain);
    errors.extend(validate_taints(node));
    result(errors)
}

pub fn prepare_update(old: &Value, node: &mut Value) -> Result<(), Errors> {
    let mut errors = validate_taints(node);
    let old_id = old["spec"]["providerID"].as_str().unwrap_or("");
    let new_id = node["spec"]["providerID"].as_str().unwrap_or("");
    if !old_id.is_empty() && old_id != new_id {
        errors.push(FieldError::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    result(errors)
}

fn validate_taints(node: &Value) -> Errors {
    let mut errors = Vec::new();
    let taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let key = taint["key"].as_str().unwrap_or("");
        let effect = taint["effect"].as_str().unwrap_or("");
        if key.is_empty() {
            errors.push(FieldError::required(format!("spec.taints[{i}].key"), ""));
        }
        if !EFFECTS.contains(&effect) {
            errors.push(FieldError::not_supported(
                format!("spec.taints[{i}].effect"),
                json!(effect),
                EFFECTS.to_vec(),
            ));
        }
        if !seen.insert((key.to_owned(), effect.to_owned())) {
            errors.push(FieldError::duplicate(
                format!("spec.taints[{i}]"),
                json!(format!("{key}:{effect}")),
            ));
        }
    }
    errors
}

fn result(errors: Errors) -> Result<(), Errors> {
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_need_a_key_a_known_effect_and_to_be_unique() {
        let mut node = json!({"metadata": {"name": "n"}, "spec": {"taints": [
            {"key": "a", "effect": "NoSchedule"},
            {"key": "a", "effect": "NoSchedule"},
            {"key": "", "effect": "Sometimes"}]}});
        let errors = prepare_create(&mut node).unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.taints[1]",
                "spec.taints[2].key",
                "spec.taints[2].effect"
            ]
        );
    }

    #[test]
    fn provider_id_may_be_set_once_but_not_changed() {
        let unset = json!({"metadata": {"name": "n"}, "spec": {}});
        let mut set = json!({"metadata": {"name": "n"}, "spec": {"providerID": "cloudscale://a"}});
        assert!(prepare_update(&unset, &mut set.clone()).is_ok());
        let mut changed =
            json!({"metadata": {"name": "n"}, "spec": {"providerID": "cloudscale://b"}});
        let errors = prepare_update(&set, &mut changed).unwrap_err();
        assert_eq!(errors[0].field, "spec.providerID");
        assert!(prepare_update(&set.clone(), &mut set).is_ok());
    }
}
