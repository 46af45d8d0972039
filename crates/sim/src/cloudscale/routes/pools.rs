//! `/v1/load-balancers/pools`: deleting a pool takes its members, its monitor and the
//! listeners that point at it with it.
//!
//! The cascade to listeners is what the cloudscale CCM (1.3.0) relies on: to recreate a pool
//! (a changed algorithm or pool protocol, a renamed port: the README's "considerable impact")
//! it deletes the pool's members and the pool, never its listener or monitor, and in the next
//! pass creates the new pool's listener on the same port. A listener left behind with
//! `pool: null` would be one the CCM never deletes (it files such listeners apart, as "free
//! floating") and would hold the port the new one needs.

use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::collection::Collection;
use super::NameAndTags;
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{find, Algorithm, Pool, PoolProtocol, Tags, World};

pub struct Pools;

impl Collection for Pools {
    type Item = Pool;
    type Create = CreatePool;
    type Patch = NameAndTags;

    const PATH: &'static str = "/v1/load-balancers/pools";
    const ITEM_PATH: &'static str = "/v1/load-balancers/pools/{pool}";
    const CREATE_ONLY: &'static [&'static str] = &["algorithm", "protocol", "load_balancer"];

    fn items(world: &World) -> &[Pool] {
        &world.pools
    }

    fn items_mut(world: &mut World) -> &mut Vec<Pool> {
        &mut world.pools
    }

    fn pool_of(pool: &Pool) -> Option<Uuid> {
        Some(pool.uuid)
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

    fn build(world: &mut World, ctx: &Ctx, request: CreatePool) -> ApiResult<Pool> {
        if find(&world.load_balancers, request.load_balancer).is_none() {
            return Err(ApiError::unknown("load_balancer", request.load_balancer));
        }
        world.mark_changing(request.load_balancer, ctx.settled_at());
        let uuid = Uuid::new_v4();
        ctx.pool_changed(world, uuid, request.load_balancer);
        Ok(Pool {
            uuid,
            name: request.name,
            load_balancer: request.load_balancer,
            algorithm: request.algorithm,
            protocol: request.protocol,
            tags: request.tags,
            created_at: ctx.now,
        })
    }

    fn update(world: &mut World, ctx: &Ctx, index: usize, patch: NameAndTags) -> ApiResult<()> {
        let pool = &mut world.pools[index];
        patch.apply(&mut pool.name, &mut pool.tags);
        let (uuid, lb) = (pool.uuid, pool.load_balancer);
        world.mark_changing(lb, ctx.settled_at());
        ctx.pool_changed(world, uuid, lb);
        Ok(())
    }

    fn removed(world: &mut World, ctx: &Ctx, pool: &Pool) {
        remove_pool(world, pool.uuid);
        world.mark_changing(pool.load_balancer, ctx.settled_at());
    }
}

#[derive(Debug, Deserialize)]
pub struct CreatePool {
    name: String,
    load_balancer: Uuid,
    algorithm: Algorithm,
    protocol: PoolProtocol,
    #[serde(default)]
    tags: Tags,
}

/// Removes a pool with its members, its monitor and the listeners pointing at it.
pub fn remove_pool(world: &mut World, pool: Uuid) {
    world.members.retain(|member| member.pool != pool);
    world.health_monitors.retain(|monitor| monitor.pool != pool);
    world
        .listeners
        .retain(|listener| listener.pool != Some(pool));
    world.pools.retain(|p| p.uuid != pool);
    world.unhealthy_pools.remove(&pool);
}
