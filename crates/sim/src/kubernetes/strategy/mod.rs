//! Per kind, what the apiserver does between decoding a write and storing it: defaults,
//! validation, allocation. The store calls these with the world as it is before the write.

mod names;
mod namespace;
mod node;
mod service;

use serde_json::Value;

pub use namespace::PROTECTED as PROTECTED_NAMESPACES;

use super::kinds::Kind;
use super::status::FieldError;
use super::world::World;

type Errors = Vec<FieldError>;

/// `key`: the object's storage key (a Service's own allocations are told apart by it).
pub fn prepare_create(
    kind: Kind,
    world: &World,
    key: &str,
    object: &mut Value,
) -> Result<(), Errors> {
    match kind {
        Kind::Namespace => namespace::prepare(object),
        Kind::Node => node::prepare_create(world, object),
        Kind::Service => service::prepare_create(world, key, object),
    }
}

pub fn prepare_update(
    kind: Kind,
    world: &World,
    key: &str,
    old: &Value,
    object: &mut Value,
) -> Result<(), Errors> {
    match kind {
        Kind::Namespace => Ok(()),
        Kind::Node => node::prepare_update(world, old, object),
        Kind::Service => service::prepare_update(world, key, old, object),
    }
}

pub fn prepare_status_update(kind: Kind, world: &World, object: &mut Value) -> Result<(), Errors> {
    match kind {
        Kind::Service => service::prepare_status_update(world, object),
        Kind::Namespace | Kind::Node => Ok(()),
    }
}

/// Decodes the body as the apiserver decodes into its Go types: a field of the wrong JSON
/// type (a port as a word, labels as a list) is a 400, not something to store.
pub fn check_decodes(kind: Kind, object: &Value) -> Result<(), String> {
    use k8s_openapi::api::core::v1::{Namespace, Node, Service};
    let decoded = match kind {
        Kind::Namespace => serde_json::from_value::<Namespace>(object.clone()).map(drop),
        Kind::Node => serde_json::from_value::<Node>(object.clone()).map(drop),
        Kind::Service => serde_json::from_value::<Service>(object.clone()).map(drop),
    };
    decoded.map_err(|e| {
        format!(
            "{} in version \"v1\" cannot be handled as a {}: {e}",
            kind.name(),
            kind.name()
        )
    })
}
