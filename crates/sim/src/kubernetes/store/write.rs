//! create, update (PUT) and patch. Every write decodes the body, checks resourceVersion (a
//! non-empty one that is not the stored one is a 409), lets the kind's strategy default,
//! validate and allocate, and stores with the next resourceVersion. An update that changes
//! nothing stores nothing and keeps the resourceVersion, as the apiserver does.

use jiff::Timestamp;
use serde_json::{json, Value};

use super::{metadata_mut, not_found, resource_version, served, Part, WriteOptions, Written};
use crate::kubernetes::health::labels_or_taints_changed;
use crate::kubernetes::kinds::{Kind, ObjectKey};
use crate::kubernetes::patch::{self, PatchType};
use crate::kubernetes::status::{ApiError, ApiResult};
use crate::kubernetes::strategy;
use crate::kubernetes::world::{new_uid, timestamp, World};

/// POST to a collection; `namespace` is the URL's.
pub fn create(
    world: &mut World,
    kind: Kind,
    namespace: Option<&str>,
    mut object: Value,
    options: WriteOptions,
) -> ApiResult<Value> {
    check_body(kind, &object)?;
    let name = resolve_name(&mut object);
    let key = match namespace {
        Some(namespace) => ObjectKey::namespaced(namespace, &name),
        None => ObjectKey::cluster(&name),
    };
    check_namespace(world, kind, &key, &mut object)?;
    if !name.is_empty() && world.get(kind, &key).is_some() {
        return Err(ApiError::already_exists(kind, &name));
    }
    if !resource_version(&object).is_empty() {
        return Err(ApiError::bad_request(
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let metadata = metadata_mut(&mut object);
    metadata.insert("uid".into(), json!(new_uid()));
    metadata.insert(
        "creationTimestamp".into(),
        json!(timestamp(Timestamp::now())),
    );
    for server_owned in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
    ] {
        metadata.remove(server_owned);
    }
    strategy::prepare_create(kind, world, &key.storage_key(), &mut object)
        .map_err(|errors| ApiError::invalid(kind, &name, errors))?;
    Ok(commit(world, kind, &key, object, options))
}

/// PUT: the whole object (or, for `/status`, its status).
pub fn update(
    world: &mut World,
    kind: Kind,
    key: &ObjectKey,
    object: Value,
    part: Part,
    options: WriteOptions,
) -> ApiResult<Value> {
    check_body(kind, &object)?;
    let old = world
        .get(kind, key)
        .cloned()
        .ok_or_else(|| not_found(kind, key))?;
    check_name(&object, key)?;
    store_update(world, kind, key, &old, object, part, options)
}

/// PATCH with any of the four types. An apply patch to a missing object creates it.
pub fn patch(
    world: &mut World,
    kind: Kind,
    key: &ObjectKey,
    patch_type: PatchType,
    body: &Value,
    part: Part,
    options: WriteOptions,
) -> ApiResult<Written> {
    let Some(current) = world.get(kind, key).cloned() else {
        if patch_type == PatchType::Apply && part == Part::Main {
            check_name(body, key)?;
            let mut object = body.clone();
            metadata_mut(&mut object).insert("name".into(), json!(key.name));
            let namespace = key.namespace.as_deref();
            let object = create(world, kind, namespace, object, options)?;
            return Ok(Written {
                object,
                created: true,
            });
        }
        return Err(not_found(kind, key));
    };
    if patch_type == PatchType::Apply {
        check_name(body, key)?;
    }
    let patched =
        patch::apply_to(kind, &current, patch_type, body).map_err(ApiError::unprocessable)?;
    check_body(kind, &patched)?;
    check_name(&patched, key)?;
    let object = store_update(world, kind, key, &current, patched, part, options)?;
    Ok(Written {
        object,
        created: false,
    })
}

fn store_update(
    world: &mut World,
    kind: Kind,
    key: &ObjectKey,
    old: &Value,
    incoming: Value,
    part: Part,
    options: WriteOptions,
) -> ApiResult<Value> {
    let sent_version = resource_version(&incoming);
    if !sent_version.is_empty() && sent_version != resource_version(old) {
        return Err(ApiError::conflict(kind, &key.name));
    }
    let mut object = match part {
        Part::Main => with_field(incoming, "status", old.get("status")),
        Part::Status => with_field(old.clone(), "status", incoming.get("status")),
    };
    keep_server_owned_metadata(old, &mut object);
    let prepared = match part {
        Part::Main => strategy::prepare_update(kind, world, &key.storage_key(), old, &mut object),
        Part::Status => strategy::prepare_status_update(kind, world, &mut object),
    };
    prepared.map_err(|errors| ApiError::invalid(kind, &key.name, errors))?;
    if object == *old {
        return Ok(served(kind, old));
    }
    let finalized = !object["metadata"]["deletionTimestamp"].is_null()
        && object["metadata"]["finalizers"]
            .as_array()
            .is_none_or(Vec::is_empty);
    if finalized {
        // The last finalizer of an object being deleted is gone: the delete completes.
        let answer = served(kind, &object);
        if !options.dry_run {
            world.next_resource_version();
            world.objects_mut(kind).remove(&key.storage_key());
        }
        return Ok(answer);
    }
    // A node policy's change (labels, taints) is what the unhealthy-after-change fault breaks.
    let node_changed = kind == Kind::Node
        && part == Part::Main
        && !options.dry_run
        && labels_or_taints_changed(old, &object);
    let answer = commit(world, kind, key, object, options);
    if node_changed {
        world.node_changed(&key.name);
    }
    Ok(world.shown(kind, answer))
}

/// Stores `object` with the next resourceVersion (a dry run stores nothing and keeps the
/// version it came with) and answers it.
pub(super) fn commit(
    world: &mut World,
    kind: Kind,
    key: &ObjectKey,
    mut object: Value,
    options: WriteOptions,
) -> Value {
    if let Value::Object(fields) = &mut object {
        fields.remove("apiVersion");
        fields.remove("kind");
    }
    if options.dry_run {
        return served(kind, &object);
    }
    let version = world.next_resource_version();
    metadata_mut(&mut object).insert("resourceVersion".into(), json!(version));
    world
        .objects_mut(kind)
        .insert(key.storage_key(), object.clone());
    served(kind, &object)
}

fn with_field(mut object: Value, field: &str, value: Option<&Value>) -> Value {
    if let Value::Object(fields) = &mut object {
        match value {
            Some(value) => fields.insert(field.into(), value.clone()),
            None => fields.remove(field),
        };
    }
    object
}

/// What no client write changes: identity, creation, deletion state; the version is the
/// stored one until the commit gives the next.
fn keep_server_owned_metadata(old: &Value, object: &mut Value) {
    let kept = [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
    ];
    let metadata = metadata_mut(object);
    metadata.remove("managedFields");
    for field in kept {
        match old["metadata"].get(field) {
            Some(value) => metadata.insert(field.into(), value.clone()),
            None => metadata.remove(field),
        };
    }
    if let Value::Object(fields) = object {
        fields.remove("apiVersion");
        fields.remove("kind");
    }
}

/// A body must be an object of this kind that decodes as the Go type would.
fn check_body(kind: Kind, object: &Value) -> ApiResult<()> {
    if !object.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    if let Some(sent) = object.get("kind").and_then(Value::as_str) {
        if sent != kind.name() {
            return Err(ApiError::bad_request(format!(
                "{sent} in version \"v1\" cannot be handled as a {}: the kind does not match",
                kind.name()
            )));
        }
    }
    if let Some(version) = object.get("apiVersion").and_then(Value::as_str) {
        if version != "v1" {
            return Err(ApiError::bad_request(format!(
                "{} in version {version:?} cannot be handled as a {}: no kind {:?} is \
                 registered for version {version:?}",
                kind.name(),
                kind.name(),
                kind.name()
            )));
        }
    }
    strategy::check_decodes(kind, object).map_err(ApiError::bad_request)
}

fn check_name(object: &Value, key: &ObjectKey) -> ApiResult<()> {
    match object["metadata"]["name"].as_str() {
        Some(name) if !name.is_empty() && name != key.name => Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            key.name
        ))),
        _ => Ok(()),
    }
}

/// `metadata.generateName` + five random characters when no name is given.
fn resolve_name(object: &mut Value) -> String {
    let metadata = metadata_mut(object);
    if let Some(name) = metadata.get("name").and_then(Value::as_str) {
        if !name.is_empty() {
            return name.to_owned();
        }
    }
    let Some(prefix) = metadata.get("generateName").and_then(Value::as_str) else {
        return String::new();
    };
    let suffix: String = uuid::Uuid::new_v4()
        .simple()
        .to_string()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(5)
        .collect();
    let name = format!("{prefix}{suffix}");
    metadata.insert("name".into(), json!(name));
    name
}

/// Namespaced objects live in an existing namespace, the URL's.
fn check_namespace(
    world: &World,
    kind: Kind,
    key: &ObjectKey,
    object: &mut Value,
) -> ApiResult<()> {
    let metadata = metadata_mut(object);
    let Some(namespace) = &key.namespace else {
        metadata.remove("namespace");
        return Ok(());
    };
    if let Some(sent) = metadata.get("namespace").and_then(Value::as_str) {
        if !sent.is_empty() && sent != namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    metadata.insert("namespace".into(), json!(namespace));
    if world
        .get(Kind::Namespace, &ObjectKey::cluster(namespace))
        .is_none()
    {
        return Err(ApiError::not_found(Kind::Namespace, namespace));
    }
    debug_assert!(kind.namespaced());
    Ok(())
}
