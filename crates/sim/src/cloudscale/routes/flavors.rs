//! `/v1/load-balancers/flavors`: the read-only catalogue of load-balancer flavors, from the
//! inventory.

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::cloudscale::inventory::LB_FLAVORS;
use crate::cloudscale::state::Sim;

pub fn routes() -> Router<Sim> {
    Router::new().route("/v1/load-balancers/flavors", get(list))
}

async fn list() -> Json<Vec<Value>> {
    Json(flavors())
}

fn flavors() -> Vec<Value> {
    LB_FLAVORS
        .iter()
        .map(|(slug, name)| json!({"slug": slug, "name": name}))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flavor_is_listed_with_its_name() {
        assert_eq!(
            Value::Array(flavors()),
            json!([
                {"slug": "lb-standard", "name": "LB-Standard"},
                {"slug": "lb-large", "name": "LB-Large"},
            ])
        );
    }
}
