//! What clients read before they act (research §2.2): `/version` (numeric major and minor: the
//! cloudscale CCM runs `strconv.Atoi` on them), the legacy discovery documents `/api`, `/apis`
//! (a 404 there is fatal to kubectl, so an empty group list is served) and `/api/v1` with
//! the short names `no`, `svc`, `ns`. Always plain `application/json`: kubectl asks for
//! aggregated discovery first and accepts the legacy answer by its Content-Type.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde_json::{json, Value};

use super::kinds::Kind;
use super::state::KubeSim;

pub async fn version(State(sim): State<KubeSim>) -> Json<Value> {
    Json(version_document(sim.version()))
}

pub async fn api(headers: HeaderMap) -> Json<Value> {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    Json(json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
    }))
}

pub async fn apis() -> Json<Value> {
    Json(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": []}))
}

pub async fn core_v1() -> Json<Value> {
    Json(core_v1_resources())
}

pub fn version_document((major, minor): (u32, u32)) -> Value {
    json!({
        "major": major.to_string(),
        "minor": minor.to_string(),
        "gitVersion": format!("v{major}.{minor}.0"),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-04-23T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

fn core_v1_resources() -> Value {
    let mut resources = Vec::new();
    for kind in Kind::ALL {
        resources.push(json!({
            "name": kind.plural(),
            "singularName": kind.singular(),
            "namespaced": kind.namespaced(),
            "kind": kind.name(),
            "verbs": ["create", "delete", "get", "list", "patch", "update"],
            "shortNames": kind.short_names(),
        }));
        if kind.has_status() {
            resources.push(json!({
                "name": format!("{}/status", kind.plural()),
                "singularName": "",
                "namespaced": kind.namespaced(),
                "kind": kind.name(),
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": resources})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_has_numeric_major_and_minor() {
        let document = version_document((1, 33));
        assert_eq!(document["major"], "1");
        assert_eq!(document["minor"], "33");
        assert_eq!(document["gitVersion"], "v1.33.0");
    }

    #[test]
    fn core_v1_lists_each_resource_with_short_names_and_status_subresources() {
        let list = core_v1_resources();
        let names: Vec<&str> = list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "namespaces",
                "nodes",
                "nodes/status",
                "services",
                "services/status"
            ]
        );
        let nodes = &list["resources"][1];
        assert_eq!(nodes["shortNames"], json!(["no"]));
        assert_eq!(nodes["namespaced"], false);
        assert_eq!(list["resources"][3]["shortNames"], json!(["svc"]));
        assert_eq!(list["resources"][3]["namespaced"], true);
    }
}
