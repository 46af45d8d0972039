//! `/v1/load-balancers/listeners`: a listener belongs to a load balancer and usually points at
//! one of its pools; only its name, allowed CIDRs, timeouts and tags change in place. A load
//! balancer takes each protocol and port once.

use std::num::NonZeroU16;

use ipnet::IpNet;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::assign;
use super::collection::Collection;
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{find, Listener, ListenerProtocol, Tags, World};

pub struct Listeners;

impl Collection for Listeners {
    type Item = Listener;
    type Create = CreateListener;
    type Patch = UpdateListener;

    const PATH: &'static str = "/v1/load-balancers/listeners";
    const ITEM_PATH: &'static str = "/v1/load-balancers/listeners/{uuid}";
    /// The API docs name only `pool`; the others cannot change in place either (impact.md: a
    /// protocol or port change recreates the listener), so they are refused like `pool`.
    const CREATE_ONLY: &'static [&'static str] =
        &["pool", "load_balancer", "protocol", "protocol_port"];

    fn items(world: &World) -> &[Listener] {
        &world.listeners
    }

    fn items_mut(world: &mut World) -> &mut Vec<Listener> {
        &mut world.listeners
    }

    fn pool_of(listener: &Listener) -> Option<Uuid> {
        listener.pool
    }

    fn render(world: &World, ctx: &Ctx, listener: &Listener) -> Value {
        json!({
            "href": ctx.href(format!("load-balancers/listeners/{}", listener.uuid)),
            "uuid": listener.uuid,
            "name": listener.name,
            "pool": refs::optional(listener.pool, |pool| refs::pool(world, ctx, pool)),
            "load_balancer": refs::load_balancer(world, ctx, listener.load_balancer),
            "protocol": listener.protocol,
            "protocol_port": listener.protocol_port,
            "allowed_cidrs": listener.allowed_cidrs,
            "timeout_client_data_ms": listener.timeout_client_data_ms,
            "timeout_member_connect_ms": listener.timeout_member_connect_ms,
            "timeout_member_data_ms": listener.timeout_member_data_ms,
            "tags": listener.tags,
            "created_at": listener.created_at.to_string(),
        })
    }

    fn build(world: &mut World, ctx: &Ctx, request: CreateListener) -> ApiResult<Listener> {
        let load_balancer = owning_lb(world, &request)?;
        port_is_free(
            world,
            load_balancer,
            request.protocol,
            request.protocol_port.get(),
        )?;
        world.mark_changing(load_balancer, ctx.settled_at());
        Ok(Listener {
            uuid: Uuid::new_v4(),
            load_balancer,
            pool: request.pool,
            name: request.name,
            protocol: request.protocol,
            protocol_port: request.protocol_port.get(),
            allowed_cidrs: request.allowed_cidrs,
            timeout_client_data_ms: request.timeout_client_data_ms,
            timeout_member_connect_ms: request.timeout_member_connect_ms,
            timeout_member_data_ms: request.timeout_member_data_ms,
            tags: request.tags,
            created_at: ctx.now,
        })
    }

    fn update(world: &mut World, ctx: &Ctx, index: usize, patch: UpdateListener) -> ApiResult<()> {
        let listener = &mut world.listeners[index];
        patch.apply(listener);
        let lb = listener.load_balancer;
        world.mark_changing(lb, ctx.settled_at());
        Ok(())
    }

    fn removed(world: &mut World, ctx: &Ctx, listener: &Listener) {
        world.mark_changing(listener.load_balancer, ctx.settled_at());
    }
}

#[derive(Debug, Deserialize)]
pub struct CreateListener {
    name: String,
    pool: Option<Uuid>,
    load_balancer: Option<Uuid>,
    #[serde(default = "tcp")]
    protocol: ListenerProtocol,
    protocol_port: NonZeroU16,
    #[serde(default)]
    allowed_cidrs: Vec<IpNet>,
    #[serde(default = "long_timeout")]
    timeout_client_data_ms: u32,
    #[serde(default = "connect_timeout")]
    timeout_member_connect_ms: u32,
    #[serde(default = "long_timeout")]
    timeout_member_data_ms: u32,
    #[serde(default)]
    tags: Tags,
}

fn tcp() -> ListenerProtocol {
    ListenerProtocol::Tcp
}

fn long_timeout() -> u32 {
    50_000
}

fn connect_timeout() -> u32 {
    5_000
}

#[derive(Debug, Deserialize)]
pub struct UpdateListener {
    name: Option<String>,
    allowed_cidrs: Option<Vec<IpNet>>,
    timeout_client_data_ms: Option<u32>,
    timeout_member_connect_ms: Option<u32>,
    timeout_member_data_ms: Option<u32>,
    tags: Option<Tags>,
}

impl UpdateListener {
    fn apply(self, listener: &mut Listener) {
        assign(&mut listener.name, self.name);
        assign(&mut listener.allowed_cidrs, self.allowed_cidrs);
        assign(
            &mut listener.timeout_client_data_ms,
            self.timeout_client_data_ms,
        );
        assign(
            &mut listener.timeout_member_connect_ms,
            self.timeout_member_connect_ms,
        );
        assign(
            &mut listener.timeout_member_data_ms,
            self.timeout_member_data_ms,
        );
        assign(&mut listener.tags, self.tags);
    }
}

/// The load balancer a new listener belongs to: its pool's, or the one named.
fn owning_lb(world: &World, request: &CreateListener) -> ApiResult<Uuid> {
    let pool_lb = match request.pool {
        Some(pool) => Some(
            world
                .pool_lb(pool)
                .ok_or_else(|| ApiError::unknown("pool", pool))?,
        ),
        None => None,
    };
    match (pool_lb, request.load_balancer) {
        (Some(pool_lb), Some(named)) if pool_lb != named => Err(ApiError::bad_request(
            "load_balancer: the pool belongs to another load balancer.",
        )),
        (Some(lb), _) => Ok(lb),
        (None, Some(named)) => find(&world.load_balancers, named)
            .map(|lb| lb.uuid)
            .ok_or_else(|| ApiError::unknown("load_balancer", named)),
        (None, None) => Err(ApiError::bad_request("pool: This field is required.")),
    }
}

/// A second listener on a port the load balancer already listens on is refused. The real
/// API's answer is not documented, but such a listener could not work (one VIP cannot take a
/// port twice) and the CCM never asks for one: it deletes a listener before it creates
/// another on the same port. Per protocol, since TCP and UDP ports are apart: the CCM's DNS
/// example serves `tcp/53` and `udp/53` from one load balancer.
fn port_is_free(world: &World, lb: Uuid, protocol: ListenerProtocol, port: u16) -> ApiResult<()> {
    let taken = world.listeners.iter().any(|listener| {
        listener.load_balancer == lb
            && listener.protocol == protocol
            && listener.protocol_port == port
    });
    if !taken {
        return Ok(());
    }
    let protocol = match protocol {
        ListenerProtocol::Tcp => "tcp",
        ListenerProtocol::Udp => "udp",
    };
    Err(ApiError::bad_request(format!(
        "protocol_port: the load balancer already has a {protocol} listener on port {port}."
    )))
}
