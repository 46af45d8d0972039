//! Whether a pool went without members while skyplan (or a controller) changed it, read from
//! the cloudscale simulator's request log: each pool's members before, then every member
//! created or deleted in the order the simulator finished the requests.

use std::collections::BTreeMap;

use serde_json::Value;

use super::SimServer;

/// A pool that had members and was left with none, while it still existed.
#[derive(Debug, Clone, PartialEq)]
pub struct Emptied {
    /// The pool's UUID.
    pub pool: String,
    /// From the delete that took its last member to the next member created (or the end of
    /// the log).
    pub for_ms: f64,
}

/// Each pool's member count by pool UUID, as the simulator has them now.
pub fn member_counts(sim: &SimServer) -> BTreeMap<String, usize> {
    (sim.list("/load-balancers/pools").iter())
        .map(|pool| {
            let uuid = pool["uuid"].as_str().unwrap().to_string();
            let members = sim.list(&format!("/load-balancers/pools/{uuid}/members"));
            let enabled = members.iter().filter(|m| m["enabled"] != false).count();
            (uuid, enabled)
        })
        .collect()
}

/// Every time a pool with members was left with none, replaying `log` (`/_sim/requests`'
/// `log`) over the counts of [`member_counts`] taken before it. A pool created in the log
/// counts from its first member; one deleted is gone (its recreation is the plan's own row).
pub fn emptied(before: &BTreeMap<String, usize>, log: &Value) -> Vec<Emptied> {
    let mut counts = before.clone();
    let mut empty_since: BTreeMap<String, f64> = BTreeMap::new();
    let mut found = Vec::new();
    for entry in log.as_array().expect("a request log") {
        let ok = entry["status"].as_u64().is_some_and(|s| s < 300);
        let method = entry["method"].as_str().unwrap_or_default();
        let path = entry["path"].as_str().unwrap_or_default();
        let at = entry["ended_ms"].as_f64().unwrap_or_default();
        let Some((pool, member)) = member_path(path) else {
            if let (true, "DELETE", Some(pool)) = (ok, method, pool_path(path)) {
                counts.remove(pool);
                empty_since.remove(pool);
            }
            continue;
        };
        match (ok, method, member) {
            (true, "POST", None) => {
                *counts.entry(pool.to_string()).or_default() += 1;
                if let Some(since) = empty_since.remove(pool) {
                    found.push(Emptied {
                        pool: pool.to_string(),
                        for_ms: at - since,
                    });
                }
            }
            (true, "DELETE", Some(_)) => {
                let count = counts.entry(pool.to_string()).or_default();
                *count = count.saturating_sub(1);
                if *count == 0 {
                    empty_since.insert(pool.to_string(), at);
                }
            }
            _ => {}
        }
    }
    let end = (log.as_array().unwrap().iter())
        .filter_map(|e| e["ended_ms"].as_f64())
        .fold(0.0, f64::max);
    found.extend(empty_since.into_iter().map(|(pool, since)| Emptied {
        pool,
        for_ms: end - since,
    }));
    found
}

/// `/v1/load-balancers/pools/{pool}/members[/{member}]` → the pool and the member, if any.
fn member_path(path: &str) -> Option<(&str, Option<&str>)> {
    let rest = path.strip_prefix("/v1/load-balancers/pools/")?;
    let (pool, rest) = rest.split_once("/members")?;
    Some((pool, rest.strip_prefix('/').filter(|m| !m.is_empty())))
}

/// `/v1/load-balancers/pools/{pool}` → the pool.
fn pool_path(path: &str) -> Option<&str> {
    let pool = path.strip_prefix("/v1/load-balancers/pools/")?;
    (!pool.contains('/')).then_some(pool)
}
