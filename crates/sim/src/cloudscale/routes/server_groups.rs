//! `/v1/server-groups`: anti-affinity groups of servers in one zone. A server joins groups
//! when it is created (`server_groups` in the request) and shows them, with the servers it
//! is kept apart from (`anti_affinity_with`). Deleting a group takes it off its servers.

use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::collection::Collection;
use super::NameAndTags;
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::inventory::{self, ZONES};
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{find, Server, ServerGroup, Tags, World};

/// The one group type the API has.
const ANTI_AFFINITY: &str = "anti-affinity";

pub struct ServerGroups;

impl Collection for ServerGroups {
    type Item = ServerGroup;
    type Create = CreateGroup;
    type Patch = NameAndTags;

    const PATH: &'static str = "/v1/server-groups";
    const ITEM_PATH: &'static str = "/v1/server-groups/{uuid}";
    const CREATE_ONLY: &'static [&'static str] = &["type", "zone"];

    fn items(world: &World) -> &[ServerGroup] {
        &world.server_groups
    }

    fn items_mut(world: &mut World) -> &mut Vec<ServerGroup> {
        &mut world.server_groups
    }

    fn render(world: &World, ctx: &Ctx, group: &ServerGroup) -> Value {
        let servers: Vec<Value> = members(world, group.uuid)
            .map(|server| refs::server_stub(ctx, server.uuid))
            .collect();
        json!({
            "href": ctx.href(format!("server-groups/{}", group.uuid)),
            "uuid": group.uuid,
            "name": group.name,
            "type": ANTI_AFFINITY,
            "servers": servers,
            "zone": {"slug": group.zone},
            "tags": group.tags,
            "created_at": group.created_at.to_string(),
        })
    }

    fn build(_: &mut World, ctx: &Ctx, request: CreateGroup) -> ApiResult<ServerGroup> {
        if request.kind != ANTI_AFFINITY {
            return Err(ApiError::bad_request(format!(
                "type: \"{}\" is not a valid choice.",
                request.kind
            )));
        }
        let zone = request.zone.unwrap_or_else(|| ZONES[0].to_owned());
        if !inventory::is_zone(&zone) {
            return Err(ApiError::unknown("zone", &zone));
        }
        Ok(ServerGroup {
            uuid: Uuid::new_v4(),
            name: request.name,
            zone,
            tags: request.tags,
            created_at: ctx.now,
        })
    }

    fn update(world: &mut World, _: &Ctx, index: usize, patch: NameAndTags) -> ApiResult<()> {
        let group = &mut world.server_groups[index];
        patch.apply(&mut group.name, &mut group.tags);
        Ok(())
    }

    fn removed(world: &mut World, _: &Ctx, group: &ServerGroup) {
        for server in &mut world.servers {
            server.server_groups.retain(|uuid| *uuid != group.uuid);
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct CreateGroup {
    name: String,
    #[serde(rename = "type", default = "anti_affinity")]
    kind: String,
    zone: Option<String>,
    #[serde(default)]
    tags: Tags,
}

fn anti_affinity() -> String {
    ANTI_AFFINITY.to_owned()
}

fn members(world: &World, group: Uuid) -> impl Iterator<Item = &Server> {
    world
        .servers
        .iter()
        .filter(move |server| server.server_groups.contains(&group))
}

/// The groups a new server in `zone` asks to join: each must exist, in the same zone.
pub fn joined(world: &World, zone: &str, requested: &[Uuid]) -> ApiResult<Vec<Uuid>> {
    requested
        .iter()
        .map(|&uuid| match find(&world.server_groups, uuid) {
            Some(group) if group.zone == zone => Ok(uuid),
            Some(group) => Err(ApiError::bad_request(format!(
                "server_groups: {} is in zone {}, not {zone}.",
                group.name, group.zone
            ))),
            None => Err(ApiError::unknown("server_groups", uuid)),
        })
        .collect()
}

/// A server's groups as `{href, uuid, name}`, and the servers they keep it apart from.
pub fn of_server(world: &World, ctx: &Ctx, server: &Server) -> (Vec<Value>, Vec<Value>) {
    let groups: Vec<Uuid> = server
        .server_groups
        .iter()
        .copied()
        .filter(|&uuid| find(&world.server_groups, uuid).is_some())
        .collect();
    let stubs = groups
        .iter()
        .map(|&uuid| refs::server_group(world, ctx, uuid))
        .collect();
    let apart = world
        .servers
        .iter()
        .filter(|other| other.uuid != server.uuid)
        .filter(|other| groups.iter().any(|g| other.server_groups.contains(g)))
        .map(|other| refs::server_stub(ctx, other.uuid))
        .collect();
    (stubs, apart)
}
