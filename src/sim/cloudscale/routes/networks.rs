//! `/v1/networks`: private networks; by default a new one gets an IPv4 subnet, like the real
//! API. Deleting a network deletes its subnets.

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
    created, lookup, lookup_mut, parse_create, parse_patch, ApiError, ApiResult,
};
use crate::sim::cloudscale::filter::TagFilter;
use crate::sim::cloudscale::inventory::{self, ZONES};
use crate::sim::cloudscale::state::{Ctx, Sim};
use crate::sim::cloudscale::world::{Network, Subnet, Tags, World};

const CREATE_ONLY: &[&str] = &["zone", "auto_create_ipv4_subnet"];
/// The subnet the real API creates in a new network unless told not to.
const AUTO_SUBNET_CIDR: &str = "172.16.0.0/24";

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/networks", get(list).post(create))
        .route(
            "/v1/networks/{uuid}",
            get(show).patch(update).delete(remove),
        )
}

#[derive(Debug, Deserialize)]
struct CreateNetwork {
    name: String,
    zone: Option<String>,
    #[serde(default = "default_mtu")]
    mtu: u32,
    #[serde(default = "yes")]
    auto_create_ipv4_subnet: bool,
    #[serde(default)]
    tags: Tags,
}

fn default_mtu() -> u32 {
    9000
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
struct UpdateNetwork {
    name: Option<String>,
    mtu: Option<u32>,
    tags: Option<Tags>,
}

fn render(world: &World, ctx: &Ctx, network: &Network) -> Value {
    let subnets: Vec<Value> = world
        .subnets
        .iter()
        .filter(|subnet| subnet.network == network.uuid)
        .map(|subnet| json!({"href": ctx.href(format!("subnets/{}", subnet.uuid)), "uuid": subnet.uuid, "cidr": subnet.cidr}))
        .collect();
    json!({
        "href": ctx.href(format!("networks/{}", network.uuid)),
        "uuid": network.uuid,
        "name": network.name,
        "zone": {"slug": network.zone},
        "mtu": network.mtu,
        "subnets": subnets,
        "tags": network.tags,
        "created_at": network.created_at.to_string(),
    })
}

async fn list(State(sim): State<Sim>, filter: TagFilter) -> Json<Vec<Value>> {
    sim.read(|world, ctx| listing(&world.networks, &filter, |n| render(world, ctx, n)))
}

async fn show(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, ctx| Ok(Json(render(world, ctx, lookup(&world.networks, &uuid)?))))
}

async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: CreateNetwork = parse_create(&body)?;
    sim.write(|world, ctx| {
        let zone = request.zone.unwrap_or_else(|| ZONES[0].to_owned());
        if !inventory::is_zone(&zone) {
            return Err(ApiError::unknown("zone", &zone));
        }
        let network = Network {
            uuid: Uuid::new_v4(),
            name: request.name,
            zone,
            mtu: request.mtu,
            tags: request.tags,
            created_at: ctx.now,
        };
        if request.auto_create_ipv4_subnet {
            world.subnets.push(Subnet {
                uuid: Uuid::new_v4(),
                network: network.uuid,
                cidr: AUTO_SUBNET_CIDR.parse().expect("constant CIDR"),
                gateway_address: None,
                dns_servers: vec![],
                tags: Tags::new(),
                created_at: ctx.now,
            });
        }
        let object = render(world, ctx, &network);
        world.networks.push(network);
        Ok(created(object))
    })
}

async fn update(
    State(sim): State<Sim>,
    Path(uuid): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: UpdateNetwork = parse_patch(&body, CREATE_ONLY)?;
    sim.write(|world, _| {
        let network = lookup_mut(&mut world.networks, &uuid)?;
        if let Some(name) = patch.name {
            network.name = name;
        }
        if let Some(mtu) = patch.mtu {
            network.mtu = mtu;
        }
        if let Some(tags) = patch.tags {
            network.tags = tags;
        }
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    sim.write(|world, _| {
        let uuid = lookup(&world.networks, &uuid)?.uuid;
        world.subnets.retain(|subnet| subnet.network != uuid);
        world.networks.retain(|network| network.uuid != uuid);
        Ok(StatusCode::NO_CONTENT)
    })
}
