//! `/v1/subnets`: the subnets of the account's private networks (the provider's public subnet
//! is not listed, as on the real cloud).

use std::net::IpAddr;

use ipnet::IpNet;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::assign;
use super::collection::Collection;
use crate::cloudscale::api::{nullable, ApiError, ApiResult};
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{find, Subnet, Tags, World};

pub struct Subnets;

impl Collection for Subnets {
    type Item = Subnet;
    type Create = CreateSubnet;
    type Patch = UpdateSubnet;

    const PATH: &'static str = "/v1/subnets";
    const ITEM_PATH: &'static str = "/v1/subnets/{uuid}";
    const CREATE_ONLY: &'static [&'static str] = &["cidr", "network"];

    fn items(world: &World) -> &[Subnet] {
        &world.subnets
    }

    fn items_mut(world: &mut World) -> &mut Vec<Subnet> {
        &mut world.subnets
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

    fn build(world: &mut World, ctx: &Ctx, request: CreateSubnet) -> ApiResult<Subnet> {
        if find(&world.networks, request.network).is_none() {
            return Err(ApiError::unknown("network", request.network));
        }
        check_gateway(request.cidr, request.gateway_address)?;
        Ok(Subnet {
            uuid: Uuid::new_v4(),
            network: request.network,
            cidr: request.cidr.trunc(),
            gateway_address: request.gateway_address,
            dns_servers: request.dns_servers,
            tags: request.tags,
            created_at: ctx.now,
        })
    }

    fn update(world: &mut World, _: &Ctx, index: usize, patch: UpdateSubnet) -> ApiResult<()> {
        let subnet = &mut world.subnets[index];
        if let Some(gateway) = patch.gateway_address {
            check_gateway(subnet.cidr, gateway)?;
        }
        assign(&mut subnet.gateway_address, patch.gateway_address);
        assign(&mut subnet.dns_servers, patch.dns_servers);
        assign(&mut subnet.tags, patch.tags);
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
pub struct CreateSubnet {
    cidr: IpNet,
    network: Uuid,
    gateway_address: Option<IpAddr>,
    #[serde(default)]
    dns_servers: Vec<IpAddr>,
    #[serde(default)]
    tags: Tags,
}

#[derive(Debug, Deserialize)]
pub struct UpdateSubnet {
    #[serde(default, deserialize_with = "nullable")]
    gateway_address: Option<Option<IpAddr>>,
    dns_servers: Option<Vec<IpAddr>>,
    tags: Option<Tags>,
}

fn check_gateway(cidr: IpNet, gateway: Option<IpAddr>) -> ApiResult<()> {
    match gateway {
        Some(gateway) if !cidr.contains(&gateway) => Err(ApiError::bad_request(format!(
            "gateway_address: {gateway} is not in {cidr}."
        ))),
        _ => Ok(()),
    }
}
