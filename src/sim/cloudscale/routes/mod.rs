//! One file per collection. Every handler validates before it mutates, so a refused request
//! leaves the world as it was.

mod addresses;
mod floating_ips;
mod listeners;
mod load_balancers;
mod members;
mod monitors;
mod networks;
mod pools;
mod regions;
mod server_actions;
mod servers;
mod subnets;

use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value;

use super::filter::TagFilter;
use super::state::Sim;
use super::world::{Tagged, Tags};

/// Every `/v1` route.
pub fn api() -> Router<Sim> {
    Router::new()
        .merge(load_balancers::routes())
        .merge(pools::routes())
        .merge(members::routes())
        .merge(listeners::routes())
        .merge(monitors::routes())
        .merge(floating_ips::routes())
        .merge(servers::routes())
        .merge(networks::routes())
        .merge(subnets::routes())
        .merge(regions::routes())
}

/// A list response: the objects the filter keeps, rendered, in creation order.
fn listing<'a, T: Tagged + 'a>(
    items: impl IntoIterator<Item = &'a T>,
    filter: &TagFilter,
    render: impl Fn(&T) -> Value,
) -> Json<Vec<Value>> {
    Json(
        items
            .into_iter()
            .filter(|item| filter.matches(item.tags()))
            .map(render)
            .collect(),
    )
}

/// The PATCH body of objects whose only changeable fields are the name and the tags.
#[derive(Debug, Deserialize)]
struct NameAndTags {
    name: Option<String>,
    tags: Option<Tags>,
}

impl NameAndTags {
    fn apply(self, name: &mut String, tags: &mut Tags) {
        if let Some(new) = self.name {
            *name = new;
        }
        if let Some(new) = self.tags {
            *tags = new;
        }
    }
}
