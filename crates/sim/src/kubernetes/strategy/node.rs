//! What the apiserver checks on a Node: its name, its taints (known effects, unique by key and
//! effect) and that `spec.providerID` once set never changes; and what admission adds to a new
//! one (TaintNodesByCondition's `not-ready` taint).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::names::{self, NameRule};
use crate::kubernetes::status::FieldError;
use crate::kubernetes::world::World;

type Errors = Vec<FieldError>;

const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

pub fn prepare_create(world: &World, node: &mut Value) -> Result<(), Errors> {
    if !node["spec"].is_object() {
        node["spec"] = json!({});
    }
    add_not_ready_taint(node);
    let mut errors = names::validate(node, NameRule::Dns1123Subdomain);
    errors.extend(validate_taints(world, node));
    result(errors)
}

pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// The admission plugin TaintNodesByCondition (on by default): every Node created gets
/// `node.kubernetes.io/not-ready:NoSchedule` appended, whatever its conditions say, unless a
/// taint with that key and effect is there already (any value). The node lifecycle
/// controller removes it once the node is Ready; until then the node keeps it.
fn add_not_ready_taint(node: &mut Value) {
    let present = node["spec"]["taints"].as_array().is_some_and(|taints| {
        taints
            .iter()
            .any(|t| t["key"] == NOT_READY_TAINT && t["effect"] == "NoSchedule")
    });
    if present {
        return;
    }
    let taint = json!({"key": NOT_READY_TAINT, "effect": "NoSchedule"});
    match node["spec"]["taints"].as_array_mut() {
        Some(taints) => taints.push(taint),
        None => node["spec"]["taints"] = json!([taint]),
    }
}

pub fn prepare_update(world: &World, old: &Value, node: &mut Value) -> Result<(), Errors> {
    let mut errors = validate_taints(world, node);
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

/// `validateNodeTaints` as kube-apiserver answers it (compared with v1.28.4 and v1.37.2): the
/// paths say `metadata.taints` (the server's own quirk), keys are qualified names, a duplicate
/// is shown as the internal Go struct (see `shown_taint`).
fn validate_taints(world: &World, node: &Value) -> Errors {
    let mut errors = Vec::new();
    let taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let field = format!("metadata.taints[{i}]");
        let key = taint["key"].as_str().unwrap_or("");
        let effect = taint["effect"].as_str().unwrap_or("");
        errors.extend(qualified_name(&format!("{field}.key"), key));
        if !EFFECTS.contains(&effect) {
            errors.push(FieldError::not_supported(
                format!("{field}.effect"),
                json!(effect),
                EFFECTS.to_vec(),
            ));
        }
        if !seen.insert((key.to_owned(), effect.to_owned())) {
            let value = taint["value"].as_str().unwrap_or("");
            let shown = shown_taint(world.version, key, value, effect);
            let detail = "taints must be unique by key and effect pair";
            errors.push(FieldError::duplicate_struct(field, shown, detail));
        }
    }
    errors
}

/// The first version whose field errors show a struct as JSON (apimachinery v0.34's
/// `Error.ErrorBody` tries `json.Marshal` before `%#v`).
const JSON_VALUES_SINCE: (u32, u32) = (1, 34);

/// A duplicate taint as the server shows it: the internal `core.Taint`, which has no JSON
/// tags, so its JSON keeps the Go field names; before v1.34 it is Go's `%#v`.
fn shown_taint(version: Option<(u32, u32)>, key: &str, value: &str, effect: &str) -> String {
    if version.is_none_or(|version| version >= JSON_VALUES_SINCE) {
        // In the struct's field order, as Go marshals it (a `json!` map would sort the keys).
        let (key, value, effect) = (json!(key), json!(value), json!(effect));
        return format!(r#"{{"Key":{key},"Value":{value},"Effect":{effect},"TimeAdded":null}}"#);
    }
    format!("core.Taint{{Key:{key:?}, Value:{value:?}, Effect:{effect:?}, TimeAdded:<nil>}}")
}

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
     '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// `IsQualifiedName` on the name part (after an optional `prefix/`): non-empty, at most 63
/// characters, alphanumeric at both ends with `-_.` inside. An empty one fails two checks.
fn qualified_name(field: &str, key: &str) -> Errors {
    let name = key.rsplit_once('/').map_or(key, |(_, name)| name);
    let invalid = |detail: &str| FieldError::invalid(field, json!(key), detail);
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push(invalid("name part must be non-empty"));
    } else if name.len() > 63 {
        errors.push(invalid("name part must be no more than 63 characters"));
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let inner = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !(inner && alnum(name.chars().next()) && alnum(name.chars().last())) {
        errors.push(invalid(NAME_PART));
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
        let v1_28 = World {
            version: Some((1, 28)),
            ..World::default()
        };
        let errors = prepare_create(&v1_28, &mut node).unwrap_err();
        let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        // As kube-apiserver v1.28.4 words them (its paths say `metadata.taints`).
        assert_eq!(
            shown,
            [
                "metadata.taints[1]: Duplicate value: core.Taint{Key:\"a\", Value:\"\", \
                 Effect:\"NoSchedule\", TimeAdded:<nil>}: taints must be unique by key and \
                 effect pair",
                "metadata.taints[2].key: Invalid value: \"\": name part must be non-empty",
                &format!("metadata.taints[2].key: Invalid value: \"\": {NAME_PART}"),
                "metadata.taints[2].effect: Unsupported value: \"Sometimes\": supported \
                 values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
            ]
        );
        assert!(qualified_name("k", "example.com/dedicated").is_empty());
        assert_eq!(qualified_name("k", "-x").len(), 1);
    }

    /// As kube-apiserver v1.37.2 shows a duplicate: the internal struct as JSON.
    #[test]
    fn from_v1_34_a_duplicate_taint_is_shown_as_json() {
        let mut node = json!({"metadata": {"name": "n"}, "spec": {"taints": [
            {"key": "a", "value": "x", "effect": "NoSchedule"},
            {"key": "a", "effect": "NoSchedule"}]}});
        let v1_37 = World {
            version: Some((1, 37)),
            ..World::default()
        };
        let errors = prepare_create(&v1_37, &mut node).unwrap_err();
        assert_eq!(
            errors[0].to_string(),
            "metadata.taints[1]: Duplicate value: {\"Key\":\"a\",\"Value\":\"\",\
             \"Effect\":\"NoSchedule\",\"TimeAdded\":null}: taints must be unique by key and \
             effect pair"
        );
        assert!(shown_taint(Some((1, 33)), "a", "", "NoSchedule").starts_with("core.Taint{"));
    }

    /// As kube-apiserver v1.28.4 answers `kubectl create` of these Nodes.
    #[test]
    fn admission_appends_the_not_ready_taint_even_to_a_ready_node() {
        let mut ready = json!({"metadata": {"name": "n"},
            "spec": {"taints": [{"key": "a", "effect": "NoExecute"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        prepare_create(&World::default(), &mut ready).unwrap();
        assert_eq!(
            ready["spec"]["taints"],
            json!([{"key": "a", "effect": "NoExecute"},
                   {"key": NOT_READY_TAINT, "effect": "NoSchedule"}])
        );
        let mut bare = json!({"metadata": {"name": "n"}});
        prepare_create(&World::default(), &mut bare).unwrap();
        assert_eq!(
            bare["spec"]["taints"],
            json!([{"key": NOT_READY_TAINT, "effect": "NoSchedule"}])
        );
        let other_effect = json!([{"key": NOT_READY_TAINT, "effect": "NoExecute"}]);
        let mut node = json!({"metadata": {"name": "n"}, "spec": {"taints": other_effect}});
        prepare_create(&World::default(), &mut node).unwrap();
        assert_eq!(node["spec"]["taints"].as_array().unwrap().len(), 2);
        let with_value = json!([{"key": NOT_READY_TAINT, "value": "x", "effect": "NoSchedule"}]);
        let mut node = json!({"metadata": {"name": "n"}, "spec": {"taints": with_value.clone()}});
        prepare_create(&World::default(), &mut node).unwrap();
        assert_eq!(
            node["spec"]["taints"], with_value,
            "one with a value counts"
        );
    }

    #[test]
    fn provider_id_may_be_set_once_but_not_changed() {
        let unset = json!({"metadata": {"name": "n"}, "spec": {}});
        let mut set = json!({"metadata": {"name": "n"}, "spec": {"providerID": "cloudscale://a"}});
        assert!(prepare_update(&World::default(), &unset, &mut set.clone()).is_ok());
        let mut changed =
            json!({"metadata": {"name": "n"}, "spec": {"providerID": "cloudscale://b"}});
        let errors = prepare_update(&World::default(), &set, &mut changed).unwrap_err();
        assert_eq!(errors[0].field, "spec.providerID");
        assert!(prepare_update(&World::default(), &set.clone(), &mut set).is_ok());
    }
}
