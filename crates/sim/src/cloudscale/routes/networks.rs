//! `/v1/networks`: private networks; by default a new one gets an IPv4 subnet, like the real
//! API. Deleting a network deletes its subnets.

use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::assign;
use super::collection::Collection;
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::inventory::{self, ZONES};
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{Network, Subnet, Tags, World};

/// The subnet the real API creates in a new network unless told not to.
const AUTO_SUBNET_CIDR: &str = "172.16.0.0/24";

pub struct Networks;

impl Collection for Networks {
    type Item = Network;
    type Create = CreateNetwork;
    type Patch = UpdateNetwork;

    const PATH: &'static str = "/v1/networks";
    const ITEM_PATH: &'static str = "/v1/networks/{uuid}";
    const CREATE_ONLY: &'static [&'static str] = &["zone", "auto_create_ipv4_subnet"];

    fn items(world: &World) -> &[Network] {
        &world.networks
    }

    fn items_mut(world: &mut World) -> &mut Vec<Network> {
        &mut world.networks
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

    fn build(world: &mut World, ctx: &Ctx, request: CreateNetwork) -> ApiResult<Network> {
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
        Ok(network)
    }

    fn update(world: &mut World, _: &Ctx, index: usize, patch: UpdateNetwork) -> ApiResult<()> {
        let network = &mut world.networks[index];
        assign(&mut network.name, patch.name);
        assign(&mut network.mtu, patch.mtu);
        assign(&mut network.tags, patch.tags);
        Ok(())
    }

    fn removed(world: &mut World, _: &Ctx, network: &Network) {
        world
            .subnets
            .retain(|subnet| subnet.network != network.uuid);
    }
}

#[derive(Debug, Deserialize)]
pub struct CreateNetwork {
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
pub struct UpdateNetwork {
    name: Option<String>,
    mtu: Option<u32>,
    tags: Option<Tags>,
}
