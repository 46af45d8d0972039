//! `/v1/load-balancers/pools`: deleting a pool takes its members and monitor with it; the
//! listeners that pointed at it stay, with `pool: null`.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::{listing, NameAndTags};
use crate::sim::cloudscale::api::{
    created, lookup, lookup_mut, parse_create, parse_patch, path_uuid, ApiError, ApiResult,
};
use crate::sim::cloudscale::filter::TagFilter;
use crate::sim::cloudscale::refs;
use crate::sim::cloudscale::state::{Ctx, Sim};
use crate::sim::cloudscale::world::{find, Algorithm, Pool, PoolProtocol, Tags, World};

const CREATE_ONLY: &[&str] = &["algorithm", "protocol", "load_balancer"];

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/load-balancers/pools", get(list).post(create))
        .route(
            "/v1/load-balancers/pools/{pool}",
            get(show).patch(update).delete(remove),
        )
}

#[derive(Debug, Deserialize)]
struct CreatePool {
    name: String,
    load_balancer: Uuid,
    algorithm: Algorithm,
    protocol: PoolProtocol,
    #[serde(default)]
    tags: Tags,
}

fn render(world: &World, ctx: &Ctx, pool: &Pool) -> Value {
    json!({
        "href": ctx.href(format!("load-balancers/pools/{}", pool.uuid)),
        "uuid": pool.uuid,
        "name": pool.name,
        "load_balancer": refs::load_balancer(world, ctx, pool.load_balancer),
        "algorithm": pool.algorithm,
        "protocol": pool.protocol,
        "tags": pool.tags,
        "created_at": pool.created_at.to_string(),
    })
}

async fn list(State(sim): State<Sim>, filter: TagFilter) -> Json<Vec<Value>> {
    sim.read(|world, ctx| listing(&world.pools, &filter, |pool| render(world, ctx, pool)))
}

async fn show(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| Ok(Json(render(world, ctx, lookup(&world.pools, &uuid)?))))
}

async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: CreatePool = parse_create(&body)?;
    sim.write(|world, ctx| {
        if find(&world.load_balancers, request.load_balancer).is_none() {
            return Err(ApiError::unknown("load_balancer", request.load_balancer));
        }
        let pool = Pool {
            uuid: Uuid::new_v4(),
            name: request.name,
            load_balancer: request.load_balancer,
            algorithm: request.algorithm,
            protocol: request.protocol,
            tags: request.tags,
            created_at: ctx.now,
        };
        world.mark_changing(pool.load_balancer, ctx.settled_at());
        let object = render(world, ctx, &pool);
        world.pools.push(pool);
        Ok(created(object))
    })
}

async fn update(
    State(sim): State<Sim>,
    Path(uuid): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: NameAndTags = parse_patch(&body, CREATE_ONLY)?;
    sim.write(|world, ctx| {
        let pool = lookup_mut(&mut world.pools, &uuid)?;
        patch.apply(&mut pool.name, &mut pool.tags);
        let lb = pool.load_balancer;
        world.mark_changing(lb, ctx.settled_at());
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    sim.write(|world, ctx| {
        let lb = lookup(&world.pools, &uuid)?.load_balancer;
        remove_pool(world, path_uuid(&uuid)?);
        world.mark_changing(lb, ctx.settled_at());
        Ok(StatusCode::NO_CONTENT)
    })
}

/// Removes a pool with its members and monitor, and detaches the listeners pointing at it.
pub fn remove_pool(world: &mut World, pool: Uuid) {
    world.members.retain(|member| member.pool != pool);
    world.health_monitors.retain(|monitor| monitor.pool != pool);
    for listener in &mut world.listeners {
        if listener.pool == Some(pool) {
            listener.pool = None;
        }
    }
    world.pools.retain(|p| p.uuid != pool);
}
