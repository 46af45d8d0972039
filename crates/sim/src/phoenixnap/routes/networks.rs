//! `/networks/v1/public-networks`: list (`?location=`), create (optionally with IP blocks to
//! attach), show, patch (name, description, raEnabled) and delete (409 while it has members or
//! is busy; its blocks are freed at once).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::Value;

use super::attach::{check_attachable, MAX_IPV4_BLOCKS};
use crate::phoenixnap::api::{parse_body, ApiError, ApiQuery, ApiResult, Validation};
use crate::phoenixnap::ids::new_id;
use crate::phoenixnap::render::{self, blocks_on, is_busy};
use crate::phoenixnap::state::Sim;
use crate::phoenixnap::validate::{is_location, is_network_name, LOCATIONS};
use crate::phoenixnap::world::{BlockStatus, PublicNetwork, World};

const DESCRIPTION_MAX: usize = 250;

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    location: Option<String>,
}

pub async fn list(
    State(sim): State<Sim>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Vec<Value>>> {
    if let Some(location) = &query.location {
        let mut v = Validation::default();
        v.check(is_location(location), location_error);
        v.finish()?;
    }
    Ok(Json(sim.read(|world, ctx| {
        world
            .public_networks
            .iter()
            .filter(|n| query.location.as_ref().is_none_or(|l| *l == n.location))
            .map(|n| render::public_network(world, n, ctx.now))
            .collect()
    })))
}

pub async fn show(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| {
        Ok(Json(render::public_network(
            world,
            find(world, &id)?,
            ctx.now,
        )))
    })
}

#[derive(Debug, Deserialize)]
struct BlockId {
    id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PublicNetworkCreate {
    name: String,
    location: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    vlan_id: Option<u16>,
    #[serde(default)]
    ip_blocks: Vec<BlockId>,
    #[serde(default)]
    ra_enabled: bool,
}

pub async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<Response> {
    let request: PublicNetworkCreate = parse_body(&body)?;
    let mut v = Validation::default();
    check_name(&mut v, &request.name);
    v.check(is_location(&request.location), location_error);
    check_description(&mut v, request.description.as_deref());
    v.check(
        request.vlan_id.is_none_or(|id| (2..=4094).contains(&id)),
        || "vlanId must be from 2 to 4094".into(),
    );
    v.check(request.ip_blocks.len() <= MAX_IPV4_BLOCKS + 1, || {
        "ipBlocks: max 10 IPv4 Blocks and 1 IPv6 Block".into()
    });
    let mut ids: Vec<&str> = request.ip_blocks.iter().map(|b| b.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    v.check(ids.len() == request.ip_blocks.len(), || {
        "ipBlocks: a block is listed twice".into()
    });
    v.finish()?;
    sim.write(|world, ctx| {
        if world.public_networks.iter().any(|n| n.name == request.name) {
            return Err(ApiError::conflict(format!(
                "A Public Network named {} already exists.",
                request.name
            )));
        }
        let vlan_id = vlan_for(world, &request)?;
        let id = new_id();
        for block in &request.ip_blocks {
            check_attachable(world, &request.location, &block.id, ctx.now)?;
        }
        for block in &request.ip_blocks {
            let block = world.block_mut(&block.id).expect("checked above");
            block.begin_assign(&id, ctx.now, ctx.done_at())?;
        }
        let network = PublicNetwork {
            id,
            name: request.name.clone(),
            location: request.location.clone(),
            description: request.description.clone(),
            vlan_id,
            memberships: Vec::new(),
            ra_enabled: request.ra_enabled,
            created_on: ctx.now,
        };
        let rendered = render::public_network(world, &network, ctx.now);
        world.public_networks.push(network);
        Ok((StatusCode::CREATED, Json(rendered)).into_response())
    })
}

/// The asked VLAN (409 when the location already uses it) or the lowest free one.
fn vlan_for(world: &World, request: &PublicNetworkCreate) -> ApiResult<u16> {
    let used = |vlan: u16| {
        world
            .public_networks
            .iter()
            .any(|n| n.location == request.location && n.vlan_id == vlan)
    };
    match request.vlan_id {
        Some(vlan) if used(vlan) => Err(ApiError::conflict(format!(
            "VLAN {vlan} is already in use in {}.",
            request.location
        ))),
        Some(vlan) => Ok(vlan),
        None => (2..=4094)
            .find(|vlan| !used(*vlan))
            .ok_or_else(|| ApiError::conflict("No VLAN is free in this location.")),
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PublicNetworkModify {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    ra_enabled: Option<bool>,
}

pub async fn patch(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let request: PublicNetworkModify = parse_body(&body)?;
    let mut v = Validation::default();
    if let Some(name) = &request.name {
        check_name(&mut v, name);
    }
    check_description(&mut v, request.description.as_deref());
    v.finish()?;
    sim.write(|world, ctx| {
        find(world, &id)?;
        let network = world
            .public_networks
            .iter_mut()
            .find(|n| n.id == id)
            .expect("found above");
        if let Some(name) = request.name {
            network.name = name;
        }
        if request.description.is_some() {
            network.description = request.description;
        }
        if let Some(ra_enabled) = request.ra_enabled {
            network.ra_enabled = ra_enabled;
        }
        Ok(Json(render::public_network(
            world,
            find(world, &id)?,
            ctx.now,
        )))
    })
}

/// "Accepted only if no resources are members of this network. The IP Block(s) will be freed."
pub async fn delete(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    sim.write(|world, ctx| {
        let network = find(world, &id)?;
        if !network.memberships.is_empty() {
            return Err(ApiError::conflict(format!(
                "Public Network {id} still has {} member(s); remove them first.",
                network.memberships.len()
            )));
        }
        if is_busy(world, &id, ctx.now) {
            return Err(ApiError::conflict(
                "The resource is in an incompatible state: the Public Network is BUSY.",
            ));
        }
        let freed: Vec<String> = blocks_on(world, &id, ctx.now)
            .map(|b| b.id.clone())
            .collect();
        for block_id in freed {
            let block = world.block_mut(&block_id).expect("listed above");
            block.status = BlockStatus::Unassigned;
            block.assigned_network = None;
            block.transition = None;
        }
        world.public_networks.retain(|n| n.id != id);
        Ok(StatusCode::NO_CONTENT)
    })
}

fn check_name(v: &mut Validation, name: &str) {
    v.check(is_network_name(name), || {
        "name must match ^(?=.*[a-zA-Z])([a-zA-Z0-9(). -])+$ and be at most 100 characters".into()
    });
}

fn check_description(v: &mut Validation, description: Option<&str>) {
    v.check(
        description.is_none_or(|d| d.chars().count() <= DESCRIPTION_MAX),
        || format!("description must be at most {DESCRIPTION_MAX} characters"),
    );
}

fn location_error() -> String {
    format!("location must be one of {}", LOCATIONS.join(", "))
}

pub fn find<'a>(world: &'a World, id: &str) -> ApiResult<&'a PublicNetwork> {
    world
        .network(id)
        .ok_or_else(|| ApiError::not_found("Public Network", id))
}
