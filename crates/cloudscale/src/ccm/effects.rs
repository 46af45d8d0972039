//! A port row the shared diff found, said as what the CCM does to the cloud objects: the diff
//! names a port change by the config key (`ports.web.name: "http" → "web"`), which in
//! controller mode is the user's change itself (the attribute, `causes`); its effects are the
//! pool deleted and created under its new name (`ports.web.pool: "tcp/http" → "tcp/web"`), the
//! listener moved to another port, and the members on the node port the apiserver allocates.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::super::diff::port_key;
use super::super::objects::{LbObjects, PoolSet};
use super::causes::Predicted;
use super::impact::{rule, Change};
use super::predict::UNKNOWN_PORT;
use skyplan_core::plan::AttributeChange;

/// The cloud changes of a port row (`None`: not a port row the diff names by a config key, or
/// its objects are not found — then it stays as the diff says it).
pub fn port_effects(
    change: Change,
    attribute: &AttributeChange,
    live: Option<&LbObjects>,
    desired: &LbObjects,
) -> Option<Vec<Predicted>> {
    let key = attribute
        .path
        .strip_prefix("ports.")?
        .split('.')
        .next()?
        .to_string();
    let group_pool = attribute.group.strip_prefix("pool ").unwrap_or_default();
    let by_key = |lb: &LbObjects| -> Option<PoolSet> {
        lb.pools.values().find(|s| port_key(s) == key).cloned()
    };
    let path = |field: &str| format!("ports.{key}.{field}");
    let effect = |change: Change, path: String, before: Value, after: Value, reason: String| {
        let row = rule(change);
        Predicted {
            change,
            attribute: AttributeChange {
                path,
                before,
                after,
                impact: row.impact,
                reason,
                downtime: row.downtime,
                // One disruption: everything a pool's recreation does overlaps it.
                group: attribute.group.clone(),
                effects: Vec::new(),
            },
            note: None,
        }
    };
    let everything = "its members, health monitor and listener";
    match change {
        Change::PortRenamed | Change::PortProtocol => {
            let old = live?.pools.get(group_pool)?;
            let new = by_key(desired)?;
            let (from, to) = (&old.pool.name, &new.pool.name);
            let mut out = vec![effect(
                change,
                path("pool"),
                json!(from),
                json!(to),
                format!("pool {from}: deleted and created again as {to}, with {everything}"),
            )];
            out.extend(
                new_node_port(old, &new, &key).map(|(row, before, after, reason)| {
                    effect(row, path("node-port"), before, after, reason)
                }),
            );
            Some(out)
        }
        Change::PortAdded => {
            let new = desired.pools.get(group_pool)?;
            let name = &new.pool.name;
            let mut out = vec![effect(
                change,
                path("pool"),
                Value::Null,
                json!(name),
                format!("pool {name}: created with {everything}; other ports are untouched"),
            )];
            let ports = member_ports(new);
            if ports.contains(&UNKNOWN_PORT) {
                out.push(effect(
                    change,
                    path("node-port"),
                    Value::Null,
                    json!(ports),
                    format!("members of pool {name}: on the node port the apiserver allocates for the new port"),
                ));
            }
            Some(out)
        }
        Change::ListenerPort => {
            let (old, new) = (by_key(live?)?, by_key(desired)?);
            let (from, to) = (old.listener?.name, new.listener?.name);
            Some(vec![effect(
                change,
                path("listener"),
                json!(from),
                json!(to),
                format!("listener {from}: deleted and created again as {to}; the pool and its members are kept"),
            )])
        }
        Change::PortRemoved => {
            let name = live?.pools.get(group_pool)?.pool.name.clone();
            Some(vec![effect(
                change,
                path("pool"),
                json!(name),
                Value::Null,
                format!("pool {name}: deleted with {everything}; port {key} stops serving"),
            )])
        }
        _ => None,
    }
}

/// The members of a recreated pool on another node port than the old pool's: the apiserver's
/// new allocation for a renamed port (unknown until the Service is written), or the configured
/// one.
fn new_node_port(
    old: &PoolSet,
    new: &PoolSet,
    key: &str,
) -> Option<(Change, Value, Value, String)> {
    let (before, after) = (member_ports(old), member_ports(new));
    if before.is_empty() || after.is_empty() || before == after {
        return None;
    }
    let pool = &new.pool.name;
    let (row, reason) = match after.contains(&UNKNOWN_PORT) {
        true => (
            Change::NewNodePort,
            format!("members of pool {pool}: created on the node port the apiserver allocates for port {key}"),
        ),
        false => (
            Change::NodePort,
            format!("members of pool {pool}: created on the configured node port"),
        ),
    };
    Some((row, json!(before), json!(after), reason))
}

fn member_ports(set: &PoolSet) -> BTreeSet<u16> {
    set.members.values().map(|m| m.protocol_port).collect()
}
