//! `/v1/load-balancers/listeners`: a listener belongs to a load balancer and usually points at
//! one of its pools; only its name, allowed CIDRs, timeouts and tags change in place.

use std::num::NonZeroU16;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use ipnet::IpNet;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::listing;
use crate::sim::cloudscale::api::{
    created, lookup, lookup_mut, parse_create, parse_patch, path_uuid, ApiError, ApiResult,
};
use crate::sim::cloudscale::filter::TagFilter;
use crate::sim::cloudscale::refs;
use crate::sim::cloudscale::state::{Ctx, Sim};
use crate::sim::cloudscale::world::{find, Listener, ListenerProtocol, Tags, World};

/// The API docs name only `pool`; the others cannot change in place either (impact.md: a
/// protocol or port change recreates the listener), so they are refused like `pool`.
const CREATE_ONLY: &[&str] = &["pool", "load_balancer", "protocol", "protocol_port"];

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/load-balancers/listeners", get(list).post(create))
        .route(
            "/v1/load-balancers/listeners/{uuid}",
            get(show).patch(update).delete(remove),
        )
}

#[derive(Debug, Deserialize)]
struct CreateListener {
    name: String,
    pool: Option<Uuid>,
    load_balancer: Option<Uuid>,
    #[serde(default = "tcp")]
    protocol: ListenerProtocol,
    protocol_port: NonZeroU16,
    #[serde(default)]
    allowed_cidrs: Vec<IpNet>,
    #[serde(default = "long_timeout")]
    timeout_client_data_ms: u32,
    #[serde(default = "connect_timeout")]
    timeout_member_connect_ms: u32,
    #[serde(default = "long_timeout")]
    timeout_member_data_ms: u32,
    #[serde(default)]
    tags: Tags,
}

fn tcp() -> ListenerProtocol {
    ListenerProtocol::Tcp
}

fn long_timeout() -> u32 {
    50_000
}

fn connect_timeout() -> u32 {
    5_000
}

#[derive(Debug, Deserialize)]
struct UpdateListener {
    name: Option<String>,
    allowed_cidrs: Option<Vec<IpNet>>,
    timeout_client_data_ms: Option<u32>,
    timeout_member_connect_ms: Option<u32>,
    timeout_member_data_ms: Option<u32>,
    tags: Option<Tags>,
}

impl UpdateListener {
    fn apply(self, listener: &mut Listener) {
        let targets = [
            (
                self.timeout_client_data_ms,
                &mut listener.timeout_client_data_ms,
            ),
            (
                self.timeout_member_connect_ms,
                &mut listener.timeout_member_connect_ms,
            ),
            (
                self.timeout_member_data_ms,
                &mut listener.timeout_member_data_ms,
            ),
        ];
        for (new, field) in targets {
            if let Some(new) = new {
                *field = new;
            }
        }
        if let Some(name) = self.name {
            listener.name = name;
        }
        if let Some(cidrs) = self.allowed_cidrs {
            listener.allowed_cidrs = cidrs;
        }
        if let Some(tags) = self.tags {
            listener.tags = tags;
        }
    }
}

fn render(world: &World, ctx: &Ctx, listener: &Listener) -> Value {
    json!({
        "href": ctx.href(format!("load-balancers/listeners/{}", listener.uuid)),
        "uuid": listener.uuid,
        "name": listener.name,
        "pool": refs::optional(listener.pool, |pool| refs::pool(world, ctx, pool)),
        "load_balancer": refs::load_balancer(world, ctx, listener.load_balancer),
        "protocol": listener.protocol,
        "protocol_port": listener.protocol_port,
        "allowed_cidrs": listener.allowed_cidrs,
        "timeout_client_data_ms": listener.timeout_client_data_ms,
        "timeout_member_connect_ms": listener.timeout_member_connect_ms,
        "timeout_member_data_ms": listener.timeout_member_data_ms,
        "tags": listener.tags,
        "created_at": listener.created_at.to_string(),
    })
}

async fn list(State(sim): State<Sim>, filter: TagFilter) -> Json<Vec<Value>> {
    sim.read(|world, ctx| listing(&world.listeners, &filter, |l| render(world, ctx, l)))
}

async fn show(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| Ok(Json(render(world, ctx, lookup(&world.listeners, &uuid)?))))
}

/// The load balancer a new listener belongs to: its pool's, or the one named.
fn owning_lb(world: &World, request: &CreateListener) -> ApiResult<Uuid> {
    let pool_lb = match request.pool {
        Some(pool) => Some(
            world
                .pool_lb(pool)
                .ok_or_else(|| ApiError::unknown("pool", pool))?,
        ),
        None => None,
    };
    match (pool_lb, request.load_balancer) {
        (Some(pool_lb), Some(named)) if pool_lb != named => Err(ApiError::bad_request(
            "load_balancer: the pool belongs to another load balancer.",
        )),
        (Some(lb), _) => Ok(lb),
        (None, Some(named)) => find(&world.load_balancers, named)
            .map(|lb| lb.uuid)
            .ok_or_else(|| ApiError::unknown("load_balancer", named)),
        (None, None) => Err(ApiError::bad_request("pool: This field is required.")),
    }
}

async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: CreateListener = parse_create(&body)?;
    sim.write(|world, ctx| {
        let load_balancer = owning_lb(world, &request)?;
        let listener = Listener {
            uuid: Uuid::new_v4(),
            load_balancer,
            pool: request.pool,
            name: request.name,
            protocol: request.protocol,
            protocol_port: request.protocol_port.get(),
            allowed_cidrs: request.allowed_cidrs,
            timeout_client_data_ms: request.timeout_client_data_ms,
            timeout_member_connect_ms: request.timeout_member_connect_ms,
            timeout_member_data_ms: request.timeout_member_data_ms,
            tags: request.tags,
            created_at: ctx.now,
        };
        world.mark_changing(load_balancer, ctx.settled_at());
        let object = render(world, ctx, &listener);
        world.listeners.push(listener);
        Ok(created(object))
    })
}

async fn update(
    State(sim): State<Sim>,
    Path(uuid): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: UpdateListener = parse_patch(&body, CREATE_ONLY)?;
    sim.write(|world, ctx| {
        let listener = lookup_mut(&mut world.listeners, &uuid)?;
        patch.apply(listener);
        let lb = listener.load_balancer;
        world.mark_changing(lb, ctx.settled_at());
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    sim.write(|world, ctx| {
        let lb = lookup(&world.listeners, &uuid)?.load_balancer;
        let uuid = path_uuid(&uuid)?;
        world.listeners.retain(|listener| listener.uuid != uuid);
        world.mark_changing(lb, ctx.settled_at());
        Ok(StatusCode::NO_CONTENT)
    })
}
