//! Attaching and detaching IP blocks: `POST /public-networks/{id}/ip-blocks {"id"}` and
//! `DELETE /public-networks/{id}/ip-blocks/{blockId}`, both 202 and finished `transition`
//! later (the block `assigning`→`assigned` / `unassigning`→`unassigned`, the network `BUSY`
//! meanwhile). Refusal codes are undocumented (research §3, §9.3): 400 for a block of another
//! location, 409 for every state conflict.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::Value;

use super::networks::find as find_network;
use crate::phoenixnap::api::{parse_body, ApiError, ApiQuery, ApiResult};
use crate::phoenixnap::render::{self, blocks_on, is_busy};
use crate::phoenixnap::state::Sim;
use crate::phoenixnap::world::{IpBlock, World};

/// [UNVERIFIED] `PublicNetworkCreate.ipBlocks` allows "max 10 IPv4 Blocks and 1 IPv6 Block";
/// whether later attaches are capped the same way is not documented. The simulator assumes
/// they are, so one network holds at most ten CCM Services.
pub const MAX_IPV4_BLOCKS: usize = 10;

const DETACHING: &str = "The specified IP block is being removed from the Public Network.";

#[derive(Debug, Deserialize)]
struct AttachRequest {
    id: String,
}

pub async fn attach(
    State(sim): State<Sim>,
    Path(network_id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: AttachRequest = parse_body(&body)?;
    sim.write(|world, ctx| {
        let network = find_network(world, &network_id)?;
        check_attachable(world, &network.location, &request.id, ctx.now)?;
        if is_busy(world, &network_id, ctx.now) {
            return Err(busy());
        }
        if blocks_on(world, &network_id, ctx.now).count() >= MAX_IPV4_BLOCKS {
            return Err(ApiError::conflict(format!(
                "The resource is in an incompatible state: Public Network {network_id} already \
                 has {MAX_IPV4_BLOCKS} IPv4 Blocks."
            )));
        }
        let block = world.block_mut(&request.id).expect("checked above");
        block.begin_assign(&network_id, ctx.now, ctx.done_at())?;
        let (network, block) = (
            find_network(world, &network_id)?,
            find_block(world, &request.id)?,
        );
        Ok((
            StatusCode::ACCEPTED,
            Json(render::network_block(network, block)),
        ))
    })
}

/// A block that exists, lies in the network's location (400) and is unassigned (409).
pub fn check_attachable(
    world: &World,
    location: &str,
    block_id: &str,
    now: Timestamp,
) -> ApiResult<()> {
    let block = find_block(world, block_id)?;
    if block.location != location {
        return Err(ApiError::bad_request(format!(
            "IP Block {block_id} is in location {}, the Public Network in {location}.",
            block.location
        )));
    }
    block.check_assignable(now)
}

#[derive(Debug, Deserialize)]
pub struct DetachQuery {
    #[serde(default)]
    force: bool,
}

pub async fn detach(
    State(sim): State<Sim>,
    Path((network_id, block_id)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<DetachQuery>,
) -> ApiResult<(StatusCode, Json<&'static str>)> {
    sim.write(|world, ctx| {
        let network = find_network(world, &network_id)?;
        let block = find_block(world, &block_id)?;
        let in_use = network
            .memberships
            .iter()
            .flat_map(|m| &m.ips)
            .any(|ip| block.cidr.contains(ip));
        if in_use && !query.force {
            return Err(ApiError::conflict(format!(
                "Members of Public Network {network_id} use addresses of IP Block {block_id}; \
                 remove them first or detach with force=true."
            )));
        }
        if is_busy(world, &network_id, ctx.now) {
            return Err(busy());
        }
        let block = world.block_mut(&block_id).expect("found above");
        block.begin_unassign(&network_id, ctx.now, ctx.done_at())?;
        Ok((StatusCode::ACCEPTED, Json(DETACHING)))
    })
}

fn busy() -> ApiError {
    ApiError::conflict("The resource is in an incompatible state: the Public Network is BUSY.")
}

fn find_block<'a>(world: &'a World, id: &str) -> ApiResult<&'a IpBlock> {
    world
        .block(id)
        .ok_or_else(|| ApiError::not_found("IP Block", id))
}
