//! `/v1/load-balancers`: creation assigns VIPs and starts in `changing`; deletion takes every
//! sub-object with it and unassigns the floating IPs.

use std::net::IpAddr;

use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::collection::Collection;
use super::{addresses, pools, NameAndTags};
use crate::cloudscale::address_book::UsedAddresses;
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::inventory::{self, ZONES};
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{find, LoadBalancer, Tags, Vip, World};

pub struct LoadBalancers;

impl Collection for LoadBalancers {
    type Item = LoadBalancer;
    type Create = CreateLb;
    type Patch = NameAndTags;

    const PATH: &'static str = "/v1/load-balancers";
    const ITEM_PATH: &'static str = "/v1/load-balancers/{uuid}";
    const CREATE_ONLY: &'static [&'static str] = &["flavor", "zone", "vip_addresses"];

    fn items(world: &World) -> &[LoadBalancer] {
        &world.load_balancers
    }

    fn items_mut(world: &mut World) -> &mut Vec<LoadBalancer> {
        &mut world.load_balancers
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

    fn build(world: &mut World, ctx: &Ctx, request: CreateLb) -> ApiResult<LoadBalancer> {
        if inventory::lb_flavor_name(&request.flavor).is_none() {
            return Err(ApiError::unknown("flavor", &request.flavor));
        }
        let zone = request.zone.unwrap_or_else(|| ZONES[0].to_owned());
        if !inventory::is_zone(&zone) {
            return Err(ApiError::unknown("zone", &zone));
        }
        Ok(LoadBalancer {
            uuid: Uuid::new_v4(),
            name: request.name,
            flavor: request.flavor,
            zone,
            vip_addresses: claim_vips(world, &request.vip_addresses)?,
            tags: request.tags,
            created_at: ctx.now,
            changing_until: Some(ctx.settled_at()),
        })
    }

    fn update(world: &mut World, _: &Ctx, index: usize, patch: NameAndTags) -> ApiResult<()> {
        let lb = &mut world.load_balancers[index];
        patch.apply(&mut lb.name, &mut lb.tags);
        Ok(())
    }

    /// Takes every sub-object with it and unassigns its floating IPs.
    fn removed(world: &mut World, _: &Ctx, lb: &LoadBalancer) {
        world.forget_used_addresses();
        let pools: Vec<Uuid> = world
            .pools
            .iter()
            .filter(|pool| pool.load_balancer == lb.uuid)
            .map(|pool| pool.uuid)
            .collect();
        for pool in pools {
            pools::remove_pool(world, pool);
        }
        world
            .listeners
            .retain(|listener| listener.load_balancer != lb.uuid);
        for floating_ip in &mut world.floating_ips {
            if floating_ip.load_balancer == Some(lb.uuid) {
                floating_ip.load_balancer = None;
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct CreateLb {
    name: String,
    flavor: String,
    zone: Option<String>,
    #[serde(default)]
    vip_addresses: Vec<VipRequest>,
    #[serde(default)]
    tags: Tags,
}

#[derive(Debug, Deserialize)]
pub struct VipRequest {
    subnet: Uuid,
    address: Option<IpAddr>,
}

pub fn status(lb: &LoadBalancer, ctx: &Ctx) -> &'static str {
    match lb.changing_until {
        Some(until) if until > ctx.now => "changing",
        _ => "running",
    }
}

/// [`assign_vips`] with the world's taken addresses, kept for the next create when it succeeds
/// (a refused create may have claimed some: they are counted afresh next time).
fn claim_vips(world: &mut World, requests: &[VipRequest]) -> ApiResult<Vec<Vip>> {
    let mut used = world.take_used_addresses();
    let vips = assign_vips(world, requests, &mut used)?;
    world.keep_used_addresses(used);
    Ok(vips)
}

/// The requested VIPs, addresses filled in from their subnets; without any request, one
/// public address, as the real cloud gives.
fn assign_vips(
    world: &World,
    requests: &[VipRequest],
    used: &mut UsedAddresses,
) -> ApiResult<Vec<Vip>> {
    if requests.is_empty() {
        let (address, subnet) = addresses::claim_public(used, "vip_addresses")?;
        return Ok(vec![Vip { address, subnet }]);
    }
    requests
        .iter()
        .map(|request| {
            let subnet = find(&world.subnets, request.subnet)
                .ok_or_else(|| ApiError::unknown("vip_addresses.subnet", request.subnet))?;
            let address = addresses::claim(subnet, request.address, used, "vip_addresses.address")?;
            Ok(Vip {
                address,
                subnet: subnet.uuid,
            })
        })
        .collect()
}
