//! `/v1/floating-ips`, addressed by IP (`/v1/floating-ips/5.102.150.123`). A PATCH naming a
//! load balancer or a server moves the IP there; there is no way to unassign one.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::assign;
use super::collection::{Collection, PathKey};
use super::regions;
use crate::cloudscale::api::{nullable, ApiError, ApiResult};
use crate::cloudscale::inventory::{self, ZONES};
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{find, FloatingIp, FloatingIpType, Tags, World};

pub struct FloatingIps;

impl Collection for FloatingIps {
    type Item = FloatingIp;
    type Create = CreateFloatingIp;
    type Patch = UpdateFloatingIp;

    const PATH: &'static str = "/v1/floating-ips";
    const ITEM_PATH: &'static str = "/v1/floating-ips/{ip}";
    const CREATE_ONLY: &'static [&'static str] = &["ip_version", "prefix_length", "type", "region"];

    fn items(world: &World) -> &[FloatingIp] {
        &world.floating_ips
    }

    fn items_mut(world: &mut World) -> &mut Vec<FloatingIp> {
        &mut world.floating_ips
    }

    fn render(world: &World, ctx: &Ctx, floating_ip: &FloatingIp) -> Value {
        let network = floating_ip.network;
        json!({
            "href": ctx.href(format!("floating-ips/{}", network.addr())),
            "network": network,
            "ip_version": if network.addr().is_ipv4() { 4 } else { 6 },
            "next_hop": next_hop(world, floating_ip),
            "server": refs::optional(floating_ip.server, |s| refs::server(world, ctx, s)),
            "load_balancer": refs::optional(floating_ip.load_balancer, |lb| refs::load_balancer(world, ctx, lb)),
            "type": floating_ip.kind,
            "region": floating_ip.region.as_deref().map(regions::region),
            "reverse_ptr": floating_ip.reverse_ptr,
            "tags": floating_ip.tags,
            "created_at": floating_ip.created_at.to_string(),
        })
    }

    fn build(world: &mut World, ctx: &Ctx, request: CreateFloatingIp) -> ApiResult<FloatingIp> {
        target(world, request.load_balancer, request.server)?;
        Ok(FloatingIp {
            network: allocate(world, &request)?,
            region: region(&request)?,
            kind: request.kind,
            load_balancer: request.load_balancer,
            server: request.server,
            reverse_ptr: request.reverse_ptr,
            tags: request.tags,
            created_at: ctx.now,
        })
    }

    fn update(world: &mut World, _: &Ctx, index: usize, patch: UpdateFloatingIp) -> ApiResult<()> {
        target(world, patch.load_balancer, patch.server)?;
        let floating_ip = &mut world.floating_ips[index];
        let sets_reverse_ptr = matches!(patch.reverse_ptr, Some(Some(_)));
        if sets_reverse_ptr && floating_ip.network.prefix_len() == 56 {
            return Err(network_reverse_ptr());
        }
        if patch.load_balancer.is_some() || patch.server.is_some() {
            floating_ip.load_balancer = patch.load_balancer;
            floating_ip.server = patch.server;
        }
        assign(&mut floating_ip.reverse_ptr, patch.reverse_ptr);
        assign(&mut floating_ip.tags, patch.tags);
        Ok(())
    }
}

/// Paths name a floating IP by its address.
impl PathKey for FloatingIp {
    type Key = IpAddr;
    fn path_key(&self) -> IpAddr {
        self.network.addr()
    }
}

#[derive(Debug, Deserialize)]
pub struct CreateFloatingIp {
    ip_version: u8,
    prefix_length: Option<u8>,
    #[serde(rename = "type", default = "regional")]
    kind: FloatingIpType,
    region: Option<String>,
    load_balancer: Option<Uuid>,
    server: Option<Uuid>,
    reverse_ptr: Option<String>,
    #[serde(default)]
    tags: Tags,
}

fn regional() -> FloatingIpType {
    FloatingIpType::Regional
}

#[derive(Debug, Deserialize)]
pub struct UpdateFloatingIp {
    load_balancer: Option<Uuid>,
    server: Option<Uuid>,
    #[serde(default, deserialize_with = "nullable")]
    reverse_ptr: Option<Option<String>>,
    tags: Option<Tags>,
}

/// Where a floating IP goes: exactly one of a load balancer and a server, each existing.
fn target(world: &World, load_balancer: Option<Uuid>, server: Option<Uuid>) -> ApiResult<()> {
    match (load_balancer, server) {
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "A floating IP is assigned to a server or a load balancer, not both.",
        )),
        (Some(lb), None) if find(&world.load_balancers, lb).is_none() => {
            Err(ApiError::unknown("load_balancer", lb))
        }
        (None, Some(server)) if find(&world.servers, server).is_none() => {
            Err(ApiError::unknown("server", server))
        }
        _ => Ok(()),
    }
}

/// The address traffic to the floating IP is routed to, of the same IP version.
fn next_hop(world: &World, floating_ip: &FloatingIp) -> Option<IpAddr> {
    let same_version = |address: &IpAddr| address.is_ipv4() == floating_ip.network.addr().is_ipv4();
    if let Some(lb) = floating_ip
        .load_balancer
        .and_then(|lb| find(&world.load_balancers, lb))
    {
        return lb
            .vip_addresses
            .iter()
            .map(|vip| vip.address)
            .find(same_version);
    }
    let server = floating_ip
        .server
        .and_then(|server| find(&world.servers, server))?;
    let public = server
        .interfaces
        .iter()
        .find(|interface| interface.network.is_none())?;
    public
        .addresses
        .iter()
        .map(|a| a.address)
        .find(same_version)
}

/// The floating network a create request asks for, validated like the real API: a single
/// address unless an IPv6 `/56` network is asked for.
fn allocate(world: &World, request: &CreateFloatingIp) -> ApiResult<IpNet> {
    let prefix_length = prefix_length(request.ip_version, request.prefix_length)?;
    if prefix_length == 56 && request.reverse_ptr.is_some() {
        return Err(network_reverse_ptr());
    }
    let taken: Vec<IpNet> = world.floating_ips.iter().map(|f| f.network).collect();
    inventory::free_floating_network(prefix_length, &taken)
        .ok_or_else(|| ApiError::bad_request("No floating IP left."))
}

fn prefix_length(ip_version: u8, requested: Option<u8>) -> ApiResult<u8> {
    match (ip_version, requested) {
        (4, None | Some(32)) => Ok(32),
        (6, None | Some(128)) => Ok(128),
        (6, Some(56)) => Ok(56),
        (4 | 6, Some(other)) => Err(ApiError::bad_request(format!(
            "prefix_length: \"{other}\" is not a valid choice for IPv{ip_version}."
        ))),
        (other, _) => Err(ApiError::bad_request(format!(
            "ip_version: \"{other}\" is not a valid choice."
        ))),
    }
}

/// Reverse DNS is per address, so a floating network cannot have one.
fn network_reverse_ptr() -> ApiError {
    ApiError::bad_request("reverse_ptr: is only allowed for single addresses.")
}

fn region(request: &CreateFloatingIp) -> ApiResult<Option<String>> {
    match (request.kind, &request.region) {
        (FloatingIpType::Global, None) => Ok(None),
        (FloatingIpType::Global, Some(_)) => Err(ApiError::bad_request(
            "region: global floating IPs have no region.",
        )),
        (FloatingIpType::Regional, None) => Ok(Some(inventory::region_of(ZONES[0]).to_owned())),
        (FloatingIpType::Regional, Some(slug)) if inventory::is_region(slug) => {
            Ok(Some(slug.clone()))
        }
        (FloatingIpType::Regional, Some(slug)) => Err(ApiError::unknown("region", slug)),
    }
}
