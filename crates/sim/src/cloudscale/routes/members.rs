//! `/v1/load-balancers/pools/{pool}/members`: members exist only under their pool, so a member
//! addressed under another pool is not found.

use std::net::IpAddr;
use std::num::NonZeroU16;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::{assign, listing};
use crate::cloudscale::api::{
    created, lookup, parse_create, parse_patch, path_uuid, ApiError, ApiResult,
};
use crate::cloudscale::filter::TagFilter;
use crate::cloudscale::origin::Origin;
use crate::cloudscale::refs;
use crate::cloudscale::state::{Ctx, Sim};
use crate::cloudscale::world::{find, Member, Tags, World};

const CREATE_ONLY: &[&str] = &["protocol_port", "monitor_port", "address", "subnet", "pool"];

pub fn routes() -> Router<Sim> {
    Router::new()
        .route(
            "/v1/load-balancers/pools/{pool}/members",
            get(list).post(create),
        )
        .route(
            "/v1/load-balancers/pools/{pool}/members/{member}",
            get(show).patch(update).delete(remove),
        )
}

#[derive(Debug, Deserialize)]
struct CreateMember {
    name: String,
    #[serde(default = "enabled_by_default")]
    enabled: bool,
    protocol_port: NonZeroU16,
    /// Defaults to the protocol port.
    monitor_port: Option<NonZeroU16>,
    address: IpAddr,
    subnet: Uuid,
    #[serde(default)]
    tags: Tags,
}

fn enabled_by_default() -> bool {
    true
}

#[derive(Debug, Deserialize)]
struct UpdateMember {
    name: Option<String>,
    enabled: Option<bool>,
    tags: Option<Tags>,
}

fn render(world: &World, ctx: &Ctx, member: &Member) -> Value {
    let lb = world.pool_lb(member.pool);
    let monitor_status = world.monitor_status(member, ctx.now, ctx.settle());
    json!({
        "href": ctx.href(format!("load-balancers/pools/{}/members/{}", member.pool, member.uuid)),
        "uuid": member.uuid,
        "name": member.name,
        "enabled": member.enabled,
        "pool": refs::pool(world, ctx, member.pool),
        "load_balancer": refs::optional(lb, |lb| refs::load_balancer(world, ctx, lb)),
        "protocol_port": member.protocol_port,
        "monitor_port": member.monitor_port,
        "address": member.address,
        "subnet": refs::subnet(world, ctx, member.subnet),
        "monitor_status": monitor_status.as_str(),
        "tags": member.tags,
        "created_at": member.created_at.to_string(),
    })
}

/// The member `raw_member` of pool `raw_pool`; 404 unless both exist and belong together.
fn member_index(world: &World, raw_pool: &str, raw_member: &str) -> ApiResult<usize> {
    let pool = lookup(&world.pools, raw_pool)?.uuid;
    let member = path_uuid(raw_member)?;
    world
        .members
        .iter()
        .position(|m| m.uuid == member && m.pool == pool)
        .ok_or_else(ApiError::not_found)
}

async fn list(
    State(sim): State<Sim>,
    origin: Origin,
    Path(pool): Path<String>,
    filter: TagFilter,
) -> ApiResult<Json<Vec<Value>>> {
    sim.read_indexed(&origin, |world, ctx| {
        let pool = world
            .pool(path_uuid(&pool)?)
            .ok_or_else(ApiError::not_found)?;
        let members = world.members_of(pool.uuid);
        Ok(listing(members, &filter, |member| {
            render(world, ctx, member)
        }))
    })
}

async fn show(
    State(sim): State<Sim>,
    origin: Origin,
    Path((pool, member)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    sim.read(&origin, |world, ctx| {
        let index = member_index(world, &pool, &member)?;
        Ok(Json(render(world, ctx, &world.members[index])))
    })
}

async fn create(
    State(sim): State<Sim>,
    origin: Origin,
    Path(pool): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    sim.write(&origin, |world, ctx| {
        let pool = lookup(&world.pools, &pool)?;
        let (pool, lb) = (pool.uuid, pool.load_balancer);
        let request: CreateMember = parse_create(&body)?;
        let subnet = find(&world.subnets, request.subnet)
            .ok_or_else(|| ApiError::unknown("subnet", request.subnet))?;
        if !subnet.cidr.contains(&request.address) {
            return Err(ApiError::bad_request(format!(
                "address: {} is not in subnet {}.",
                request.address, subnet.cidr
            )));
        }
        let member = Member {
            uuid: Uuid::new_v4(),
            pool,
            name: request.name,
            enabled: request.enabled,
            protocol_port: request.protocol_port.get(),
            monitor_port: request.monitor_port.unwrap_or(request.protocol_port).get(),
            address: request.address,
            subnet: request.subnet,
            tags: request.tags,
            created_at: ctx.now,
        };
        world.mark_changing(lb, ctx.settled_at());
        ctx.pool_changed(world, pool, lb);
        let object = render(world, ctx, &member);
        world.members.push(member);
        Ok(created(object))
    })
}

async fn update(
    State(sim): State<Sim>,
    origin: Origin,
    Path((pool, member)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: UpdateMember = parse_patch(&body, CREATE_ONLY)?;
    sim.write(&origin, |world, ctx| {
        let index = member_index(world, &pool, &member)?;
        let member = &mut world.members[index];
        assign(&mut member.name, patch.name);
        assign(&mut member.enabled, patch.enabled);
        assign(&mut member.tags, patch.tags);
        let pool = member.pool;
        if let Some(lb) = world.pool_lb(pool) {
            world.mark_changing(lb, ctx.settled_at());
            ctx.pool_changed(world, pool, lb);
        }
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove(
    State(sim): State<Sim>,
    origin: Origin,
    Path((pool, member)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    sim.write(&origin, |world, ctx| {
        let index = member_index(world, &pool, &member)?;
        let member = world.members.remove(index);
        if let Some(lb) = world.pool_lb(member.pool) {
            world.mark_changing(lb, ctx.settled_at());
            ctx.pool_changed(world, member.pool, lb);
        }
        Ok(StatusCode::NO_CONTENT)
    })
}
