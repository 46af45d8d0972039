//! Apply holds the cloud to the plan: once a load balancer's operations are done and it is
//! `running` again (the wait apply makes anyway), what the cloud shows is compared with the
//! UUIDs the plan predicted — the objects it kept and the ones its operations created. A
//! pool, listener, monitor or member under a UUID the plan did not predict was recreated
//! behind its back; each difference is classed by the impact table's row for it.
//!
//! Cost: three tag-filtered lists (pools, listeners, monitors of this load balancer) and one
//! member list per pool kept — what refresh reads for one load balancer. Objects that do not
//! carry the owner tag (a load balancer imported with its objects) are read by UUID.

use std::collections::BTreeMap;

use super::api;
use super::client::{CloudscaleClient, Error};
use super::execute::{wait_until_running, LbIds};
use super::impact::{rule, Change};
use super::objects::OWNER_TAG;
use skyplan_core::model::Impact;
use skyplan_core::plan::Verification;

/// What the cloud shows of one load balancer after apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// `running`, or the status it was left in when the wait gave up; `None`: it is gone.
    pub status: Option<String>,
    pub ids: LbIds,
}

/// Reads what the cloud shows of the load balancer `expected` names.
pub async fn observe(
    client: &CloudscaleClient,
    owner: &str,
    expected: &LbIds,
) -> Result<Observed, Error> {
    let Some(lb) = expected.lb.clone() else {
        return Ok(Observed::default());
    };
    let status = match wait_until_running(client, &lb).await {
        Ok(()) => "running".to_string(),
        Err(Error::NotRunning { status, .. }) => status,
        Err(e) if e.is_not_found() => return Ok(Observed::default()),
        Err(e) => return Err(e),
    };
    let tagged = |path: &str| format!("{path}?tag:{OWNER_TAG}={owner}");
    let (pools_path, listeners_path, monitors_path) =
        (tagged(POOLS), tagged(LISTENERS), tagged(MONITORS));
    let (pools, listeners, monitors) = tokio::try_join!(
        client.get::<Vec<api::Pool>>(&pools_path),
        client.get::<Vec<api::Listener>>(&listeners_path),
        client.get::<Vec<api::HealthMonitor>>(&monitors_path),
    )?;
    let mut ids = LbIds {
        lb: Some(lb.clone()),
        pools: pools_by_name(pools, &lb),
        ..LbIds::default()
    };
    add_untagged_pools(client, expected, &mut ids).await?;
    let pool_name = |uuid: &str| {
        ids.pools
            .iter()
            .find(|(_, u)| u.as_str() == uuid)
            .map(|(name, _)| name.clone())
    };
    for listener in listeners {
        if let Some(name) = listener.pool.as_ref().and_then(|p| pool_name(&p.uuid)) {
            ids.listeners.entry(name).or_insert(listener.uuid);
        }
    }
    for monitor in monitors {
        if let Some(name) = pool_name(&monitor.pool.uuid) {
            ids.monitors.entry(name).or_insert(monitor.uuid);
        }
    }
    add_untagged_children(client, expected, &mut ids).await?;
    ids.members = members_of_kept_pools(client, expected, &ids.pools).await?;
    Ok(Observed {
        status: Some(status),
        ids,
    })
}

/// The load balancer's pools by name, the oldest keeping a name two share (as refresh does).
fn pools_by_name(mut pools: Vec<api::Pool>, lb: &str) -> BTreeMap<String, String> {
    pools.retain(|p| p.load_balancer.uuid == lb);
    pools.sort_by(|a, b| (&a.created_at, &a.uuid).cmp(&(&b.created_at, &b.uuid)));
    let mut by_name = BTreeMap::new();
    for pool in pools {
        by_name.entry(pool.name).or_insert(pool.uuid);
    }
    by_name
}

/// An expected pool missing from the tagged list under its name may simply be untagged.
async fn add_untagged_pools(
    client: &CloudscaleClient,
    expected: &LbIds,
    ids: &mut LbIds,
) -> Result<(), Error> {
    for (name, uuid) in &expected.pools {
        if ids.pools.contains_key(name) {
            continue;
        }
        if read_by_uuid(client, POOLS, uuid).await? {
            ids.pools.insert(name.clone(), uuid.clone());
        }
    }
    Ok(())
}

/// Same for the listener and monitor of each pool that kept its UUID.
async fn add_untagged_children(
    client: &CloudscaleClient,
    expected: &LbIds,
    ids: &mut LbIds,
) -> Result<(), Error> {
    for (pool, uuid) in &expected.pools {
        if ids.pools.get(pool) != Some(uuid) {
            continue;
        }
        let listener = expected.listeners.get(pool);
        add_untagged(client, LISTENERS, pool, listener, &mut ids.listeners).await?;
        let monitor = expected.monitors.get(pool);
        add_untagged(client, MONITORS, pool, monitor, &mut ids.monitors).await?;
    }
    Ok(())
}

const POOLS: &str = "/load-balancers/pools";
const LISTENERS: &str = "/load-balancers/listeners";
const MONITORS: &str = "/load-balancers/health-monitors";

/// The pool's `wanted` object, when the tagged list did not show one for the pool and it
/// exists.
async fn add_untagged(
    client: &CloudscaleClient,
    path: &str,
    pool: &str,
    wanted: Option<&String>,
    found: &mut BTreeMap<String, String>,
) -> Result<(), Error> {
    let Some(uuid) = wanted else { return Ok(()) };
    if !found.contains_key(pool) && read_by_uuid(client, path, uuid).await? {
        found.insert(pool.to_string(), uuid.clone());
    }
    Ok(())
}

async fn read_by_uuid(client: &CloudscaleClient, path: &str, uuid: &str) -> Result<bool, Error> {
    match client
        .get::<serde_json::Value>(&format!("{path}/{uuid}"))
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Members by pool name, read for the pools that kept their UUID (a recreated pool's members
/// are new with it).
async fn members_of_kept_pools(
    client: &CloudscaleClient,
    expected: &LbIds,
    observed: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, BTreeMap<String, String>>, Error> {
    let mut members = BTreeMap::new();
    for (pool, uuid) in &expected.pools {
        if observed.get(pool) != Some(uuid) {
            continue;
        }
        let path = format!("/load-balancers/pools/{uuid}/members");
        let listed: Vec<api::Member> = client.get(&path).await?;
        let by_name: BTreeMap<String, String> =
            listed.into_iter().map(|m| (m.name, m.uuid)).collect();
        if !by_name.is_empty() {
            members.insert(pool.clone(), by_name);
        }
    }
    Ok(members)
}

/// How many differences a verification names before it counts the rest.
const SHOWN: usize = 8;

/// The cloud (`observed`) held to the prediction (`expected`, the UUIDs the plan kept and its
/// operations created) for a change the plan classed `predicted`.
pub fn compare(
    address: &str,
    predicted: Impact,
    expected: &LbIds,
    observed: &Observed,
) -> Verification {
    let mut found: Vec<(Impact, String)> = Vec::new();
    match &observed.status {
        None => found.push((
            rule(Change::LbDeleted).impact,
            "the load balancer is gone".into(),
        )),
        Some(status) if status != "running" => found.push((
            rule(Change::PoolAlgorithm).impact,
            format!("the load balancer is {status}, not running"),
        )),
        Some(_) => compare_pools(expected, &observed.ids, &mut found),
    }
    let observed_class = found
        .iter()
        .map(|(impact, _)| *impact)
        .fold(predicted, Impact::max);
    let mut differences: Vec<String> = found.into_iter().map(|(_, text)| text).collect();
    if differences.len() > SHOWN {
        let more = differences.len() - SHOWN;
        differences.truncate(SHOWN);
        differences.push(format!("and {more} more"));
    }
    Verification {
        address: address.to_string(),
        predicted,
        observed: observed_class,
        differences,
    }
}

fn compare_pools(expected: &LbIds, observed: &LbIds, found: &mut Vec<(Impact, String)>) {
    let recreate = rule(Change::PoolAlgorithm).impact;
    for (pool, uuid) in &expected.pools {
        match observed.pools.get(pool) {
            None => found.push((recreate, format!("pool {pool} is gone"))),
            Some(seen) if seen != uuid => {
                found.push((recreate, format!("pool {pool} was recreated")))
            }
            Some(_) => compare_children(pool, expected, observed, found),
        }
    }
    for pool in observed.pools.keys() {
        if !expected.pools.contains_key(pool) {
            let added = rule(Change::PortAdded).impact;
            found.push((added, format!("pool {pool} appeared")));
        }
    }
}

/// The listener, monitor and members of a pool that kept its UUID.
fn compare_children(
    pool: &str,
    expected: &LbIds,
    observed: &LbIds,
    found: &mut Vec<(Impact, String)>,
) {
    let singles = [
        (
            "listener",
            &expected.listeners,
            &observed.listeners,
            Change::ListenerProtocol,
        ),
        (
            "health monitor",
            &expected.monitors,
            &observed.monitors,
            Change::MonitorRecreated,
        ),
    ];
    for (what, wanted, seen, change) in singles {
        let text = match (wanted.get(pool), seen.get(pool)) {
            (Some(w), Some(s)) if w != s => "was recreated",
            (Some(_), None) => "is gone",
            (None, Some(_)) => "appeared",
            _ => continue,
        };
        found.push((
            rule(change).impact,
            format!("the {what} of pool {pool} {text}"),
        ));
    }
    let none = BTreeMap::new();
    let wanted = expected.members.get(pool).unwrap_or(&none);
    let seen = observed.members.get(pool).unwrap_or(&none);
    let members = rule(Change::MembersChanged).impact;
    for (member, uuid) in wanted {
        let text = match seen.get(member) {
            Some(s) if s == uuid => continue,
            Some(_) => "was recreated",
            None => "is gone",
        };
        found.push((members, format!("member {member} of pool {pool} {text}")));
    }
    for member in seen.keys().filter(|m| !wanted.contains_key(*m)) {
        found.push((members, format!("member {member} of pool {pool} appeared")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> LbIds {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        LbIds {
            lb: Some("lb-1".into()),
            pools: map(&[("tcp/http", "p-1"), ("tcp/https", "p-2")]),
            members: BTreeMap::from([(
                "tcp/http".to_string(),
                map(&[("10.0.0.1:30080", "m-1"), ("10.0.0.2:30080", "m-2")]),
            )]),
            monitors: map(&[("tcp/http", "hm-1"), ("tcp/https", "hm-2")]),
            listeners: map(&[("tcp/http", "l-1"), ("tcp/https", "l-2")]),
        }
    }

    fn running(ids: LbIds) -> Observed {
        Observed {
            status: Some("running".into()),
            ids,
        }
    }

    fn verify(observed: &Observed) -> Verification {
        compare("load-balancer.web", Impact::Minimal, &ids(), observed)
    }

    #[test]
    fn the_same_uuids_are_as_predicted() {
        let verification = verify(&running(ids()));
        assert_eq!(verification.summary(), "as predicted");
        assert_eq!(verification.observed, Impact::Minimal);
    }

    #[test]
    fn a_recreated_pool_is_an_under_prediction_named_once() {
        let mut cloud = ids();
        cloud.pools.insert("tcp/http".into(), "p-9".into());
        cloud.members.clear();
        cloud.monitors.insert("tcp/http".into(), "hm-9".into());
        let verification = verify(&running(cloud));
        assert_eq!(
            verification.summary(),
            "predicted minimal, but pool tcp/http was recreated"
        );
        assert!(verification.under_predicted());
        assert_eq!(verification.observed, Impact::PoolRecreate);
    }

    #[test]
    fn children_of_a_kept_pool_are_compared_one_by_one() {
        let mut cloud = ids();
        cloud.listeners.insert("tcp/https".into(), "l-9".into());
        cloud.monitors.remove("tcp/http");
        let members = cloud.members.get_mut("tcp/http").unwrap();
        members.insert("10.0.0.2:30080".into(), "m-9".into());
        members.insert("10.0.0.3:30080".into(), "m-3".into());
        let verification = verify(&running(cloud));
        assert_eq!(
            verification.differences,
            [
                "the health monitor of pool tcp/http is gone",
                "member 10.0.0.2:30080 of pool tcp/http was recreated",
                "member 10.0.0.3:30080 of pool tcp/http appeared",
                "the listener of pool tcp/https was recreated",
            ]
        );
        assert!(
            !verification.under_predicted(),
            "each is a minimal change, as predicted"
        );
    }

    #[test]
    fn a_load_balancer_not_running_or_gone_is_reported() {
        let changing = Observed {
            status: Some("changing".into()),
            ids: ids(),
        };
        assert_eq!(
            verify(&changing).differences,
            ["the load balancer is changing, not running"]
        );
        let gone = verify(&Observed::default());
        assert_eq!(gone.differences, ["the load balancer is gone"]);
        assert_eq!(gone.observed, Impact::Forbidden);
    }

    #[test]
    fn many_differences_are_counted() {
        let mut cloud = ids();
        let members: BTreeMap<String, String> = (0..20)
            .map(|n| (format!("10.0.1.{n}:30080"), format!("x-{n}")))
            .collect();
        cloud.members.insert("tcp/http".into(), members);
        let verification = verify(&running(cloud));
        assert_eq!(verification.differences.len(), SHOWN + 1);
        assert_eq!(verification.differences[SHOWN], "and 14 more");
    }
}
