//! The generic verbs over the world, as the apiserver's registry store runs them for every
//! resource: get, list (selectors, `limit` + `continue`), create, update, patch and delete,
//! with resourceVersion (one counter for the cluster, a string on the wire) and the optimistic
//! concurrency check (409) on writes. Per-kind behaviour comes from `strategy`.
//!
//! Stored objects carry neither `apiVersion` nor `kind` (list items do not show them either);
//! [`served`] adds them to a single object.

mod delete;
mod read;
mod write;

pub use delete::delete;
pub use read::{get, list, ListQuery};
pub use write::{create, patch, update};

use serde_json::{json, Map, Value};

use super::kinds::{Kind, ObjectKey};
use super::status::ApiError;

/// Which part of the object a write may change: all but status, or status only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Main,
    Status,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `?dryRun=All`: everything is decided and answered, nothing stored.
    pub dry_run: bool,
}

/// A patch's answer: the object, and whether it was created (an apply to a missing object).
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub object: Value,
    pub created: bool,
}

/// A stored object as a single-object answer shows it.
pub fn served(kind: Kind, stored: &Value) -> Value {
    let mut object = Map::new();
    object.insert("apiVersion".into(), json!("v1"));
    object.insert("kind".into(), json!(kind.name()));
    if let Value::Object(fields) = stored {
        object.extend(fields.clone());
    }
    Value::Object(object)
}

fn resource_version(object: &Value) -> &str {
    object["metadata"]["resourceVersion"].as_str().unwrap_or("")
}

fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata was just made a map")
}

fn not_found(kind: Kind, key: &ObjectKey) -> ApiError {
    ApiError::not_found(kind, &key.name)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
