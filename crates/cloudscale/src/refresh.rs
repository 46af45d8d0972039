//! Reading the live state of a cloudscale account: one GET per collection, all at once, then
//! one GET per pool for the members of the load balancers the caller asks about — never one
//! request per object, so a refresh costs the same for ten load balancers as for one.
//!
//! Listeners whose pool is null forward nowhere and have no place in `LbObjects`; they are
//! left out of the snapshot.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::api;
use super::catalog::{read_catalog, Catalog, CatalogWants};
use super::client::{CloudscaleClient, Error};
use super::objects::{
    LbObject, LbObjects, ListenerObject, MemberObject, MonitorObject, PoolObject, PoolSet,
    SmallMap, Snapshot,
};

/// Reads every load balancer with its pools, monitors, listeners and floating IPs, plus every
/// floating IP and subnet; members only for load balancers where `want_members` is true. The
/// member reads start as soon as the load balancers and pools are read, while the other
/// collections are still coming in.
pub async fn refresh(
    client: &Arc<CloudscaleClient>,
    want_members: impl Fn(&LbObject) -> bool,
) -> Result<Snapshot, Error> {
    refresh_with_catalog(client, want_members, &CatalogWants::default()).await
}

/// [`refresh`], plus the zones and flavors of `wants` that no load balancer of the account
/// uses (one GET per catalog collection, made only when one is left to prove).
pub async fn refresh_with_catalog(
    client: &Arc<CloudscaleClient>,
    want_members: impl Fn(&LbObject) -> bool,
    wants: &CatalogWants,
) -> Result<Snapshot, Error> {
    let started = std::time::Instant::now();
    // The member reads wait only for the load balancers and pools, not for the other
    // collections; a failure before that closes the channel and is reported by `objects`.
    let (to_read_tx, to_read_rx) = tokio::sync::oneshot::channel();
    let objects = async {
        let lists = async {
            let (load_balancers, pools) = tokio::try_join!(
                client.get::<Vec<api::LoadBalancer>>("/load-balancers"),
                client.get::<Vec<api::Pool>>("/load-balancers/pools"),
            )?;
            let to_read = pools_to_read(&load_balancers, &pools, &want_members);
            let _ = to_read_tx.send((to_read, wants.unproven(&load_balancers)));
            Ok::<_, Error>((load_balancers, pools))
        };
        let ((load_balancers, pools), (listeners, monitors, floating_ips, subnets)) =
            tokio::try_join!(lists, read_other_collections(client))?;
        let collections = Collections {
            load_balancers,
            pools,
            listeners,
            monitors,
            floating_ips,
            subnets,
        };
        // Assembled on a blocking thread while the member reads go on: at thousands of load
        // balancers it is tens of milliseconds that would otherwise follow the last answer.
        let assembled = tokio::task::spawn_blocking(move || assemble(collections)).await;
        Ok::<_, Error>(joined(assembled))
    };
    let members = async {
        let Ok((to_read, unproven)) = to_read_rx.await else {
            return Ok((HashMap::new(), Catalog::default()));
        };
        tokio::try_join!(
            read_members(client, to_read),
            read_catalog(client, &unproven)
        )
    };
    let (mut snapshot, (members, catalog)) = tokio::try_join!(objects, members)?;
    tracing::debug!(
        ms = started.elapsed().as_millis(),
        pools = members.len(),
        "cloudscale: collections and members read"
    );
    fill_members(&mut snapshot, members);
    snapshot.catalog = catalog;
    Ok(snapshot)
}

/// The pools of the load balancers whose members are wanted. Collected into a `Vec` before
/// the reads: a lazy iterator held across an await would keep the future from being Send for
/// every lifetime, which boxing it as a provider future requires.
fn pools_to_read(
    load_balancers: &[api::LoadBalancer],
    pools: &[api::Pool],
    want_members: impl Fn(&LbObject) -> bool,
) -> Vec<String> {
    let wanted: BTreeSet<&str> = load_balancers
        .iter()
        .filter(|lb| want_members(&LbObject::from((*lb).clone())))
        .map(|lb| lb.uuid.as_str())
        .collect();
    pools
        .iter()
        .filter(|pool| wanted.contains(pool.load_balancer.uuid.as_str()))
        .map(|pool| pool.uuid.clone())
        .collect()
}

struct Collections {
    load_balancers: Vec<api::LoadBalancer>,
    pools: Vec<api::Pool>,
    listeners: Vec<api::Listener>,
    monitors: Vec<api::HealthMonitor>,
    floating_ips: Vec<api::FloatingIp>,
    subnets: Vec<api::Subnet>,
}

type OtherCollections = (
    Vec<api::Listener>,
    Vec<api::HealthMonitor>,
    Vec<api::FloatingIp>,
    Vec<api::Subnet>,
);

async fn read_other_collections(client: &CloudscaleClient) -> Result<OtherCollections, Error> {
    tokio::try_join!(
        client.get("/load-balancers/listeners"),
        client.get("/load-balancers/health-monitors"),
        client.get("/floating-ips"),
        client.get("/subnets"),
    )
}

/// The outcome of a task refresh waits for; its panic is the caller's.
fn joined<T>(outcome: Result<T, tokio::task::JoinError>) -> T {
    outcome.unwrap_or_else(|failed| match failed.try_into_panic() {
        Ok(panic) => std::panic::resume_unwind(panic),
        Err(cancelled) => panic!("the runtime shut down during a refresh: {cancelled}"),
    })
}

/// Each pool's members by name, by pool UUID: one task per pool, so that the runtime runs them
/// on every worker and decoding one answer does not hold back the sending of the next request
/// (as one task polling them all did); the client's limiter decides how many are in flight
/// (fewer after a 429). Each answer is keyed as it comes in. The first failure ends the reads.
async fn read_members(
    client: &Arc<CloudscaleClient>,
    pool_uuids: Vec<String>,
) -> Result<HashMap<String, BTreeMap<String, MemberObject>>, Error> {
    let mut reads = tokio::task::JoinSet::new();
    for uuid in pool_uuids {
        let client = client.clone();
        reads.spawn(async move {
            let members = client
                .get(&format!("/load-balancers/pools/{uuid}/members"))
                .await?;
            Ok::<_, Error>((uuid, members_by_name(members)))
        });
    }
    let mut by_pool = HashMap::with_capacity(reads.len());
    while let Some(read) = reads.join_next().await {
        let (uuid, members) = joined(read)?;
        by_pool.insert(uuid, members);
    }
    Ok(by_pool)
}

/// Every load balancer with its pools, monitors, listeners and floating IPs; the members are
/// filled in by [`fill_members`].
fn assemble(collections: Collections) -> Snapshot {
    let mut pools = pools_by_load_balancer(collections.pools);
    let mut monitors = first_per_pool(collections.monitors, |m| Some(&m.pool.uuid), "monitor");
    let mut listeners = first_per_pool(
        collections.listeners,
        |l| l.pool.as_ref().map(|p| &p.uuid),
        "listener",
    );
    let mut floating_ips: HashMap<String, BTreeSet<String>> = HashMap::new();
    for ip in &collections.floating_ips {
        if let Some(lb) = &ip.load_balancer {
            floating_ips
                .entry(lb.uuid.clone())
                .or_default()
                .insert(ip.network.clone());
        }
    }
    let load_balancers = collections
        .load_balancers
        .into_iter()
        .map(|lb| {
            let pool_sets = pools.remove(&lb.uuid).unwrap_or_default().into_iter();
            let pool_sets = pool_sets.map(|pool| {
                let uuid = &pool.uuid;
                let monitor = monitors.remove(uuid).map(MonitorObject::from);
                let listener = listeners.remove(uuid).map(ListenerObject::from);
                let pool_set = PoolSet {
                    pool: PoolObject::from(pool),
                    members: BTreeMap::new(),
                    monitor,
                    listener,
                };
                (pool_set.pool.name.clone(), pool_set)
            });
            LbObjects {
                pools: unique_keys(pool_sets, |set| {
                    set.pool.uuid.as_deref().unwrap_or_default()
                }),
                floating_ips: floating_ips.remove(&lb.uuid).unwrap_or_default(),
                lb: LbObject::from(lb),
            }
        })
        .collect();
    Snapshot {
        load_balancers,
        floating_ips: collections
            .floating_ips
            .into_iter()
            .map(Into::into)
            .collect(),
        subnets: collections.subnets.into_iter().map(Into::into).collect(),
        catalog: Catalog::default(),
    }
}

/// Puts each pool's members, read by pool UUID, into its pool set.
fn fill_members(
    snapshot: &mut Snapshot,
    mut members: HashMap<String, BTreeMap<String, MemberObject>>,
) {
    let pool_sets = snapshot
        .load_balancers
        .iter_mut()
        .flat_map(|lb| lb.pools.values_mut());
    for set in pool_sets {
        if let Some(read) = set.pool.uuid.as_ref().and_then(|uuid| members.remove(uuid)) {
            set.members = read;
        }
    }
}

/// Pools grouped by load balancer, oldest first so the same pool keeps the plain name on every
/// refresh when two share a name.
fn pools_by_load_balancer(pools: Vec<api::Pool>) -> HashMap<String, Vec<api::Pool>> {
    let mut groups: HashMap<String, Vec<api::Pool>> = HashMap::new();
    for pool in pools {
        groups
            .entry(pool.load_balancer.uuid.clone())
            .or_default()
            .push(pool);
    }
    for group in groups.values_mut() {
        group.sort_by(|a, b| (&a.created_at, &a.uuid).cmp(&(&b.created_at, &b.uuid)));
    }
    groups
}

fn members_by_name(mut members: Vec<api::Member>) -> BTreeMap<String, MemberObject> {
    members.sort_by(|a, b| (&a.created_at, &a.uuid).cmp(&(&b.created_at, &b.uuid)));
    unique_keys(
        members.into_iter().map(|member| {
            let object = MemberObject::from(member);
            (object.name.clone(), object)
        }),
        |member| member.uuid.as_deref().unwrap_or_default(),
    )
}

/// Keys values by name; a name seen before gets the object's UUID appended (`tcp#<uuid>`), so
/// a duplicate stays visible — and unwanted by any plan — instead of silently replacing the
/// first.
fn unique_keys<V, M: NamedMap<V>>(
    named: impl Iterator<Item = (String, V)>,
    uuid: impl Fn(&V) -> &str,
) -> M {
    let mut keyed = M::default();
    for (name, value) in named {
        let key = if keyed.has(&name) {
            format!("{name}#{}", uuid(&value))
        } else {
            name
        };
        keyed.put(key, value);
    }
    keyed
}

/// A map [`unique_keys`] fills in place: a pool's members (`BTreeMap`), a load balancer's
/// pool sets (`SmallMap`).
trait NamedMap<V>: Default {
    fn has(&self, name: &str) -> bool;
    fn put(&mut self, name: String, value: V);
}

impl<V> NamedMap<V> for BTreeMap<String, V> {
    fn has(&self, name: &str) -> bool {
        self.contains_key(name)
    }
    fn put(&mut self, name: String, value: V) {
        self.insert(name, value);
    }
}

impl<V> NamedMap<V> for SmallMap<V> {
    fn has(&self, name: &str) -> bool {
        self.contains_key(name)
    }
    fn put(&mut self, name: String, value: V) {
        self.insert(name, value);
    }
}

/// One object per pool UUID. `PoolSet` holds one monitor and one listener, as the cloudscale
/// CCM creates them; any further one is reported in the log and left out.
fn first_per_pool<T>(
    objects: Vec<T>,
    pool: impl Fn(&T) -> Option<&String>,
    kind: &str,
) -> HashMap<String, T> {
    let mut by_pool = HashMap::new();
    for object in objects {
        let Some(pool) = pool(&object).cloned() else {
            continue;
        };
        match by_pool.entry(pool) {
            Entry::Vacant(slot) => {
                slot.insert(object);
            }
            Entry::Occupied(taken) => {
                let pool = taken.key();
                tracing::warn!("pool {pool} has more than one {kind}; skyplan sees only the first");
            }
        }
    }
    by_pool
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::extract::Path;
    use axum::routing::get;
    use axum::{Json, Router};
    use serde_json::{json, Value};

    use super::*;
    use crate::client::Secret;

    fn reference(uuid: &str) -> Value {
        json!({"href": format!("https://api/v1/x/{uuid}"), "uuid": uuid, "name": uuid})
    }

    fn load_balancer(uuid: &str, name: &str) -> Value {
        json!({
            "href": "h", "uuid": uuid, "name": name, "flavor": {"slug": "lb-standard"},
            "zone": {"slug": "lpg1"}, "status": "running", "tags": {},
            "vip_addresses": [{"version": 4, "address": "10.0.0.5", "subnet": reference("sub-1")}]
        })
    }

    fn pool(uuid: &str, lb: &str, name: &str, created_at: &str) -> Value {
        json!({
            "href": "h", "uuid": uuid, "name": name, "load_balancer": reference(lb),
            "algorithm": "round_robin", "protocol": "tcp", "tags": {}, "created_at": created_at
        })
    }

    fn listener(uuid: &str, pool: Option<&str>) -> Value {
        json!({
            "href": "h", "uuid": uuid, "name": "tcp/80", "pool": pool.map(reference),
            "load_balancer": reference("lb-1"), "protocol": "tcp", "protocol_port": 80,
            "allowed_cidrs": [], "timeout_client_data_ms": 50000,
            "timeout_member_connect_ms": 5000, "timeout_member_data_ms": 50000, "tags": {}
        })
    }

    fn member(uuid: &str, pool: &str) -> Value {
        json!({
            "href": "h", "uuid": uuid, "name": "10.0.0.7:30080", "enabled": true,
            "pool": reference(pool), "load_balancer": reference("lb-1"), "protocol_port": 30080,
            "monitor_port": 30080, "address": "10.0.0.7", "subnet": reference("sub-1"),
            "monitor_status": "up", "tags": {}
        })
    }

    /// A fake API: lb-1 with two pools both named `tcp` (a duplicate), lb-2 with one pool.
    fn account() -> Router {
        let collections = [
            (
                "/v1/load-balancers",
                json!([load_balancer("lb-1", "web"), load_balancer("lb-2", "other")]),
            ),
            (
                "/v1/load-balancers/pools",
                json!([
                    pool("p-2", "lb-1", "tcp", "2024-02-01T00:00:00Z"),
                    pool("p-1", "lb-1", "tcp", "2024-01-01T00:00:00Z"),
                    pool("p-3", "lb-2", "tcp", "2024-01-01T00:00:00Z"),
                ]),
            ),
            (
                "/v1/load-balancers/listeners",
                json!([listener("l-1", Some("p-1")), listener("l-0", None)]),
            ),
            (
                "/v1/load-balancers/health-monitors",
                json!([{
                    "href": "h", "uuid": "hm-1", "pool": reference("p-1"),
                    "load_balancer": reference("lb-1"), "type": "tcp", "delay_s": 2,
                    "timeout_s": 1, "up_threshold": 2, "down_threshold": 3, "http": null,
                    "tags": {}
                }]),
            ),
            (
                "/v1/floating-ips",
                json!([
                    {"href": "h", "network": "5.102.150.123/32", "load_balancer": reference("lb-1"),
                     "server": null, "tags": {}},
                    {"href": "h", "network": "5.102.150.124/32", "load_balancer": null,
                     "server": reference("srv-1"), "tags": {}}
                ]),
            ),
            (
                "/v1/subnets",
                json!([{"href": "h", "uuid": "sub-1", "cidr": "10.0.0.0/24"}]),
            ),
            (
                "/v1/regions",
                json!([{"slug": "lpg", "zones": [{"slug": "lpg1"}]},
                       {"slug": "rma", "zones": [{"slug": "rma1"}]}]),
            ),
            (
                "/v1/load-balancers/flavors",
                json!([{"slug": "lb-standard", "name": "LB-Standard"}]),
            ),
        ];
        collections
            .into_iter()
            .fold(Router::new(), |app, (path, body)| {
                app.route(path, get(move || async move { Json(body) }))
            })
    }

    async fn refreshed(want: &'static str) -> (Snapshot, u64, Vec<String>) {
        refreshed_wanting(want, &CatalogWants::default()).await
    }

    async fn refreshed_wanting(
        want: &'static str,
        wants: &CatalogWants,
    ) -> (Snapshot, u64, Vec<String>) {
        let members_read = Arc::new(Mutex::new(Vec::new()));
        let log = members_read.clone();
        let app = account().route(
            "/v1/load-balancers/pools/{pool}/members",
            get(move |Path(pool): Path<String>| async move {
                log.lock().unwrap().push(pool.clone());
                Json(json!([member(&format!("m-{pool}"), &pool)]))
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let client =
            CloudscaleClient::new(&format!("http://{address}/v1"), Secret::new("t")).unwrap();
        let client = Arc::new(client);
        let snapshot = refresh_with_catalog(&client, |lb| lb.name == want, wants)
            .await
            .unwrap();
        let mut members_read = members_read.lock().unwrap().clone();
        members_read.sort();
        (snapshot, client.request_count(), members_read)
    }

    #[tokio::test]
    async fn reads_each_collection_once_and_members_only_where_wanted() {
        let (_, requests, members_read) = refreshed("web").await;
        assert_eq!(members_read, ["p-1", "p-2"]);
        assert_eq!(requests, 6 + 2);
    }

    fn wanting(zone: &str, flavor: &str) -> CatalogWants {
        CatalogWants {
            zones: [zone.to_string()].into(),
            flavors: [flavor.to_string()].into(),
        }
    }

    #[tokio::test]
    async fn a_zone_and_flavor_in_use_need_no_catalog_read() {
        let (snapshot, requests, _) =
            refreshed_wanting("web", &wanting("lpg1", "lb-standard")).await;
        assert_eq!(requests, 6 + 2);
        assert_eq!(snapshot.catalog, Catalog::default());
    }

    #[tokio::test]
    async fn a_zone_or_flavor_no_load_balancer_uses_is_read_once_each() {
        let (snapshot, requests, _) = refreshed_wanting("web", &wanting("zz9", "lb-huge")).await;
        assert_eq!(requests, 6 + 2 + 2);
        assert_eq!(
            snapshot.catalog.zones,
            Some(vec!["lpg1".to_string(), "rma1".to_string()])
        );
        assert_eq!(
            snapshot.catalog.flavors,
            Some(vec!["lb-standard".to_string()])
        );
        let (snapshot, requests, _) = refreshed_wanting("web", &wanting("lpg1", "lb-huge")).await;
        assert_eq!(requests, 6 + 2 + 1, "only the flavors");
        assert_eq!(snapshot.catalog.zones, None);
    }

    #[tokio::test]
    async fn assembles_pools_with_their_objects() {
        let (snapshot, _, _) = refreshed("web").await;
        let web = snapshot.load_balancer("lb-1").expect("lb-1 refreshed");
        let tcp = &web.pools["tcp"];
        assert_eq!(tcp.pool.uuid.as_deref(), Some("p-1"));
        assert_eq!(
            tcp.monitor.as_ref().and_then(|m| m.uuid.as_deref()),
            Some("hm-1")
        );
        assert_eq!(
            tcp.listener.as_ref().and_then(|l| l.uuid.as_deref()),
            Some("l-1")
        );
        assert_eq!(tcp.members["10.0.0.7:30080"].uuid.as_deref(), Some("m-p-1"));
        assert_eq!(
            web.floating_ips,
            BTreeSet::from(["5.102.150.123/32".to_string()])
        );
        let other = snapshot.load_balancer("lb-2").expect("lb-2 refreshed");
        assert!(other.pools["tcp"].members.is_empty());
        assert!(other.floating_ips.is_empty());
        assert_eq!(snapshot.floating_ips.len(), 2);
        assert_eq!(snapshot.subnets[0].cidr, "10.0.0.0/24");
    }

    #[tokio::test]
    async fn a_pool_sharing_a_name_stays_visible_under_its_uuid() {
        let (snapshot, _, _) = refreshed("web").await;
        let web = snapshot.load_balancer("lb-1").unwrap();
        let keys: Vec<&str> = web.pools.keys().map(String::as_str).collect();
        assert_eq!(keys, ["tcp", "tcp#p-2"]);
        assert!(web.pools["tcp#p-2"].listener.is_none());
    }

    #[test]
    fn duplicate_member_names_get_the_uuid_appended() {
        let members: Vec<api::Member> =
            serde_json::from_value(json!([member("m-1", "p-1"), member("m-2", "p-1")])).unwrap();
        let keys: Vec<String> = members_by_name(members).into_keys().collect();
        assert_eq!(keys, ["10.0.0.7:30080", "10.0.0.7:30080#m-2"]);
    }
}
