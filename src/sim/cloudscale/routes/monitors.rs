//! `/v1/load-balancers/health-monitors`: one monitor per pool; `http` exists only for the
//! `http` and `https` types, and its version cannot change in place.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::listing;
use crate::sim::cloudscale::api::{
    created, lookup, lookup_mut, nullable, parse_create, parse_patch, path_uuid, ApiError,
    ApiResult,
};
use crate::sim::cloudscale::filter::TagFilter;
use crate::sim::cloudscale::refs;
use crate::sim::cloudscale::state::{Ctx, Sim};
use crate::sim::cloudscale::world::{
    HealthMonitor, HttpCheck, HttpVersion, MonitorType, Tags, World,
};

const CREATE_ONLY: &[&str] = &["type", "pool", "http.version"];

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/load-balancers/health-monitors", get(list).post(create))
        .route(
            "/v1/load-balancers/health-monitors/{uuid}",
            get(show).patch(update).delete(remove),
        )
}

#[derive(Debug, Deserialize)]
struct CreateMonitor {
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

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CreateHttp {
    expected_codes: Option<Vec<String>>,
    method: Option<String>,
    url_path: Option<String>,
    version: Option<HttpVersion>,
    host: Option<String>,
}

impl CreateHttp {
    fn into_check(self) -> HttpCheck {
        HttpCheck {
            expected_codes: self.expected_codes.unwrap_or_else(|| vec!["200".into()]),
            method: self.method.unwrap_or_else(|| "GET".into()),
            url_path: self.url_path.unwrap_or_else(|| "/".into()),
            version: self.version.unwrap_or(HttpVersion::V1_1),
            host: self.host,
        }
    }
}

#[derive(Debug, Deserialize)]
struct UpdateMonitor {
    delay_s: Option<u32>,
    timeout_s: Option<u32>,
    up_threshold: Option<u32>,
    down_threshold: Option<u32>,
    http: Option<UpdateHttp>,
    tags: Option<Tags>,
}

#[derive(Debug, Deserialize)]
struct UpdateHttp {
    expected_codes: Option<Vec<String>>,
    method: Option<String>,
    url_path: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    host: Option<Option<String>>,
}

impl UpdateMonitor {
    fn apply(self, monitor: &mut HealthMonitor) -> ApiResult<()> {
        if let Some(http) = self.http {
            let check = monitor.http.as_mut().ok_or_else(|| {
                ApiError::bad_request("http: only http and https monitors have HTTP settings.")
            })?;
            http.apply(check);
        }
        let numbers = [
            (self.delay_s, &mut monitor.delay_s),
            (self.timeout_s, &mut monitor.timeout_s),
            (self.up_threshold, &mut monitor.up_threshold),
            (self.down_threshold, &mut monitor.down_threshold),
        ];
        for (new, field) in numbers {
            if let Some(new) = new {
                *field = new;
            }
        }
        if let Some(tags) = self.tags {
            monitor.tags = tags;
        }
        Ok(())
    }
}

impl UpdateHttp {
    fn apply(self, check: &mut HttpCheck) {
        if let Some(codes) = self.expected_codes {
            check.expected_codes = codes;
        }
        if let Some(method) = self.method {
            check.method = method;
        }
        if let Some(path) = self.url_path {
            check.url_path = path;
        }
        if let Some(host) = self.host {
            check.host = host;
        }
    }
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

async fn list(State(sim): State<Sim>, filter: TagFilter) -> Json<Vec<Value>> {
    sim.read(|world, ctx| listing(&world.health_monitors, &filter, |m| render(world, ctx, m)))
}

async fn show(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| {
        Ok(Json(render(
            world,
            ctx,
            lookup(&world.health_monitors, &uuid)?,
        )))
    })
}

async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: CreateMonitor = parse_create(&body)?;
    sim.write(|world, ctx| {
        let lb = world
            .pool_lb(request.pool)
            .ok_or_else(|| ApiError::unknown("pool", request.pool))?;
        if world.monitor_of(request.pool).is_some() {
            return Err(ApiError::bad_request(
                "pool: this pool already has a health monitor.",
            ));
        }
        let http = match (request.kind.checks_http(), request.http) {
            (true, http) => Some(http.unwrap_or_default().into_check()),
            (false, None) => None,
            (false, Some(_)) => {
                return Err(ApiError::bad_request(
                    "http: only http and https monitors have HTTP settings.",
                ))
            }
        };
        let monitor = HealthMonitor {
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
        };
        world.mark_changing(lb, ctx.settled_at());
        let object = render(world, ctx, &monitor);
        world.health_monitors.push(monitor);
        Ok(created(object))
    })
}

async fn update(
    State(sim): State<Sim>,
    Path(uuid): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: UpdateMonitor = parse_patch(&body, CREATE_ONLY)?;
    sim.write(|world, ctx| {
        let monitor = lookup_mut(&mut world.health_monitors, &uuid)?;
        // Validate on a copy: a refused patch must leave the monitor as it was.
        let mut updated = monitor.clone();
        patch.apply(&mut updated)?;
        *monitor = updated;
        let pool = monitor.pool;
        if let Some(lb) = world.pool_lb(pool) {
            world.mark_changing(lb, ctx.settled_at());
        }
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    sim.write(|world, ctx| {
        let pool = lookup(&world.health_monitors, &uuid)?.pool;
        let uuid = path_uuid(&uuid)?;
        world.health_monitors.retain(|monitor| monitor.uuid != uuid);
        if let Some(lb) = world.pool_lb(pool) {
            world.mark_changing(lb, ctx.settled_at());
        }
        Ok(StatusCode::NO_CONTENT)
    })
}
