//! `/tag-manager/v1/tags`: list (`?name=`), create (409 for a name that exists; names are
//! case-sensitive), show, patch and delete. Deleting a tag unassigns it from every resource.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::phoenixnap::api::{parse_body, ApiError, ApiQuery, ApiResult, Validation};
use crate::phoenixnap::ids::new_id;
use crate::phoenixnap::render;
use crate::phoenixnap::state::Sim;
use crate::phoenixnap::validate::is_tag_text;
use crate::phoenixnap::world::{Tag, World};

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    name: Option<String>,
}

pub async fn list(
    State(sim): State<Sim>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Json<Vec<Value>> {
    Json(sim.read(|world, _| {
        world
            .tags
            .iter()
            .filter(|t| query.name.as_ref().is_none_or(|name| *name == t.name))
            .map(|t| render::tag(world, t))
            .collect()
    }))
}

pub async fn show(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    sim.read(|world, _| Ok(Json(render::tag(world, find(world, &id)?))))
}

/// `TagCreate` and `TagUpdate` have the same fields.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TagBody {
    name: String,
    #[serde(default)]
    description: Option<String>,
    is_billing_tag: bool,
}

pub async fn create(State(sim): State<Sim>, body: Bytes) -> ApiResult<Response> {
    let request: TagBody = parse_body(&body)?;
    check_name(&request.name)?;
    sim.write(|world, _| {
        refuse_taken_name(world, &request.name, None)?;
        let tag = Tag {
            id: new_id(),
            name: request.name,
            description: request.description,
            is_billing_tag: request.is_billing_tag,
            created_by: "USER".into(),
        };
        let rendered = render::tag(world, &tag);
        world.tags.push(tag);
        Ok((StatusCode::CREATED, Json(rendered)).into_response())
    })
}

pub async fn patch(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let request: TagBody = parse_body(&body)?;
    check_name(&request.name)?;
    sim.write(|world, _| {
        find(world, &id)?;
        refuse_taken_name(world, &request.name, Some(&id))?;
        let tag = world
            .tags
            .iter_mut()
            .find(|t| t.id == id)
            .expect("found above");
        tag.name = request.name;
        tag.description = request.description;
        tag.is_billing_tag = request.is_billing_tag;
        Ok(Json(render::tag(world, find(world, &id)?)))
    })
}

pub async fn delete(State(sim): State<Sim>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    sim.write(|world, _| {
        let name = find(world, &id)?.name.clone();
        world.tags.retain(|t| t.id != id);
        for block in &mut world.ip_blocks {
            block.tags.retain(|a| a.tag_id != id);
        }
        for server in &mut world.servers {
            server.tags.retain(|a| a.tag_id != id);
        }
        Ok(Json(
            json!({ "result": format!("Tag {name} has been deleted."), "tagId": id }),
        ))
    })
}

fn check_name(name: &str) -> ApiResult<()> {
    let mut v = Validation::default();
    v.check(is_tag_text(name), || {
        "name must match [A-zÀ-ú0-9_-]{1,100}".into()
    });
    v.finish()
}

/// 409 "a tag with the given name already exists" (another tag than `except`).
fn refuse_taken_name(world: &World, name: &str, except: Option<&str>) -> ApiResult<()> {
    match world.tag_named(name) {
        Some(tag) if Some(tag.id.as_str()) != except => Err(ApiError::conflict(format!(
            "A tag with the name {name} already exists."
        ))),
        _ => Ok(()),
    }
}

fn find<'a>(world: &'a World, id: &str) -> ApiResult<&'a Tag> {
    world.tag(id).ok_or_else(|| ApiError::not_found("Tag", id))
}
