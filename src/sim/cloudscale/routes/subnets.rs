//! `/v1/subnets`: the subnets of the account's private networks (the provider's public subnet
//! is not listed, as on the real cloud).

use std::net::IpAddr;

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
    created, lookup, lookup_mut, nullable, parse_create, parse_patch, ApiError, ApiResult,
};
use crate::sim::cloudscale::filter::TagFilter;
use crate::sim::cloudscale::refs;
use crate::sim::cloudscale::state::{Ctx, Sim};
use crate::sim::cloudscale::world::{find, Subnet, Tags, World};

const CREATE_ONLY: &[&str] = &["cidr", "network"];

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/subnets", get(list).post(create))
        .route("/v1/subnets/{uuid}", get(show).patch(update).delete(remove))
}

#[derive(Debug, Deserialize)]
struct CreateSubnet {
    cidr: IpNet,
    network: Uuid,
    gateway_address: Option<IpAddr>,
    #[serde(default)]
    dns_servers: Vec<IpAddr>,
    #[serde(default)]
    tags: Tags,
}

#[derive(Debug, Deserialize)]
struct UpdateSubnet {
    #[serde(default, deserialize_with = "nullable")]
    gateway_address: Option<Option<IpAddr>>,
    dns_servers: Option<Vec<IpAddr>>,
    tags: Option<Tags>,
}

fn render(world: &World, ctx: &Ctx, subnet: &Subnet) -> Value {
    json!({
        "href": ctx.href(format!("subnets/{}", subnet.uuid)),
        "uuid": subnet.uuid,
        "cidr": subnet.cidr,
        "network": refs::network(world, ctx, subnet.network),
        "gateway_address": subnet.gateway_address,
        "dns_servers": subnet.dns_servers,
        "tags": subnet.tags,
        "created_at": subnet.created_at.to_string(),
    })
}

fn check_gateway(cidr: IpNet, gateway: Option<IpAddr>) -> ApiResult<()> {
    match gateway {
        Some(gateway) if !cidr.contains(&gateway) => Err(ApiError::bad_request(format!(
            "gateway_address: {gateway} is not in {cidr}."
        ))),
        _ => Ok(()),
    }
}

async fn list(State(sim): State<Sim>, filter: TagFilter) -> Json<Vec<Value>> {
    sim.read(|world, ctx| listing(&world.subnets, &filter, |s| render(world, ctx, s)))
}

async fn show(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| Ok(Json(render(world, ctx, lookup(&world.subnets, &uuid)?))))
}

async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: CreateSubnet = parse_create(&body)?;
    sim.write(|world, ctx| {
        if find(&world.networks, request.network).is_none() {
            return Err(ApiError::unknown("network", request.network));
        }
        check_gateway(request.cidr, request.gateway_address)?;
        let subnet = Subnet {
            uuid: Uuid::new_v4(),
            network: request.network,
            cidr: request.cidr.trunc(),
            gateway_address: request.gateway_address,
            dns_servers: request.dns_servers,
            tags: request.tags,
            created_at: ctx.now,
        };
        let object = render(world, ctx, &subnet);
        world.subnets.push(subnet);
        Ok(created(object))
    })
}

async fn update(
    State(sim): State<Sim>,
    Path(uuid): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: UpdateSubnet = parse_patch(&body, CREATE_ONLY)?;
    sim.write(|world, _| {
        let subnet = lookup_mut(&mut world.subnets, &uuid)?;
        if let Some(gateway) = patch.gateway_address {
            check_gateway(subnet.cidr, gateway)?;
            subnet.gateway_address = gateway;
        }
        if let Some(dns_servers) = patch.dns_servers {
            subnet.dns_servers = dns_servers;
        }
        if let Some(tags) = patch.tags {
            subnet.tags = tags;
        }
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    sim.write(|world, _| {
        let uuid = lookup(&world.subnets, &uuid)?.uuid;
        world.subnets.retain(|subnet| subnet.uuid != uuid);
        Ok(StatusCode::NO_CONTENT)
    })
}
