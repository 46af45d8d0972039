//! `/v1/load-balancers/health-monitors`: one monitor per pool; `http` exists only for the
//! `http` and `https` types (`monitor_http` has the rules), and its version cannot change in
//! place.

use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::assign;
use super::collection::Collection;
use super::monitor_http::{CreateHttp, UpdateHttp};
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{HealthMonitor, MonitorType, Tags, World};

pub struct Monitors;

impl Collection for Monitors {
    type Item = HealthMonitor;
    type Create = CreateMonitor;
    type Patch = UpdateMonitor;

    const PATH: &'static str = "/v1/load-balancers/health-monitors";
    const ITEM_PATH: &'static str = "/v1/load-balancers/health-monitors/{uuid}";
    const CREATE_ONLY: &'static [&'static str] = &["type", "pool", "http.version"];

    fn items(world: &World) -> &[HealthMonitor] {
        &world.health_monitors
    }

    fn items_mut(world: &mut World) -> &mut Vec<HealthMonitor> {
        &mut world.health_monitors
    }

    fn pool_of(monitor: &HealthMonitor) -> Option<Uuid> {
        Some(monitor.pool)
    }

    fn render(world: &World, ctx: &Ctx, monitor: &HealthMonitor) -> Value {
        let lb = world.pool_lb(monitor.pool);
        json!({
            "href": ctx.href(format!("load-balancers/health-monitors/{}", monitor.uuid)),
            "uuid": monitor.uuid,
            "pool": refs::pool(world, ctx, monitor.pool),
            "load_balancer": refs::optional(lb, |lb| refs::load_balancer(world, ctx, lb)),
            "delay_s": monitor.delay_s,
            "timeout_s": monitor.timeout_s,
            "up_threshold": monitor.up_threshold,
            "down_threshold": monitor.down_threshold,
            "type": monitor.kind,
            "http": monitor.http,
            "tags": monitor.tags,
            "created_at": monitor.created_at.to_string(),
        })
    }

    fn build(world: &mut World, ctx: &Ctx, request: CreateMonitor) -> ApiResult<HealthMonitor> {
        let lb = world
            .pool_lb(request.pool)
            .ok_or_else(|| ApiError::unknown("pool", request.pool))?;
        if world.monitor_of(request.pool).is_some() {
            return Err(ApiError::bad_request(
                "pool: this pool already has a health monitor.",
            ));
        }
        let http = CreateHttp::check_for(request.kind, request.http)?;
        world.mark_changing(lb, ctx.settled_at());
        ctx.pool_changed(world, request.pool, lb);
        Ok(HealthMonitor {
            uuid: Uuid::new_v4(),
            pool: request.pool,
            delay_s: request.delay_s,
            timeout_s: request.timeout_s,
            up_threshold: request.up_threshold,
            down_threshold: request.down_threshold,
            kind: request.kind,
            http,
            tags: request.tags,
            created_at: ctx.now,
        })
    }

    fn update(world: &mut World, ctx: &Ctx, index: usize, patch: UpdateMonitor) -> ApiResult<()> {
        let monitor = &mut world.health_monitors[index];
        // Validate on a copy: a refused patch must leave the monitor as it was.
        let mut updated = monitor.clone();
        patch.apply(&mut updated)?;
        *monitor = updated;
        let pool = monitor.pool;
        mark_pool_lb_changing(world, ctx, pool);
        Ok(())
    }

    fn removed(world: &mut World, ctx: &Ctx, monitor: &HealthMonitor) {
        mark_pool_lb_changing(world, ctx, monitor.pool);
    }
}

/// The pool's load balancer is `changing`, and the pool changed (its members' health may).
fn mark_pool_lb_changing(world: &mut World, ctx: &Ctx, pool: Uuid) {
    if let Some(lb) = world.pool_lb(pool) {
        world.mark_changing(lb, ctx.settled_at());
        ctx.pool_changed(world, pool, lb);
    }
}

#[derive(Debug, Deserialize)]
pub struct CreateMonitor {
    pool: Uuid,
    #[serde(rename = "type")]
    kind: MonitorType,
    #[serde(default = "two")]
    delay_s: u32,
    #[serde(default = "one")]
    timeout_s: u32,
    #[serde(default = "two")]
    up_threshold: u32,
    #[serde(default = "three")]
    down_threshold: u32,
    http: Option<CreateHttp>,
    #[serde(default)]
    tags: Tags,
}

fn one() -> u32 {
    1
}

fn two() -> u32 {
    2
}

fn three() -> u32 {
    3
}

#[derive(Debug, Deserialize)]
pub struct UpdateMonitor {
    delay_s: Option<u32>,
    timeout_s: Option<u32>,
    up_threshold: Option<u32>,
    down_threshold: Option<u32>,
    http: Option<UpdateHttp>,
    tags: Option<Tags>,
}

impl UpdateMonitor {
    fn apply(self, monitor: &mut HealthMonitor) -> ApiResult<()> {
        if let Some(http) = self.http {
            http.apply(monitor.http.as_mut())?;
        }
        assign(&mut monitor.delay_s, self.delay_s);
        assign(&mut monitor.timeout_s, self.timeout_s);
        assign(&mut monitor.up_threshold, self.up_threshold);
        assign(&mut monitor.down_threshold, self.down_threshold);
        assign(&mut monitor.tags, self.tags);
        Ok(())
    }
}
