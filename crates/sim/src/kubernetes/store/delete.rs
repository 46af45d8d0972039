//! delete. An object with finalizers is only marked (`deletionTimestamp`) and goes when the
//! last finalizer is removed (`write.rs`) — the cloud controller's
//! `service.kubernetes.io/load-balancer-cleanup` relies on this to delete the cloud load
//! balancer first. Deleting a namespace deletes its Services at once (the real namespace
//! controller takes a while); `default`, `kube-system` and `kube-public` cannot be deleted.

use jiff::Timestamp;
use serde_json::{json, Value};

use super::write::commit;
use super::{metadata_mut, not_found, resource_version, served, WriteOptions};
use crate::kubernetes::kinds::{Kind, ObjectKey};
use crate::kubernetes::status::{ApiError, ApiResult};
use crate::kubernetes::strategy::PROTECTED_NAMESPACES;
use crate::kubernetes::world::{timestamp, World};

/// `delete_options`: the request's DeleteOptions body (`null` when none was sent).
pub fn delete(
    world: &mut World,
    kind: Kind,
    key: &ObjectKey,
    delete_options: &Value,
    options: WriteOptions,
) -> ApiResult<Value> {
    let current = world
        .get(kind, key)
        .cloned()
        .ok_or_else(|| not_found(kind, key))?;
    if kind == Kind::Namespace && PROTECTED_NAMESPACES.contains(&key.name.as_str()) {
        return Err(ApiError::forbidden(
            kind,
            &key.name,
            "this namespace may not be deleted",
        ));
    }
    check_preconditions(kind, key, &current, delete_options)?;
    let has_finalizers = current["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if has_finalizers {
        if !current["metadata"]["deletionTimestamp"].is_null() {
            return Ok(served(kind, &current));
        }
        let mut marked = current;
        let metadata = metadata_mut(&mut marked);
        metadata.insert(
            "deletionTimestamp".into(),
            json!(timestamp(Timestamp::now())),
        );
        metadata.insert("deletionGracePeriodSeconds".into(), json!(0));
        return Ok(commit(world, kind, key, marked, options));
    }
    if !options.dry_run {
        world.next_resource_version();
        world.objects_mut(kind).remove(&key.storage_key());
        if kind == Kind::Namespace {
            let prefix = format!("{}/", key.name);
            world.services.retain(|k, _| !k.starts_with(&prefix));
        }
    }
    Ok(served(kind, &current))
}

fn check_preconditions(
    kind: Kind,
    key: &ObjectKey,
    current: &Value,
    options: &Value,
) -> ApiResult<()> {
    let preconditions = &options["preconditions"];
    let stale_version = preconditions["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty() && rv != resource_version(current));
    let other_uid = preconditions["uid"]
        .as_str()
        .is_some_and(|uid| !uid.is_empty() && Some(uid) != current["metadata"]["uid"].as_str());
    match stale_version || other_uid {
        true => Err(ApiError::conflict(kind, &key.name)),
        false => Ok(()),
    }
}
