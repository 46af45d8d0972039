//! The minimal OpenAPI v3 that makes kubectl's default `apply --validate=strict` work
//! (research §2.2, verified against kubectl v1.32): per resource, a PATCH operation carrying
//! the group-version-kind and a `fieldValidation` query parameter, so kubectl leaves validation
//! to the server; and a requestBody that does NOT list strategic merge patch, so kubectl
//! computes its patch from its built-in types instead of from these (absent) schemas.
//! `/openapi/v2` stays a 404: clients ask for it only as protobuf.

use std::sync::LazyLock;

use axum::Json;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::kinds::Kind;

static DOCUMENT: LazyLock<Value> = LazyLock::new(core_v1_document);
/// Clients cache the group document by this hash, so it follows the content.
static HASH: LazyLock<String> = LazyLock::new(|| {
    let digest = Sha256::digest(DOCUMENT.to_string().as_bytes());
    hex::encode(&digest[..16]).to_uppercase()
});

pub async fn root() -> Json<Value> {
    Json(json!({
        "paths": {
            "api/v1": {"serverRelativeURL": format!("/openapi/v3/api/v1?hash={}", *HASH)},
        },
    }))
}

/// The `hash` query parameter is accepted and ignored: there is one document.
pub async fn core_v1() -> Json<Value> {
    Json(DOCUMENT.clone())
}

fn core_v1_document() -> Value {
    let mut paths = Map::new();
    for kind in Kind::ALL {
        let path = match kind.namespaced() {
            true => format!(
                "/api/v1/namespaces/{{namespace}}/{}/{{name}}",
                kind.plural()
            ),
            false => format!("/api/v1/{}/{{name}}", kind.plural()),
        };
        paths.insert(path, json!({"patch": patch_operation(kind)}));
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": {}},
    })
}

fn patch_operation(kind: Kind) -> Value {
    let any = json!({"schema": {"type": "object"}});
    json!({
        "operationId": format!("patchCoreV1{}", kind.name()),
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": kind.name()},
        "parameters": [
            {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
            {"name": "force", "in": "query", "schema": {"type": "boolean"}},
        ],
        "requestBody": {
            "content": {
                "application/json-patch+json": any,
                "application/merge-patch+json": any,
                "application/apply-patch+yaml": any,
            },
        },
        "responses": {"200": {"description": "OK"}},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_patch_names_its_kind_takes_field_validation_and_not_strategic_merge() {
        let document = core_v1_document();
        let service = &document["paths"]["/api/v1/namespaces/{namespace}/services/{name}"];
        let node = &document["paths"]["/api/v1/nodes/{name}"];
        for (operation, kind) in [(&service["patch"], "Service"), (&node["patch"], "Node")] {
            assert_eq!(
                operation["x-kubernetes-group-version-kind"],
                json!({"group": "", "version": "v1", "kind": kind})
            );
            let parameters = operation["parameters"].as_array().unwrap();
            assert!(parameters
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query"));
            let content = operation["requestBody"]["content"].as_object().unwrap();
            assert!(!content.contains_key("application/strategic-merge-patch+json"));
        }
    }
}
