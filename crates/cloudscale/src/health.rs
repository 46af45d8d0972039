//! What the rollout's health gate reads of a load balancer after a change: healthy when it is
//! `running` and every member of its pools reports `monitor_status` `up` (or `no_monitor`, a
//! pool without a health monitor: nothing to wait for). `changing`, `down` and `unknown` are
//! not healthy yet.
//!
//! Cost of one read: the load balancer, and one member list per pool; in controller mode,
//! where the state does not name the pools the controller made, the pool list too.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::api::{LoadBalancer, Pool};
use super::client::{CloudscaleClient, Error};
use skyplan_core::provider::Health;
use skyplan_core::state::ResourceState;

/// A pool member as the gate reads it: `api::Member` leaves out `monitor_status`, which only
/// the gate needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Member {
    name: String,
    address: String,
    monitor_status: String,
}

/// The monitor statuses a member in service reports.
const IN_SERVICE: [&str; 2] = ["up", "no_monitor"];

/// One read of the health of the load balancer `entry` names.
pub async fn read(client: &CloudscaleClient, entry: &ResourceState) -> Result<Health, Error> {
    if entry.id.is_empty() {
        // Written to its Service, but the controller never made it: nothing serves.
        return Ok(Health::Unhealthy(vec!["no load balancer yet".into()]));
    }
    let lb: LoadBalancer = match client.get(&format!("/load-balancers/{}", entry.id)).await {
        Ok(lb) => lb,
        Err(e) if e.is_not_found() => {
            let gone = format!("load balancer {} is gone", entry.id);
            return Ok(Health::Unhealthy(vec![gone]));
        }
        Err(e) => return Err(e),
    };
    let mut members = BTreeMap::new();
    for (name, uuid) in pools(client, entry).await? {
        let path = format!("/load-balancers/pools/{uuid}/members");
        members.insert(name, client.get::<Vec<Member>>(&path).await?);
    }
    Ok(Health::from_problems(problems(&lb, &members)))
}

/// The pools, by name: as the state recorded them (direct mode), else those the pool list
/// shows under the load balancer.
async fn pools(
    client: &CloudscaleClient,
    entry: &ResourceState,
) -> Result<BTreeMap<String, String>, Error> {
    if let Some(recorded) = entry.ids.get("pools").and_then(|p| p.as_object()) {
        let by_name = recorded
            .iter()
            .filter_map(|(name, uuid)| Some((name.clone(), uuid.as_str()?.to_string())));
        return Ok(by_name.collect());
    }
    let pools: Vec<Pool> = client.get("/load-balancers/pools").await?;
    Ok(pools
        .into_iter()
        .filter(|pool| pool.load_balancer.uuid == entry.id)
        .map(|pool| (pool.name, pool.uuid))
        .collect())
}

/// What is not in service, in the console's words.
fn problems(lb: &LoadBalancer, members: &BTreeMap<String, Vec<Member>>) -> Vec<String> {
    let mut problems = Vec::new();
    if lb.status != "running" {
        problems.push(format!("load balancer {}: status {}", lb.name, lb.status));
    }
    for (pool, members) in members {
        for member in members {
            if !IN_SERVICE.contains(&member.monitor_status.as_str()) {
                problems.push(format!(
                    "member {} ({}) of pool {pool}: monitor_status {}",
                    member.name, member.address, member.monitor_status
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lb(status: &str) -> LoadBalancer {
        serde_json::from_value(serde_json::json!({
            "uuid": "lb-1", "name": "web", "flavor": {"slug": "lb-standard"},
            "zone": {"slug": "lpg1"}, "status": status, "vip_addresses": [],
        }))
        .expect("a load balancer")
    }

    fn member(name: &str, monitor_status: &str) -> Member {
        Member {
            name: name.into(),
            address: "10.0.0.5".into(),
            monitor_status: monitor_status.into(),
        }
    }

    #[test]
    fn a_running_load_balancer_whose_members_are_up_or_unmonitored_is_healthy() {
        let members = BTreeMap::from([
            (
                "tcp/http".to_string(),
                vec![member("a", "up"), member("b", "up")],
            ),
            ("tcp/ssh".to_string(), vec![member("a", "no_monitor")]),
        ]);
        assert!(problems(&lb("running"), &members).is_empty());
    }

    #[test]
    fn each_member_not_up_and_a_load_balancer_not_running_is_named() {
        let members = BTreeMap::from([(
            "tcp/http".to_string(),
            vec![
                member("a", "up"),
                member("b", "down"),
                member("c", "changing"),
            ],
        )]);
        assert_eq!(
            problems(&lb("changing"), &members),
            [
                "load balancer web: status changing",
                "member b (10.0.0.5) of pool tcp/http: monitor_status down",
                "member c (10.0.0.5) of pool tcp/http: monitor_status changing",
            ]
        );
        let unknown = BTreeMap::from([("p".to_string(), vec![member("a", "unknown")])]);
        assert_eq!(problems(&lb("running"), &unknown).len(), 1);
    }
}
