//! `/ips/v1/ip-blocks`: list (with `tag` filters), create (a block carved from the location's
//! pool, 406 when none is left), show, patch (description only), delete (only unassigned
//! blocks) and the tag overwrite `PUT /ip-blocks/{id}/tags`.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_tag_format, tag_refs, TagAssignmentRequest};
use crate::phoenixnap::api::{parse_body, ApiError, ApiQuery, ApiResult, Validation};
use crate::phoenixnap::faults::simulated;
use crate::phoenixnap::filter::{matches_all, tag_filters};
use crate::phoenixnap::ids::new_id;
use crate::phoenixnap::pool::{allocate, ipv4_prefix};
use crate::phoenixnap::render;
use crate::phoenixnap::state::Sim;
use crate::phoenixnap::stats::FaultKind;
use crate::phoenixnap::validate::{is_location, LOCATIONS};
use crate::phoenixnap::world::{BlockStatus, IpBlock, World};

const DESCRIPTION_MAX: usize = 250;
const NO_BLOCKS: &str = "No IP Blocks available of provided cidr block size";

pub async fn list(
    State(sim): State<Sim>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Json<Vec<Value>> {
    let filters = tag_filters(&query);
    Json(sim.read(|world, ctx| {
        world
            .ip_blocks
            .iter()
            .filter(|b| matches_all(world, &b.tags, &filters))
            .map(|b| render::ip_block(world, b, ctx.now))
            .collect()
    }))
}

pub async fn show(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| Ok(Json(render::ip_block(world, find(world, &id)?, ctx.now))))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IpBlockCreate {
    location: String,
    cidr_block_size: String,
    #[serde(default)]
    ip_version: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    tags: Vec<TagAssignmentRequest>,
}

pub async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<Response> {
    let request: IpBlockCreate = parse_body(&body)?;
    let prefix = check_create(&request)?;
    sim.write(|world, ctx| {
        let tags = tag_refs(world, &request.tags)?;
        let cidr = prefix
            .and_then(|prefix| carve(world, &request.location, prefix))
            .ok_or_else(|| ApiError::new(StatusCode::NOT_ACCEPTABLE, NO_BLOCKS))?;
        let block = IpBlock {
            id: new_id(),
            location: request.location.clone(),
            cidr,
            description: request.description.clone(),
            tags,
            status: BlockStatus::Unassigned,
            assigned_network: None,
            transition: None,
            created_on: ctx.now,
        };
        let rendered = render::ip_block(world, &block, ctx.now);
        world.ip_blocks.push(block);
        Ok((StatusCode::CREATED, Json(rendered)).into_response())
    })
}

/// The body's format; `Some(prefix)` for an IPv4 size, `None` for an IPv6 one (the simulated
/// account has no IPv6 space, so those get the 406 of an exhausted pool).
fn check_create(request: &IpBlockCreate) -> ApiResult<Option<u8>> {
    let mut v = Validation::default();
    v.check(is_location(&request.location), || {
        format!("location must be one of {}", LOCATIONS.join(", "))
    });
    let version = request.ip_version.as_deref().unwrap_or("V4");
    let prefix = ipv4_prefix(&request.cidr_block_size);
    let size_fits = match version {
        "V4" => prefix.is_some(),
        "V6" => request.cidr_block_size == "/64",
        _ => true,
    };
    v.check(matches!(version, "V4" | "V6"), || {
        "ipVersion must be one of V4, V6".into()
    });
    v.check(size_fits, || {
        format!(
            "cidrBlockSize {} is not valid for {version}: /31, /30, /29 or /28 for V4, /64 for V6",
            request.cidr_block_size
        )
    });
    check_description(&mut v, request.description.as_deref());
    check_tag_format(&mut v, "tags", &request.tags);
    v.finish()?;
    Ok(prefix)
}

fn check_description(v: &mut Validation, description: Option<&str>) {
    v.check(
        description.is_none_or(|d| d.chars().count() <= DESCRIPTION_MAX),
        || format!("description must be at most {DESCRIPTION_MAX} characters"),
    );
}

/// The next free block of the location's pools, clear of every block that exists there.
fn carve(world: &World, location: &str, prefix: u8) -> Option<ipnet::Ipv4Net> {
    let pools = &world.location(location)?.ip_pools;
    let taken: Vec<_> = world.ip_blocks.iter().map(|b| b.cidr).collect();
    allocate(pools, prefix, &taken)
}

#[derive(Debug, Deserialize)]
struct IpBlockPatch {
    #[serde(default)]
    description: Option<String>,
}

pub async fn patch(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let request: IpBlockPatch = parse_body(&body)?;
    let mut v = Validation::default();
    check_description(&mut v, request.description.as_deref());
    v.finish()?;
    sim.write(|world, ctx| {
        let block = find_mut(world, &id)?;
        if request.description.is_some() {
            block.description = request.description;
        }
        Ok(Json(render::ip_block(world, find(world, &id)?, ctx.now)))
    })
}

pub async fn delete(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    sim.write(|world, ctx| {
        find(world, &id)?.check_deletable(ctx.now)?;
        world.ip_blocks.retain(|b| b.id != id);
        Ok(Json(
            json!({ "result": "IP Block has been deleted.", "ipBlockId": id }),
        ))
    })
}

/// Overwrites the block's tags: "unassigns any tags not part of the request".
pub async fn put_tags(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    if sim.injector().tags_put_fails() {
        sim.stats().record_fault(FaultKind::TagsPutFail);
        return Err(simulated(StatusCode::INTERNAL_SERVER_ERROR));
    }
    let requests: Vec<TagAssignmentRequest> = parse_body(&body)?;
    let mut v = Validation::default();
    check_tag_format(&mut v, "tags", &requests);
    v.finish()?;
    sim.write(|world, ctx| {
        find(world, &id)?;
        let tags = tag_refs(world, &requests)?;
        find_mut(world, &id)?.tags = tags;
        Ok(Json(render::ip_block(world, find(world, &id)?, ctx.now)))
    })
}

fn find<'a>(world: &'a World, id: &str) -> ApiResult<&'a IpBlock> {
    world
        .block(id)
        .ok_or_else(|| ApiError::not_found("IP Block", id))
}

fn find_mut<'a>(world: &'a mut World, id: &str) -> ApiResult<&'a mut IpBlock> {
    world
        .block_mut(id)
        .ok_or_else(|| ApiError::not_found("IP Block", id))
}
