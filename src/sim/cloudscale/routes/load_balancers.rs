//! `/v1/load-balancers`: creation assigns VIPs and starts in `changing`; deletion takes every
//! sub-object with it and unassigns the floating IPs.

use std::net::IpAddr;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::{addresses, listing, pools, NameAndTags};
use crate::sim::cloudscale::api::{
    created, lookup, lookup_mut, parse_create, parse_patch, path_uuid, ApiError, ApiResult,
};
use crate::sim::cloudscale::filter::TagFilter;
use crate::sim::cloudscale::inventory::{self, PUBLIC_SUBNET_UUID, ZONES};
use crate::sim::cloudscale::refs;
use crate::sim::cloudscale::state::{Ctx, Sim};
use crate::sim::cloudscale::world::{find, LoadBalancer, Tags, Vip, World};

const CREATE_ONLY: &[&str] = &["flavor", "zone", "vip_addresses"];

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/load-balancers", get(list).post(create))
        .route(
            "/v1/load-balancers/{uuid}",
            get(show).patch(update).delete(remove),
        )
}

#[derive(Debug, Deserialize)]
struct CreateLb {
    name: String,
    flavor: String,
    zone: Option<String>,
    #[serde(default)]
    vip_addresses: Vec<VipRequest>,
    #[serde(default)]
    tags: Tags,
}

#[derive(Debug, Deserialize)]
struct VipRequest {
    subnet: Uuid,
    address: Option<IpAddr>,
}

pub fn status(lb: &LoadBalancer, ctx: &Ctx) -> &'static str {
    match lb.changing_until {
        Some(until) if until > ctx.now => "changing",
        _ => "running",
    }
}

fn render(world: &World, ctx: &Ctx, lb: &LoadBalancer) -> Value {
    let vips: Vec<Value> = lb
        .vip_addresses
        .iter()
        .map(|vip| {
            let version = if vip.address.is_ipv4() { 4 } else { 6 };
            json!({"version": version, "address": vip.address, "subnet": refs::subnet(world, ctx, vip.subnet)})
        })
        .collect();
    json!({
        "href": ctx.href(format!("load-balancers/{}", lb.uuid)),
        "uuid": lb.uuid,
        "name": lb.name,
        "flavor": {"slug": lb.flavor, "name": inventory::lb_flavor_name(&lb.flavor)},
        "zone": {"slug": lb.zone},
        "status": status(lb, ctx),
        "vip_addresses": vips,
        "tags": lb.tags,
        "created_at": lb.created_at.to_string(),
    })
}

async fn list(State(sim): State<Sim>, filter: TagFilter) -> Json<Vec<Value>> {
    sim.read(|world, ctx| listing(&world.load_balancers, &filter, |lb| render(world, ctx, lb)))
}

async fn show(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| {
        Ok(Json(render(
            world,
            ctx,
            lookup(&world.load_balancers, &uuid)?,
        )))
    })
}

async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: CreateLb = parse_create(&body)?;
    sim.write(|world, ctx| {
        if inventory::lb_flavor_name(&request.flavor).is_none() {
            return Err(ApiError::unknown("flavor", &request.flavor));
        }
        let zone = request.zone.unwrap_or_else(|| ZONES[0].to_owned());
        if !inventory::is_zone(&zone) {
            return Err(ApiError::unknown("zone", &zone));
        }
        let lb = LoadBalancer {
            uuid: Uuid::new_v4(),
            name: request.name,
            flavor: request.flavor,
            zone,
            vip_addresses: assign_vips(world, &request.vip_addresses)?,
            tags: request.tags,
            created_at: ctx.now,
            changing_until: Some(ctx.settled_at()),
        };
        let object = render(world, ctx, &lb);
        world.load_balancers.push(lb);
        Ok(created(object))
    })
}

/// The requested VIPs, addresses filled in from their subnets; without any request, one
/// public address, as the real cloud gives.
fn assign_vips(world: &World, requests: &[VipRequest]) -> ApiResult<Vec<Vip>> {
    let mut used = world.used_addresses();
    if requests.is_empty() {
        let address = addresses::claim_public(&mut used, "vip_addresses")?;
        return Ok(vec![Vip {
            address,
            subnet: PUBLIC_SUBNET_UUID,
        }]);
    }
    requests
        .iter()
        .map(|request| {
            let subnet = find(&world.subnets, request.subnet)
                .ok_or_else(|| ApiError::unknown("vip_addresses.subnet", request.subnet))?;
            let address =
                addresses::claim(subnet, request.address, &mut used, "vip_addresses.address")?;
            Ok(Vip {
                address,
                subnet: subnet.uuid,
            })
        })
        .collect()
}

async fn update(
    State(sim): State<Sim>,
    Path(uuid): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: NameAndTags = parse_patch(&body, CREATE_ONLY)?;
    sim.write(|world, _| {
        let lb = lookup_mut(&mut world.load_balancers, &uuid)?;
        patch.apply(&mut lb.name, &mut lb.tags);
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    sim.write(|world, _| {
        let uuid = path_uuid(&uuid)?;
        find(&world.load_balancers, uuid).ok_or_else(ApiError::not_found)?;
        let pools: Vec<Uuid> = world
            .pools
            .iter()
            .filter(|pool| pool.load_balancer == uuid)
            .map(|pool| pool.uuid)
            .collect();
        for pool in pools {
            pools::remove_pool(world, pool);
        }
        world
            .listeners
            .retain(|listener| listener.load_balancer != uuid);
        for floating_ip in &mut world.floating_ips {
            if floating_ip.load_balancer == Some(uuid) {
                floating_ip.load_balancer = None;
            }
        }
        world.load_balancers.retain(|lb| lb.uuid != uuid);
        Ok(StatusCode::NO_CONTENT)
    })
}
