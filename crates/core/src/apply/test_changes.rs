//! Changes and a maintenance policy for the apply module's tests.

use jiff::Timestamp;

use super::window::MaintenancePolicy;
use crate::config::Maintenance;
use crate::model::{Address, Downtime, Impact, ResourceKind};
use crate::plan::{Action, AttributeChange, ResourceChange};

/// Saturdays 02:00-05:00 in Zurich: minimal outside, pool-recreate inside.
pub fn policy() -> MaintenancePolicy {
    MaintenancePolicy::new(&Maintenance {
        timezone: "Europe/Zurich".into(),
        windows: vec!["Sat 02:00-05:00".into()],
        outside_window: Impact::Minimal,
        inside_window: Impact::PoolRecreate,
    })
    .unwrap()
}

pub fn at(time: &str) -> Timestamp {
    time.parse().unwrap()
}

/// An update of `load-balancer.<name>` of one attribute of that class.
pub fn change(name: &str, impact: Impact, downtime: Downtime) -> ResourceChange {
    let mut change = ResourceChange::no_op(
        Address::new(ResourceKind::LoadBalancer, name),
        "cloudscale",
        None,
    );
    change.action = Action::Update;
    change.attributes.push(AttributeChange {
        path: "x".into(),
        before: serde_json::Value::Null,
        after: serde_json::Value::Null,
        impact,
        reason: String::new(),
        downtime,
        group: "g".into(),
        effects: Vec::new(),
    });
    change
}
