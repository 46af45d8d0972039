//! The four APIs' routes, one file per collection (`attach` is the public network's IP block
//! sub-collection), and the tag assignments they share.

mod attach;
mod ips;
mod memberships;
mod networks;
mod servers;
mod tags;

use axum::routing::{delete, get, post, put};
use axum::Router;
use serde::Deserialize;

use super::api::{ApiError, ApiResult, Validation};
use super::state::Sim;
use super::validate::is_tag_text;
use super::world::{TagRef, World};

pub fn api() -> Router<Sim> {
    Router::new()
        .route("/ips/v1/ip-blocks", get(ips::list).post(ips::create))
        .route(
            "/ips/v1/ip-blocks/{id}",
            get(ips::show).patch(ips::patch).delete(ips::delete),
        )
        .route("/ips/v1/ip-blocks/{id}/tags", put(ips::put_tags))
        .route(
            "/networks/v1/public-networks",
            get(networks::list).post(networks::create),
        )
        .route(
            "/networks/v1/public-networks/{id}",
            get(networks::show)
                .patch(networks::patch)
                .delete(networks::delete),
        )
        .route(
            "/networks/v1/public-networks/{id}/ip-blocks",
            post(attach::attach),
        )
        .route(
            "/networks/v1/public-networks/{id}/ip-blocks/{block_id}",
            delete(attach::detach),
        )
        .route("/tag-manager/v1/tags", get(tags::list).post(tags::create))
        .route(
            "/tag-manager/v1/tags/{id}",
            get(tags::show).patch(tags::patch).delete(tags::delete),
        )
        .route("/bmc/v1/servers", get(servers::list).post(servers::create))
        .route(
            "/bmc/v1/servers/{id}",
            get(servers::show).delete(servers::delete),
        )
        .route(
            "/bmc/v1/servers/{id}/actions/{action}",
            post(servers::action),
        )
        .route(MEMBERSHIPS, post(memberships::join))
        .route(
            &format!("{MEMBERSHIPS}/{{network_id}}"),
            delete(memberships::leave),
        )
}

/// A server's public network memberships (BMC API).
const MEMBERSHIPS: &str =
    "/bmc/v1/servers/{id}/network-configuration/public-network-configuration/public-networks";

/// `TagAssignmentRequest`: a tag name that exists in the tag manager, and a free-form value.
#[derive(Debug, Deserialize)]
pub struct TagAssignmentRequest {
    pub name: String,
    #[serde(default)]
    pub value: Option<String>,
}

/// Checks the names' and values' format into `v` (400 with validationErrors).
fn check_tag_format(v: &mut Validation, field: &str, requests: &[TagAssignmentRequest]) {
    for (n, request) in requests.iter().enumerate() {
        v.check(is_tag_text(&request.name), || {
            format!("{field}[{n}].name must match [A-zÀ-ú0-9_-]{{1,100}}")
        });
        if let Some(value) = &request.value {
            v.check(is_tag_text(value), || {
                format!("{field}[{n}].value must match [A-zÀ-ú0-9_-]{{1,100}}")
            });
        }
    }
}

/// The assignments to store, once the format is known good: every name must exist in the tag
/// manager (400 otherwise, research §4: names are created before they are assigned) and appear
/// once.
fn tag_refs(world: &World, requests: &[TagAssignmentRequest]) -> ApiResult<Vec<TagRef>> {
    let mut refs: Vec<TagRef> = Vec::new();
    for request in requests {
        let tag = world.tag_named(&request.name).ok_or_else(|| {
            ApiError::bad_request(format!(
                "Tag with name {} does not exist. Create it in the Tags API first.",
                request.name
            ))
        })?;
        if refs.iter().any(|r| r.tag_id == tag.id) {
            return Err(ApiError::bad_request(format!(
                "Tag {} is assigned more than once.",
                request.name
            )));
        }
        refs.push(TagRef {
            tag_id: tag.id.clone(),
            value: request.value.clone(),
        });
    }
    Ok(refs)
}
