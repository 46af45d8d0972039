//! `/v1/regions`: the read-only catalogue of regions and their zones, from the inventory.

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::cloudscale::inventory::{region_of, ZONES};
use crate::cloudscale::state::Sim;

pub fn routes() -> Router<Sim> {
    Router::new().route("/v1/regions", get(list))
}

async fn list() -> Json<Vec<Value>> {
    Json(regions())
}

/// Each region once, with its zones, in inventory order.
fn regions() -> Vec<Value> {
    let mut slugs: Vec<&str> = ZONES.iter().map(|zone| region_of(zone)).collect();
    slugs.dedup();
    slugs.into_iter().map(region).collect()
}

/// A region with its zones, as `/regions` lists it and floating IPs show it.
pub fn region(slug: &str) -> Value {
    let zones: Vec<Value> = ZONES
        .iter()
        .filter(|zone| region_of(zone) == slug)
        .map(|zone| json!({"slug": zone}))
        .collect();
    json!({"slug": slug, "zones": zones})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_zone_is_listed_under_its_region() {
        assert_eq!(
            Value::Array(regions()),
            json!([
                {"slug": "lpg", "zones": [{"slug": "lpg1"}]},
                {"slug": "rma", "zones": [{"slug": "rma1"}]},
            ])
        );
    }
}
