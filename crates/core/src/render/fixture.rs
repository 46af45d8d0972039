//! The plan the renderers' snapshots are made from: one of every class, four cloudscale load
//! balancers (a create, a no-op, a flavor change, an algorithm and CIDR change), as the
//! cloudscale diff planned them. Kept as data: these tests are about rendering, and the
//! pipeline knows no provider.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Dependencies, Place, Places, PlanView, ResourcePlaces, WindowView};
use crate::plan::Plan;

pub(super) fn plan() -> Plan {
    serde_json::from_str(include_str!("testdata/plan.json")).expect("the plan fixture")
}

/// The plan's view with each change's window fit as the maintenance check fills it in: the
/// create may be done now, the algorithm change waits for the weekend's window, and the
/// refused flavor change was never checked against the policy.
pub(super) fn reviewed() -> PlanView {
    let mut view = PlanView::new(&plan());
    for change in &mut view.changes {
        change.window = match change.address.as_str() {
            "load-balancer.api" => Some(WindowView {
                now: true,
                reason: None,
                next_window: None,
            }),
            "load-balancer.web" => Some(WindowView {
                now: false,
                reason: Some("pool-recreate is above what apply may do now (minimal)".to_string()),
                next_window: Some("2026-11-28T02:00:00+01:00".to_string()),
            }),
            _ => None,
        };
    }
    view
}

/// Where the fixture's resources are written in `infra/skyplan.toml`; `load-balancer.shop`
/// has its `flavor` key recorded, as the cloudscale section records it.
pub(super) fn places() -> Places {
    let at = |line| Place {
        file: PathBuf::from("infra/skyplan.toml"),
        line,
        column: 1,
    };
    let resource = |table, keys: &[(&str, usize)]| ResourcePlaces {
        table: Some(at(table)),
        keys: keys
            .iter()
            .map(|(k, line)| (k.to_string(), at(*line)))
            .collect(),
        origin: Default::default(),
    };
    Places(BTreeMap::from([
        ("load-balancer.api".to_string(), resource(1, &[])),
        ("load-balancer.docs".to_string(), resource(12, &[])),
        (
            "load-balancer.shop".to_string(),
            resource(20, &[("flavor", 23)]),
        ),
        ("load-balancer.web".to_string(), resource(30, &[])),
    ]))
}

/// Made-up dependencies between the fixture's load balancers, so that the graph has layers.
pub(super) fn dependencies() -> Dependencies {
    Dependencies(BTreeMap::from([
        (
            "load-balancer.web".to_string(),
            vec!["load-balancer.api".to_string()],
        ),
        (
            "load-balancer.shop".to_string(),
            vec![
                "load-balancer.web".to_string(),
                "load-balancer.docs".to_string(),
            ],
        ),
    ]))
}
