//! One file per collection; the CRUD shape they share is in `collection`. Every handler
//! validates before it mutates, so a refused request leaves the world as it was.

mod addresses;
mod collection;
mod flavors;
mod floating_ips;
mod listeners;
mod load_balancers;
mod members;
mod monitor_http;
mod monitors;
mod networks;
mod pools;
mod regions;
mod server_actions;
mod server_groups;
mod server_view;
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
        .merge(collection::routes::<load_balancers::LoadBalancers>())
        .merge(collection::routes::<pools::Pools>())
        .merge(members::routes())
        .merge(collection::routes::<listeners::Listeners>())
        .merge(collection::routes::<monitors::Monitors>())
        .merge(collection::routes::<floating_ips::FloatingIps>())
        .merge(collection::routes::<servers::Servers>())
        .merge(server_actions::routes())
        .merge(collection::routes::<server_groups::ServerGroups>())
        .merge(collection::routes::<networks::Networks>())
        .merge(collection::routes::<subnets::Subnets>())
        .merge(regions::routes())
        .merge(flavors::routes())
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
pub struct NameAndTags {
    name: Option<String>,
    tags: Option<Tags>,
}

impl NameAndTags {
    fn apply(self, name: &mut String, tags: &mut Tags) {
        assign(name, self.name);
        assign(tags, self.tags);
    }
}

/// A PATCH field: absent leaves the value as it is.
fn assign<T>(field: &mut T, new: Option<T>) {
    if let Some(new) = new {
        *field = new;
    }
}
