//! A pool the CCM leaves without any member for a while. The CCM breaks before it makes: in
//! one reconcile pass it deletes a pool's stale members (500 ms apart), pauses 5 s when it has
//! members to create as well, then creates them (CCM 1.3.0 `reconcile.go` `nextLbActions`:
//! `actions.Sleep(500ms)` after each delete, `actions.Sleep(5s)` between a pool's deletes and
//! creates). When every member of a kept pool goes, the port serves nothing from the last
//! delete until the first new member is created: about 5.5 s and the requests. The plan says
//! so, and the downtime covers it.

use std::collections::BTreeMap;

use super::causes::Predicted;
use super::impact::Change;
use crate::diff::members_group;
use crate::objects::LbObjects;
use crate::ops::Op;
use skyplan_core::model::Downtime;

/// The CCM's pause between a pool's member deletes and creates.
const BETWEEN_DELETE_AND_CREATE_MS: u32 = 5_000;
/// The CCM's pause after each delete.
const AFTER_DELETE_MS: u32 = 500;
/// The first new member's create request and its load balancer's `changing` after it, which
/// end the empty time: skyplan's estimate, rounding the pauses up to the whole second.
const FIRST_CREATE_MS: u32 = 500;
/// How long the port serves nothing: at least the CCM's 5 s pause, at most the pauses and
/// the requests of one pass that creates every new member after them.
const EMPTY: Downtime = Downtime::new(5, 10);

/// The pools of `live` whose every member the CCM deletes while it creates others, with how
/// many it deletes: `ops` are the predicted operations (direct diff's, before the CCM's order).
pub fn emptied_pools(live: Option<&LbObjects>, ops: &[Op]) -> BTreeMap<String, usize> {
    let Some(live) = live else {
        return BTreeMap::new();
    };
    let mut deleted: BTreeMap<&str, usize> = BTreeMap::new();
    let mut created: BTreeMap<&str, usize> = BTreeMap::new();
    for op in ops {
        match op {
            Op::DeleteMember { pool, .. } => *deleted.entry(pool).or_default() += 1,
            Op::CreateMember { pool, .. } => *created.entry(pool).or_default() += 1,
            // A pool deleted is recreated: a larger disruption its own row says.
            Op::DeletePool { pool } => {
                deleted.remove(pool.as_str());
            }
            _ => {}
        }
    }
    (deleted.into_iter())
        .filter(|(pool, n)| {
            let serving = live.pools.get(*pool).map_or(0, |set| set.members.len());
            serving > 0 && *n >= serving && created.contains_key(pool)
        })
        .map(|(pool, n)| (pool.to_string(), n))
        .collect()
}

/// Says, on each member row of an emptied pool, how long its port serves nothing, and widens
/// its downtime to cover that (rows are matched by the diff's `members_group`).
pub fn say_emptied(
    predicted: &mut [Predicted],
    emptied: &BTreeMap<String, usize>,
    ports: &BTreeMap<String, u16>,
) {
    for (pool, &deletes) in emptied {
        let group = members_group(pool);
        let rows = (predicted.iter_mut())
            .filter(|p| is_member_row(p.change) && p.attribute.group == group);
        for row in rows {
            say_one(row, pool, deletes, ports);
        }
    }
}

/// One member row of an emptied pool: the note, and the downtime widened to cover it.
fn say_one(row: &mut Predicted, pool: &str, deletes: usize, ports: &BTreeMap<String, u16>) {
    let port = ports
        .get(pool)
        .map_or_else(|| format!("pool {pool}"), |port| format!("port {port}"));
    let empty_ms = AFTER_DELETE_MS + BETWEEN_DELETE_AND_CREATE_MS + FIRST_CREATE_MS;
    row.note = Some(format!(
        "{port} serves nothing for about {} s: the CCM deletes all {deletes} of its members ({} s apart), waits {} s, then creates the new ones",
        seconds(empty_ms),
        seconds(AFTER_DELETE_MS),
        seconds(BETWEEN_DELETE_AND_CREATE_MS),
    ));
    let downtime = &mut row.attribute.downtime;
    *downtime = Downtime::new(downtime.min.max(EMPTY.min), downtime.max.max(EMPTY.max));
}

/// The rows whose operations are a pool's member deletes and creates.
fn is_member_row(change: Change) -> bool {
    use Change::*;
    matches!(
        change,
        NodePort | NewNodePort | MembersChanged | NodeSelector | TrafficPolicy | AllowedSubnets
    )
}

/// `0.5`, `6`: milliseconds as seconds, without a trailing `.0`.
fn seconds(ms: u32) -> String {
    match ms % 1000 {
        0 => (ms / 1000).to_string(),
        _ => format!("{:.1}", f64::from(ms) / 1000.0),
    }
}
