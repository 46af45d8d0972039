//! The CRUD shape every top-level collection shares: a tag-filtered list, show, create (201 with
//! the object), PATCH (create-only fields refused, 204) and DELETE (204), each object found by
//! the key in its path or 404. A collection says only what is its own: where it lives, how it
//! renders, how a request builds or changes an object, and what a deletion takes with it.

use std::str::FromStr;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde_json::Value;
use uuid::Uuid;

use super::listing;
use crate::cloudscale::api::{created, parse_create, parse_patch, ApiError, ApiResult};
use crate::cloudscale::faults::Recreate;
use crate::cloudscale::filter::TagFilter;
use crate::cloudscale::origin::Origin;
use crate::cloudscale::state::{Ctx, Sim};
use crate::cloudscale::world::{Keyed, Tagged, World};

pub trait Collection: Send + Sync + 'static {
    type Item: Tagged + PathKey + Send + Sync + 'static;
    type Create: DeserializeOwned + Send + 'static;
    type Patch: DeserializeOwned + Send + 'static;

    /// The collection's route, e.g. `/v1/load-balancers`.
    const PATH: &'static str;
    /// One object's route template, e.g. `/v1/load-balancers/{uuid}`; the request counters
    /// report it as it is spelled here.
    const ITEM_PATH: &'static str;
    /// Fields a PATCH may not name (see [`parse_patch`]).
    const CREATE_ONLY: &'static [&'static str];

    fn items(world: &World) -> &[Self::Item];
    fn items_mut(world: &mut World) -> &mut Vec<Self::Item>;
    fn render(world: &World, ctx: &Ctx, item: &Self::Item) -> Value;

    /// The object a create request makes. Validates before it touches the world: a refused
    /// request must leave the world as it was.
    fn build(world: &mut World, ctx: &Ctx, request: Self::Create) -> ApiResult<Self::Item>;

    /// Applies a patch to the object at `index`, validating before it changes anything.
    fn update(world: &mut World, ctx: &Ctx, index: usize, patch: Self::Patch) -> ApiResult<()>;

    /// What deleting `removed` (already taken out of its collection) does to the rest of the
    /// world: sub-objects deleted with it, references cleared, a load balancer set `changing`.
    fn removed(_world: &mut World, _ctx: &Ctx, _removed: &Self::Item) {}

    /// The pool an object belongs to: what the `recreate-on-patch=pool` fault recreates when
    /// the object is patched.
    fn pool_of(_item: &Self::Item) -> Option<Uuid> {
        None
    }
}

/// How a path names an object: most by UUID, floating IPs by their address.
pub trait PathKey {
    type Key: FromStr + PartialEq;
    fn path_key(&self) -> Self::Key;
}

impl<T: Keyed> PathKey for T {
    type Key = Uuid;
    fn path_key(&self) -> Uuid {
        self.uuid()
    }
}

/// The list, show, create, update and delete routes of `C`.
pub fn routes<C: Collection>() -> Router<Sim> {
    Router::new()
        .route(C::PATH, get(list::<C>).post(create::<C>))
        .route(
            C::ITEM_PATH,
            get(show::<C>).patch(update::<C>).delete(remove::<C>),
        )
}

/// The index of the object `raw` names; a key that does not even parse names nothing, hence 404.
fn position<C: Collection>(world: &World, raw: &str) -> ApiResult<usize> {
    let key: <C::Item as PathKey>::Key = raw.parse().map_err(|_| ApiError::not_found())?;
    C::items(world)
        .iter()
        .position(|item| item.path_key() == key)
        .ok_or_else(ApiError::not_found)
}

async fn list<C: Collection>(
    State(sim): State<Sim>,
    origin: Origin,
    filter: TagFilter,
) -> Json<Vec<Value>> {
    sim.read_indexed(&origin, |world, ctx| {
        listing(C::items(world), &filter, |item| C::render(world, ctx, item))
    })
}

async fn show<C: Collection>(
    State(sim): State<Sim>,
    origin: Origin,
    Path(key): Path<String>,
) -> ApiResult<Json<Value>> {
    sim.read(&origin, |world, ctx| {
        let index = position::<C>(world, &key)?;
        Ok(Json(C::render(world, ctx, &C::items(world)[index])))
    })
}

async fn create<C: Collection>(
    State(sim): State<Sim>,
    origin: Origin,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: C::Create = parse_create(&body)?;
    sim.write(&origin, |world, ctx| {
        let item = C::build(world, ctx, request)?;
        let object = C::render(world, ctx, &item);
        C::items_mut(world).push(item);
        Ok(created(object))
    })
}

async fn update<C: Collection>(
    State(sim): State<Sim>,
    origin: Origin,
    Path(key): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let patch: C::Patch = parse_patch(&body, C::CREATE_ONLY)?;
    sim.write(&origin, |world, ctx| {
        let index = position::<C>(world, &key)?;
        C::update(world, ctx, index, patch)?;
        let pool = C::pool_of(&C::items(world)[index]);
        if let (Some(Recreate::Pool), Some(pool)) = (ctx.recreate_on_patch, pool) {
            if let Some((new, lb)) = world.recreate_pool(pool, ctx.now, ctx.settled_at()) {
                ctx.pool_changed(world, new, lb);
            }
        }
        Ok(StatusCode::NO_CONTENT)
    })
}

async fn remove<C: Collection>(
    State(sim): State<Sim>,
    origin: Origin,
    Path(key): Path<String>,
) -> ApiResult<StatusCode> {
    sim.write(&origin, |world, ctx| {
        let index = position::<C>(world, &key)?;
        let removed = C::items_mut(world).remove(index);
        C::removed(world, ctx, &removed);
        Ok(StatusCode::NO_CONTENT)
    })
}
