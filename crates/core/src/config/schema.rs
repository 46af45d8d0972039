//! The JSON schema of the config, generated from the raw serde types that parse it (editors use
//! it for completion and checking; a copy is committed under schemas/).

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{json_schema, Schema, SchemaGenerator};
use serde_json::Value;

use super::raw::RawDocument;
use super::section::{ConfigSection, SectionSchema};
use super::values::Choice;

/// The schema of the config core reads and of each provider's section.
pub fn json_schema(sections: &[&dyn ConfigSection]) -> serde_json::Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with_transform(RecursiveTransform(without_null))
        .into_generator();
    // Generated first, so that their definitions join the root's and are transformed with it.
    let plugged: Vec<_> = sections
        .iter()
        .map(|section| (section.provider(), section.schema(&mut generator)))
        .collect();
    let mut root = generator.into_root_schema_for::<RawDocument>().to_value();
    for (provider, schema) in plugged {
        plug(&mut root, provider, schema);
    }
    root
}

/// Adds a section's tables to the root schema: its `[provider.NAME]` to the providers', each
/// resource table as one more choice of its kind.
fn plug(root: &mut Value, provider: &str, schema: SectionSchema) {
    if let Some(settings) = schema.settings {
        root["$defs"]["RawProviders"]["properties"][provider] = settings.to_value();
    }
    for (kind, resource) in schema.resources {
        let mut resource = resource.to_value();
        with_ignore_changes(root, &mut resource);
        let entries = &mut root["properties"][kind.as_str()]["additionalProperties"];
        if entries.is_null() {
            // The kind's first table.
            *entries = resource;
        } else if let Some(alternatives) = entries.get_mut("anyOf").and_then(Value::as_array_mut) {
            alternatives.push(resource);
        } else {
            // A kind with one table so far: now a choice of two.
            let only = entries.take();
            *entries = serde_json::json!({ "anyOf": [only, resource] });
        }
    }
}

/// Core's key of every resource table, added to the table's schema (its definition, when the
/// section's schema refers to one).
fn with_ignore_changes(root: &mut Value, resource: &mut Value) {
    let ignore_changes = serde_json::json!({
        "description": "Attributes the plan leaves as they are in the cloud, spelled as the plan spells them (\"allowed-cidrs\", \"timeouts.client-data-ms\", \"ports.http.algorithm\"); a path covers what is below it. Neither planned nor reported as drift.",
        "type": "array",
        "items": { "type": "string" }
    });
    let definition = (resource.get("$ref").and_then(Value::as_str))
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .map(str::to_string);
    let table = match definition {
        Some(name) => &mut root["$defs"][name],
        None => resource,
    };
    let for_each = serde_json::json!({
        "description": "One resource per item, addressed KIND.NAME[\"KEY\"]: a list of keys (letters, digits and -) or a table of items; ${each.key} and ${each.value} / ${each.value.FIELD} in the table's string values.",
        "type": ["array", "object"]
    });
    if let Some(properties) = table.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert("ignore-changes".into(), ignore_changes);
        properties.insert("for-each".into(), for_each);
    }
}

/// TOML has no null: an optional key is left out, so the schema must not offer null for it
/// (schemars describes an `Option` as "T or null").
fn without_null(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    let single_type = match object.get_mut("type") {
        Some(Value::Array(types)) => {
            types.retain(|t| t != "null");
            (types.len() == 1).then(|| types.remove(0))
        }
        _ => None,
    };
    if let Some(single_type) = single_type {
        object.insert("type".into(), single_type);
    }
    let only_alternative = match object.get_mut("anyOf") {
        Some(Value::Array(alternatives)) => {
            alternatives.retain(|a| a.get("type").is_none_or(|t| t != "null"));
            (alternatives.len() == 1 && alternatives[0].is_object()).then(|| alternatives.remove(0))
        }
        _ => None,
    };
    if let Some(Value::Object(only)) = only_alternative {
        object.remove("anyOf");
        object.extend(only);
    }
}

/// A string field whose words come from a [`Choice`] type.
pub fn choice<T: Choice>(_: &mut SchemaGenerator) -> Schema {
    let words: Vec<_> = T::all().iter().map(|v| v.word()).collect();
    json_schema!({ "type": "string", "enum": words })
}

/// A named section (`[load-balancer.NAME]`, …): its tables' keys depend on the provider each
/// names, and every provider has a section, which adds its tables (`plug`).
pub(super) fn entries(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object" })
}

/// `[defaults]`: per kind, per provider (but `nodes`, which names none), the keys of that
/// kind's tables.
pub(super) fn defaults(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "properties": {
            "load-balancer": { "type": "object", "additionalProperties": { "type": "object" } },
            "cluster": { "type": "object", "additionalProperties": { "type": "object" } },
            "nodes": { "type": "object" }
        },
        "additionalProperties": false
    })
}

/// A TCP/UDP port; kept as a plain integer while parsing so that 0 and 70000 get a clear
/// message instead of serde's "expected u16".
pub fn port(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": 65535 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_describes_core_tables_and_leaves_the_providers_to_their_sections() {
        let schema = json_schema(&[]);
        assert!(!schema.to_string().contains("null"), "TOML has no null");
        let outside = &schema["$defs"]["RawMaintenance"]["properties"]["outside-window"];
        assert!(
            outside["enum"]
                .as_array()
                .unwrap()
                .contains(&"pool-recreate".into()),
            "{outside}"
        );
        for kind in ["load-balancer", "cluster", "nodes"] {
            let entries = &schema["properties"][kind];
            assert!(entries.get("additionalProperties").is_none(), "{entries}");
        }
        assert_eq!(
            schema["$defs"]["RawProviders"]["additionalProperties"],
            false
        );
    }
}
