//! `/bmc/v1/servers`: list (`?tag=`), show, create (200 as the spec has it, powered on at once with a public and a
//! private address), delete, and the power actions — enough for tests to make a node's server
//! gone or shut down. An unknown or deleted id is **403**, as the real API answers for a
//! deleted server (research §5, CCM commit d84a2c5).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_tag_format, tag_refs, TagAssignmentRequest};
use crate::phoenixnap::api::{parse_body, ApiError, ApiQuery, ApiResult, Validation};
use crate::phoenixnap::filter::{matches_all, tag_filters};
use crate::phoenixnap::ids::new_id;
use crate::phoenixnap::inventory::new_server;
use crate::phoenixnap::render;
use crate::phoenixnap::state::Sim;
use crate::phoenixnap::validate::{is_hostname, is_location, LOCATIONS};
use crate::phoenixnap::world::{Server, World};

pub async fn list(
    State(sim): State<Sim>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Json<Vec<Value>> {
    let filters = tag_filters(&query);
    Json(sim.read(|world, _| {
        world
            .servers
            .iter()
            .filter(|s| matches_all(world, &s.tags, &filters))
            .map(|s| render::server(world, s))
            .collect()
    }))
}

pub async fn show(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, _| Ok(Json(render::server(world, find(world, &id)?))))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerCreate {
    hostname: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    os: Option<String>,
    #[serde(rename = "type")]
    server_type: String,
    location: String,
    #[serde(default)]
    tags: Vec<TagAssignmentRequest>,
}

pub async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: ServerCreate = parse_body(&body)?;
    let mut v = Validation::default();
    v.check(is_hostname(&request.hostname), || {
        "hostname must match ^(?=.*[a-zA-Z])([a-zA-Z0-9().-])+$".into()
    });
    v.check(!request.server_type.trim().is_empty(), || {
        "type must not be empty".into()
    });
    v.check(is_location(&request.location), || {
        format!("location must be one of {}", LOCATIONS.join(", "))
    });
    check_tag_format(&mut v, "tags", &request.tags);
    v.finish()?;
    sim.write(|world, ctx| {
        let tags = tag_refs(world, &request.tags)?;
        let mut server = new_server(
            world,
            new_id(),
            &request.hostname,
            &request.server_type,
            &request.location,
            ctx.now,
        );
        server.description = request.description.clone();
        if let Some(os) = &request.os {
            server.os = os.clone();
        }
        server.tags = tags;
        let rendered = render::server(world, &server);
        world.servers.push(server);
        Ok((StatusCode::OK, Json(rendered)))
    })
}

pub async fn delete(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    sim.write(|world, _| {
        find(world, &id)?;
        world.servers.retain(|s| s.id != id);
        for network in &mut world.public_networks {
            network.memberships.retain(|m| m.resource_id != id);
        }
        Ok(Json(json!({ "result": "Server Deleted.", "serverId": id })))
    })
}

/// `POST /servers/{id}/actions/{power-on|power-off|shutdown|reboot|reset}`.
pub async fn action(
    State(sim): State<Sim>,
    Path((id, action)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    let (status, result) = match action.as_str() {
        "power-on" => ("powered-on", "Server powered on."),
        "power-off" => ("powered-off", "Server powered off."),
        "shutdown" => ("powered-off", "Server shut down."),
        "reboot" => ("powered-on", "Server rebooted."),
        "reset" => ("powered-on", "Server reset."),
        _ => return Err(ApiError::not_found("Action", &action)),
    };
    sim.write(|world, _| {
        find(world, &id)?;
        let server = world.server_mut(&id).expect("found above");
        server.status = status.to_owned();
        Ok(Json(json!({ "result": result })))
    })
}

pub fn find<'a>(world: &'a World, id: &str) -> ApiResult<&'a Server> {
    world.server(id).ok_or_else(|| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            format!("Server {id} does not exist or you are not allowed to access it."),
        )
    })
}
