use serde_json::json;

use super::*;

/// A load balancer's schema as schemars writes one: definitions, references, an optional
/// table, an array of tables, a map.
fn schema() -> KindSchema {
    let definitions = json!({
        "Lb": { "type": "object", "properties": {
            "provider": { "type": "string" },
            "algorithm": { "type": "string" },
            "allowed-cidrs": { "type": "array", "items": { "type": "string" } },
            "timeouts": { "$ref": "#/$defs/Timeouts" },
            "labels": { "type": "object", "additionalProperties": { "type": "string" } },
            "ports": { "type": "array", "items": { "$ref": "#/$defs/Port" } },
        }, "additionalProperties": false },
        "Timeouts": { "anyOf": [{ "type": "object", "properties": {
            "client-data-ms": { "type": "integer" } } }] },
        "Port": { "type": "object", "properties": {
            "name": { "type": "string" }, "port": { "type": "integer" } } },
    });
    KindSchema {
        root: json!({ "$ref": "#/$defs/Lb" }),
        definitions: definitions.as_object().unwrap().clone(),
    }
}

fn key(k: &str) -> Step {
    Step::Key(k.into())
}

#[test]
fn paths_of_the_table_are_found_through_references_and_choices() {
    let schema = schema();
    assert_eq!(
        steps(&schema, "allowed-cidrs"),
        Some(vec![key("allowed-cidrs")])
    );
    assert_eq!(
        steps(&schema, "timeouts.client-data-ms"),
        Some(vec![key("timeouts"), key("client-data-ms")])
    );
    assert_eq!(
        steps(&schema, "labels.tier"),
        Some(vec![key("labels"), key("tier")])
    );
    assert_eq!(
        steps(&schema, "labels.app.kubernetes.io/name"),
        Some(vec![key("labels"), key("app.kubernetes.io/name")]),
        "a map's key may hold dots"
    );
    for missing in [
        "allowed-cidr",
        "timeouts.client",
        "allowed-cidrs.0",
        "ignore-changes",
        "",
    ] {
        assert_eq!(steps(&schema, missing), None, "{missing}");
    }
}

#[test]
fn an_array_of_tables_takes_any_name_and_its_elements_inherit_the_holders_keys() {
    let schema = schema();
    let port = vec![key("ports"), Step::Element("http".into())];
    assert_eq!(steps(&schema, "ports.http"), Some(port.clone()));
    let mut own = port.clone();
    own.push(key("port"));
    assert_eq!(steps(&schema, "ports.http.port"), Some(own.clone()));
    let mut inherited = port;
    inherited.push(Step::Inherited("algorithm".into()));
    assert_eq!(
        steps(&schema, "ports.http.algorithm"),
        Some(inherited.clone())
    );
    assert_eq!(steps(&schema, "ports.web.colour"), None);

    assert_eq!(Step::written_at(&own), "ports.[http].port");
    assert_eq!(Step::written_at(&inherited), "algorithm");
}

#[test]
fn the_keys_for_messages_leave_out_provider() {
    assert_eq!(
        schema().keys(),
        ["algorithm", "allowed-cidrs", "labels", "ports", "timeouts"]
    );
}
