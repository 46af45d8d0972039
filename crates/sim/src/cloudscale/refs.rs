//! Nested references as responses carry them: `{"href", "uuid", "name"}` (subnets carry `cidr`
//! instead of `name`). A reference to an object that no longer exists renders as null.

use serde_json::{json, Value};
use uuid::Uuid;

use super::inventory::public_subnet_cidr;
use super::state::Ctx;
use super::world::{find, World};

pub fn load_balancer(world: &World, ctx: &Ctx, uuid: Uuid) -> Value {
    world.load_balancer(uuid).map_or(Value::Null, |lb| {
        json!({"href": ctx.href(format!("load-balancers/{uuid}")), "uuid": uuid, "name": lb.name})
    })
}

pub fn pool(world: &World, ctx: &Ctx, uuid: Uuid) -> Value {
    world.pool(uuid).map_or(Value::Null, |pool| {
        json!({"href": ctx.href(format!("load-balancers/pools/{uuid}")), "uuid": uuid, "name": pool.name})
    })
}

pub fn server(world: &World, ctx: &Ctx, uuid: Uuid) -> Value {
    find(&world.servers, uuid).map_or(Value::Null, |server| {
        json!({"href": ctx.href(format!("servers/{uuid}")), "uuid": uuid, "name": server.name})
    })
}

/// A server as a server group and `anti_affinity_with` list it: `{href, uuid}`, no name.
pub fn server_stub(ctx: &Ctx, uuid: Uuid) -> Value {
    json!({"href": ctx.href(format!("servers/{uuid}")), "uuid": uuid})
}

pub fn server_group(world: &World, ctx: &Ctx, uuid: Uuid) -> Value {
    find(&world.server_groups, uuid).map_or(Value::Null, |group| {
        json!({"href": ctx.href(format!("server-groups/{uuid}")), "uuid": uuid, "name": group.name})
    })
}

pub fn network(world: &World, ctx: &Ctx, uuid: Uuid) -> Value {
    find(&world.networks, uuid).map_or(Value::Null, |network| {
        json!({"href": ctx.href(format!("networks/{uuid}")), "uuid": uuid, "name": network.name})
    })
}

/// Also resolves the provider's public subnets, which `/subnets` does not list.
pub fn subnet(world: &World, ctx: &Ctx, uuid: Uuid) -> Value {
    let cidr = public_subnet_cidr(uuid).or_else(|| find(&world.subnets, uuid).map(|s| s.cidr));
    cidr.map_or(
        Value::Null,
        |cidr| json!({"href": ctx.href(format!("subnets/{uuid}")), "uuid": uuid, "cidr": cidr}),
    )
}

pub fn optional(uuid: Option<Uuid>, render: impl FnOnce(Uuid) -> Value) -> Value {
    uuid.map_or(Value::Null, render)
}
