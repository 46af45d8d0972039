//! Performing one `Op` on one load balancer. Ops name objects the way the CCM does (pool by
//! name, member by name within its pool); `LbIds` turns those names into UUIDs and learns the
//! UUIDs of the objects the ops create.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::api::{
    AssignFloatingIp, CreateHealthMonitor, CreateListener, CreateLoadBalancer, CreateMember,
    CreatePool, Rename, Retag, UpdateHealthMonitor, UpdateListener,
};
use super::client::{CloudscaleClient, Error};
use super::objects::OWNER_TAG;
use super::objects::{
    LbObject, LbObjects, ListenerObject, MemberObject, MonitorObject, PoolObject,
};
use super::ops::Op;

const LOAD_BALANCERS: &str = "/load-balancers";
const POOLS: &str = "/load-balancers/pools";
const MONITORS: &str = "/load-balancers/health-monitors";
const LISTENERS: &str = "/load-balancers/listeners";
const FLOATING_IPS: &str = "/floating-ips";

/// UUIDs of a load balancer's objects, filled from the refreshed LbObjects and updated as
/// operations create and delete objects.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LbIds {
    pub lb: Option<String>,
    /// By pool name.
    pub pools: BTreeMap<String, String>,
    /// By pool name, then member name.
    pub members: BTreeMap<String, BTreeMap<String, String>>,
    /// By pool name: a pool has at most one monitor.
    pub monitors: BTreeMap<String, String>,
    /// By pool name rather than listener name, which an update may change.
    pub listeners: BTreeMap<String, String>,
}

impl LbIds {
    pub fn from_live(live: &LbObjects) -> LbIds {
        let mut ids = LbIds {
            lb: live.lb.uuid.clone(),
            ..LbIds::default()
        };
        for (pool, set) in &live.pools {
            let insert = |map: &mut BTreeMap<String, String>, uuid: &Option<String>| {
                if let Some(uuid) = uuid {
                    map.insert(pool.clone(), uuid.clone());
                }
            };
            insert(&mut ids.pools, &set.pool.uuid);
            if let Some(monitor) = &set.monitor {
                insert(&mut ids.monitors, &monitor.uuid);
            }
            if let Some(listener) = &set.listener {
                insert(&mut ids.listeners, &listener.uuid);
            }
            let members: BTreeMap<String, String> = set
                .members
                .iter()
                .filter_map(|(name, member)| Some((name.clone(), member.uuid.clone()?)))
                .collect();
            if !members.is_empty() {
                ids.members.insert(pool.clone(), members);
            }
        }
        ids
    }

    fn lb(&self) -> Result<String, Error> {
        self.lb
            .clone()
            .ok_or_else(|| Error::UnknownObject("the load balancer".into()))
    }

    fn pool(&self, pool: &str) -> Result<String, Error> {
        known(&self.pools, pool, || format!("pool `{pool}`"))
    }

    fn member(&self, pool: &str, member: &str) -> Result<String, Error> {
        let members = self.members.get(pool).cloned().unwrap_or_default();
        known(&members, member, || {
            format!("member `{member}` of pool `{pool}`")
        })
    }

    fn monitor(&self, pool: &str) -> Result<String, Error> {
        known(&self.monitors, pool, || {
            format!("the health monitor of pool `{pool}`")
        })
    }

    fn listener(&self, pool: &str) -> Result<String, Error> {
        known(&self.listeners, pool, || {
            format!("the listener of pool `{pool}`")
        })
    }
}

fn known(
    uuids: &BTreeMap<String, String>,
    key: &str,
    what: impl FnOnce() -> String,
) -> Result<String, Error> {
    uuids
        .get(key)
        .cloned()
        .ok_or_else(|| Error::UnknownObject(what()))
}

/// The part of a create response skyplan needs.
#[derive(Deserialize)]
struct Created {
    uuid: String,
}

/// Performs `op` and records in `ids` what it created or deleted. Waits for the load balancer
/// to be `running` first (it applies one sub-object change at a time and is `changing` until
/// done), and after creating it.
pub async fn execute(client: &CloudscaleClient, ids: &mut LbIds, op: &Op) -> Result<(), Error> {
    if !matches!(op, Op::CreateLb { .. }) {
        if let Err(error) = wait_until_running(client, &ids.lb()?).await {
            if error.is_not_found() && matches!(op, Op::DeleteLb { .. }) {
                *ids = LbIds::default();
                return Ok(());
            }
            return Err(error);
        }
    }
    match op {
        Op::CreateLb { lb } => create_lb(client, ids, lb).await,
        Op::RenameLb { name } => {
            let path = format!("{LOAD_BALANCERS}/{}", ids.lb()?);
            client.patch(&path, &Rename { name }).await
        }
        Op::TagLb { tags } => {
            let path = format!("{LOAD_BALANCERS}/{}", ids.lb()?);
            client.patch(&path, &Retag { tags }).await
        }
        Op::DeleteLb { .. } => {
            delete_if_present(client, &format!("{LOAD_BALANCERS}/{}", ids.lb()?)).await?;
            *ids = LbIds::default();
            Ok(())
        }
        Op::CreatePool { pool } => create_pool(client, ids, pool).await,
        Op::DeletePool { pool } => delete_pool(client, ids, pool).await,
        Op::CreateMember { pool, member } => create_member(client, ids, pool, member).await,
        Op::DeleteMember { pool, member } => delete_member(client, ids, pool, member).await,
        Op::CreateMonitor { pool, monitor } => create_monitor(client, ids, pool, monitor).await,
        Op::UpdateMonitor { pool, monitor } => {
            let path = format!("{MONITORS}/{}", ids.monitor(pool)?);
            client
                .patch(&path, &UpdateHealthMonitor::from(monitor))
                .await
        }
        Op::DeleteMonitor { pool } => {
            delete_if_present(client, &format!("{MONITORS}/{}", ids.monitor(pool)?)).await?;
            ids.monitors.remove(pool);
            Ok(())
        }
        Op::CreateListener { pool, listener } => create_listener(client, ids, pool, listener).await,
        Op::UpdateListener { pool, listener } => {
            let path = format!("{LISTENERS}/{}", ids.listener(pool)?);
            client.patch(&path, &UpdateListener::from(listener)).await
        }
        Op::DeleteListener { pool, .. } => {
            delete_if_present(client, &format!("{LISTENERS}/{}", ids.listener(pool)?)).await?;
            ids.listeners.remove(pool);
            Ok(())
        }
        Op::AssignFloatingIp { network } => assign_floating_ip(client, &ids.lb()?, network).await,
        // Controller mode is applied by `ccm::apply`, never one cloud call at a time.
        Op::WriteService { .. } | Op::DeleteService { .. } | Op::Controller { .. } => Ok(()),
    }
}

/// How often a create that failed uncertainly is looked for and tried again.
const CREATE_ATTEMPTS: u32 = 4;

/// POSTs a create; when the answer is lost (a server error, a dropped connection), first looks
/// for the object the request may have created — by the name or tag it carries — and adopts
/// it, and only sends the request again when it is not there. A create is never blindly
/// repeated, so a flaky network cannot produce duplicates.
async fn create<B, F, Fut>(
    client: &CloudscaleClient,
    path: &str,
    body: &B,
    find: F,
) -> Result<String, Error>
where
    B: Serialize + Sync,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Option<String>, Error>>,
{
    let mut failures = 0;
    loop {
        match client.post::<_, Created>(path, body).await {
            Ok(created) => return Ok(created.uuid),
            Err(error) if error.is_uncertain() && failures + 1 < CREATE_ATTEMPTS => {
                if let Some(uuid) = find().await? {
                    tracing::info!(
                        path,
                        "cloudscale API: the create went through despite {error}; adopting {uuid}"
                    );
                    return Ok(uuid);
                }
                tracing::debug!(
                    path,
                    "cloudscale API: create failed and created nothing ({error}); trying again"
                );
                tokio::time::sleep(client.lb_wait().backoff.delay(failures)).await;
                failures += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Lists `path` and returns the UUID of the one object `matches` selects.
async fn find_one(
    client: &CloudscaleClient,
    path: &str,
    matches: impl Fn(&serde_json::Value) -> bool,
) -> Result<Option<String>, Error> {
    let objects: Vec<serde_json::Value> = client.get(path).await?;
    Ok(objects
        .iter()
        .find(|o| matches(o))
        .and_then(|o| o["uuid"].as_str())
        .map(str::to_string))
}

fn named(object: &serde_json::Value, name: &str) -> bool {
    object["name"] == name
}

fn under(object: &serde_json::Value, parent: &str, uuid: &str) -> bool {
    object[parent]["uuid"] == uuid
}

async fn create_lb(client: &CloudscaleClient, ids: &mut LbIds, lb: &LbObject) -> Result<(), Error> {
    let owner = lb.tags.get(OWNER_TAG).cloned().unwrap_or_default();
    let owned = format!("{LOAD_BALANCERS}?tag:{OWNER_TAG}={owner}");
    let find = || find_one(client, &owned, |o| named(o, &lb.name));
    let uuid = create(client, LOAD_BALANCERS, &CreateLoadBalancer::from(lb), find).await?;
    // A new load balancer has nothing under it yet.
    *ids = LbIds {
        lb: Some(uuid.clone()),
        ..LbIds::default()
    };
    wait_until_running(client, &uuid).await
}

async fn create_pool(
    client: &CloudscaleClient,
    ids: &mut LbIds,
    pool: &PoolObject,
) -> Result<(), Error> {
    let lb = ids.lb()?;
    let find = || {
        find_one(client, POOLS, |o| {
            named(o, &pool.name) && under(o, "load_balancer", &lb)
        })
    };
    let uuid = create(client, POOLS, &CreatePool::new(pool, &lb), find).await?;
    ids.pools.insert(pool.name.clone(), uuid);
    Ok(())
}

async fn delete_pool(client: &CloudscaleClient, ids: &mut LbIds, pool: &str) -> Result<(), Error> {
    delete_if_present(client, &format!("{POOLS}/{}", ids.pool(pool)?)).await?;
    // The API deletes a pool's members and health monitor with it; a listener stays, with no
    // pool, until deleted on its own.
    ids.pools.remove(pool);
    ids.members.remove(pool);
    ids.monitors.remove(pool);
    Ok(())
}

async fn create_member(
    client: &CloudscaleClient,
    ids: &mut LbIds,
    pool: &str,
    member: &MemberObject,
) -> Result<(), Error> {
    let path = format!("{POOLS}/{}/members", ids.pool(pool)?);
    let find = || find_one(client, &path, |o| named(o, &member.name));
    let uuid = create(client, &path, &CreateMember::from(member), find).await?;
    ids.members
        .entry(pool.to_string())
        .or_default()
        .insert(member.name.clone(), uuid);
    Ok(())
}

async fn delete_member(
    client: &CloudscaleClient,
    ids: &mut LbIds,
    pool: &str,
    member: &str,
) -> Result<(), Error> {
    let path = format!(
        "{POOLS}/{}/members/{}",
        ids.pool(pool)?,
        ids.member(pool, member)?
    );
    delete_if_present(client, &path).await?;
    if let Some(members) = ids.members.get_mut(pool) {
        members.remove(member);
    }
    Ok(())
}

async fn create_monitor(
    client: &CloudscaleClient,
    ids: &mut LbIds,
    pool: &str,
    monitor: &MonitorObject,
) -> Result<(), Error> {
    let pool_uuid = ids.pool(pool)?;
    let body = CreateHealthMonitor::new(monitor, &pool_uuid);
    let find = || find_one(client, MONITORS, |o| under(o, "pool", &pool_uuid));
    let uuid = create(client, MONITORS, &body, find).await?;
    ids.monitors.insert(pool.to_string(), uuid);
    Ok(())
}

async fn create_listener(
    client: &CloudscaleClient,
    ids: &mut LbIds,
    pool: &str,
    listener: &ListenerObject,
) -> Result<(), Error> {
    let pool_uuid = ids.pool(pool)?;
    let body = CreateListener::new(listener, &pool_uuid);
    let find = || {
        find_one(client, LISTENERS, |o| {
            named(o, &listener.name) && under(o, "pool", &pool_uuid)
        })
    };
    let uuid = create(client, LISTENERS, &body, find).await?;
    ids.listeners.insert(pool.to_string(), uuid);
    Ok(())
}

/// The API addresses a floating IP by its address, without the prefix length.
async fn assign_floating_ip(
    client: &CloudscaleClient,
    lb: &str,
    network: &str,
) -> Result<(), Error> {
    let address = network
        .split_once('/')
        .map_or(network, |(address, _)| address);
    let path = format!("{FLOATING_IPS}/{address}");
    client
        .patch(&path, &AssignFloatingIp { load_balancer: lb })
        .await
}

/// Deleting something already gone is done, not failed: an earlier, interrupted apply or
/// someone else may have deleted it.
async fn delete_if_present(client: &CloudscaleClient, path: &str) -> Result<(), Error> {
    match client.delete(path).await {
        Err(error) if error.is_not_found() => Ok(()),
        outcome => outcome,
    }
}

pub(super) async fn wait_until_running(client: &CloudscaleClient, lb: &str) -> Result<(), Error> {
    #[derive(Deserialize)]
    struct Status {
        status: String,
    }
    let policy = client.lb_wait();
    let started = Instant::now();
    let path = format!("{LOAD_BALANCERS}/{lb}");
    let mut polls = 0;
    loop {
        let Status { status } = client.get(&path).await?;
        if status == "running" {
            return Ok(());
        }
        if started.elapsed() >= policy.timeout {
            return Err(Error::NotRunning {
                uuid: lb.to_string(),
                status,
                waited: started.elapsed(),
            });
        }
        tokio::time::sleep(policy.backoff.delay(polls)).await;
        polls += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{Method, StatusCode, Uri};
    use axum::response::{IntoResponse, Response};
    use axum::{Json, Router};
    use serde_json::{json, Value};

    use super::*;
    use crate::client::{Backoff, Secret, WaitPolicy};
    use crate::objects::{HttpObject, PoolSet, SmallMap, Tags};

    /// A fake API that records every write, answers creates with fresh UUIDs, reports the load
    /// balancer `changing` for the first `changing_polls` polls, and 404 for `missing` paths.
    #[derive(Default)]
    struct Fake {
        writes: Mutex<Vec<(Method, String, Value)>>,
        polls: AtomicU32,
        changing_polls: u32,
        missing: HashSet<String>,
    }

    async fn answer(
        State(fake): State<Arc<Fake>>,
        method: Method,
        uri: Uri,
        body: Bytes,
    ) -> Response {
        let path = uri.path().trim_start_matches("/v1").to_string();
        if fake.missing.contains(&path) {
            return (StatusCode::NOT_FOUND, Json(json!({"detail": "Not found."}))).into_response();
        }
        if method == Method::GET {
            let poll = fake.polls.fetch_add(1, Ordering::SeqCst);
            let status = if poll < fake.changing_polls {
                "changing"
            } else {
                "running"
            };
            return Json(json!({"uuid": "lb-1", "status": status})).into_response();
        }
        let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let mut writes = fake.writes.lock().unwrap();
        writes.push((method.clone(), path, body));
        if method == Method::POST {
            let uuid = format!("new-{}", writes.len());
            return (StatusCode::CREATED, Json(json!({"uuid": uuid}))).into_response();
        }
        StatusCode::NO_CONTENT.into_response()
    }

    async fn serve(fake: Fake) -> (CloudscaleClient, Arc<Fake>) {
        let fake = Arc::new(fake);
        let app = Router::new().fallback(answer).with_state(fake.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let client = CloudscaleClient::new(&format!("http://{address}/v1"), Secret::new("t"))
            .unwrap()
            .with_lb_wait(WaitPolicy {
                backoff: Backoff {
                    first: Duration::from_millis(1),
                    max: Duration::from_millis(2),
                },
                timeout: Duration::from_millis(50),
            });
        (client, fake)
    }

    fn writes(fake: &Fake) -> Vec<(Method, String, Value)> {
        fake.writes.lock().unwrap().clone()
    }

    fn tags() -> Tags {
        Tags::from([("skyplan.address".into(), "lb.web".into())])
    }

    fn lb() -> LbObject {
        LbObject {
            uuid: None,
            name: "web".into(),
            flavor: "lb-standard".into(),
            zone: "lpg1".into(),
            vip_addresses: vec![],
            tags: tags(),
            status: None,
        }
    }

    fn pool() -> PoolObject {
        PoolObject {
            uuid: None,
            name: "tcp".into(),
            algorithm: "round_robin".into(),
            protocol: "tcp".into(),
            tags: tags(),
        }
    }

    fn member() -> MemberObject {
        MemberObject {
            uuid: None,
            name: "10.0.0.7:30080".into(),
            enabled: true,
            protocol_port: 30080,
            monitor_port: 30080,
            address: "10.0.0.7".into(),
            subnet: "sub-1".into(),
            tags: tags(),
        }
    }

    fn monitor() -> MonitorObject {
        MonitorObject {
            uuid: None,
            kind: "http".into(),
            delay_s: 2,
            timeout_s: 1,
            up_threshold: 2,
            down_threshold: 3,
            http: Some(HttpObject {
                expected_codes: vec!["200".into()],
                method: "GET".into(),
                url_path: "/healthz".into(),
                version: "1.1".into(),
                host: None,
            }),
            tags: tags(),
        }
    }

    fn listener() -> ListenerObject {
        ListenerObject {
            uuid: None,
            name: "tcp/80".into(),
            protocol: "tcp".into(),
            protocol_port: 80,
            allowed_cidrs: vec![],
            timeout_client_data_ms: 50000,
            timeout_member_connect_ms: 5000,
            timeout_member_data_ms: 50000,
            tags: tags(),
        }
    }

    /// lb-1 with pool `tcp` (p-1) holding member m-1, monitor hm-1 and listener l-1.
    fn live_ids() -> LbIds {
        let with_uuid = |uuid: &str| Some(uuid.to_string());
        let live = LbObjects {
            lb: LbObject {
                uuid: with_uuid("lb-1"),
                ..lb()
            },
            pools: SmallMap::from([(
                "tcp".to_string(),
                PoolSet {
                    pool: PoolObject {
                        uuid: with_uuid("p-1"),
                        ..pool()
                    },
                    members: BTreeMap::from([(
                        member().name,
                        MemberObject {
                            uuid: with_uuid("m-1"),
                            ..member()
                        },
                    )]),
                    monitor: Some(MonitorObject {
                        uuid: with_uuid("hm-1"),
                        ..monitor()
                    }),
                    listener: Some(ListenerObject {
                        uuid: with_uuid("l-1"),
                        ..listener()
                    }),
                },
            )]),
            floating_ips: BTreeSet::new(),
        };
        LbIds::from_live(&live)
    }

    #[test]
    fn ids_come_from_the_live_objects() {
        let ids = live_ids();
        assert_eq!(ids.lb.as_deref(), Some("lb-1"));
        assert_eq!(ids.pools["tcp"], "p-1");
        assert_eq!(ids.members["tcp"]["10.0.0.7:30080"], "m-1");
        assert_eq!(ids.monitors["tcp"], "hm-1");
        assert_eq!(ids.listeners["tcp"], "l-1");
    }

    #[tokio::test]
    async fn creates_send_parent_uuids_and_record_new_ones() {
        let (client, fake) = serve(Fake::default()).await;
        let mut ids = LbIds::default();
        let ops = [
            Op::CreateLb { lb: lb() },
            Op::CreatePool { pool: pool() },
            Op::CreateMember {
                pool: "tcp".into(),
                member: member(),
            },
            Op::CreateMonitor {
                pool: "tcp".into(),
                monitor: monitor(),
            },
            Op::CreateListener {
                pool: "tcp".into(),
                listener: listener(),
            },
        ];
        for op in &ops {
            execute(&client, &mut ids, op).await.unwrap();
        }
        let writes = writes(&fake);
        let paths: Vec<&str> = writes.iter().map(|(_, path, _)| path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/load-balancers",
                "/load-balancers/pools",
                "/load-balancers/pools/new-2/members",
                "/load-balancers/health-monitors",
                "/load-balancers/listeners"
            ]
        );
        assert_eq!(writes[0].2["tags"]["skyplan.address"], "lb.web");
        assert_eq!(writes[1].2["load_balancer"], "new-1");
        assert_eq!(writes[3].2["pool"], "new-2");
        assert_eq!(writes[4].2["pool"], "new-2");
        let expected = LbIds {
            lb: Some("new-1".into()),
            pools: BTreeMap::from([("tcp".into(), "new-2".into())]),
            members: BTreeMap::from([(
                "tcp".into(),
                BTreeMap::from([("10.0.0.7:30080".into(), "new-3".into())]),
            )]),
            monitors: BTreeMap::from([("tcp".into(), "new-4".into())]),
            listeners: BTreeMap::from([("tcp".into(), "new-5".into())]),
        };
        assert_eq!(ids, expected);
    }

    #[tokio::test]
    async fn updates_patch_only_in_place_fields() {
        let (client, fake) = serve(Fake::default()).await;
        let mut ids = live_ids();
        let renamed = ListenerObject {
            name: "renamed".into(),
            ..listener()
        };
        let ops = [
            Op::RenameLb {
                name: "web-2".into(),
            },
            Op::UpdateMonitor {
                pool: "tcp".into(),
                monitor: monitor(),
            },
            Op::UpdateListener {
                pool: "tcp".into(),
                listener: renamed,
            },
            Op::AssignFloatingIp {
                network: "5.102.150.123/32".into(),
            },
        ];
        for op in &ops {
            execute(&client, &mut ids, op).await.unwrap();
        }
        let writes = writes(&fake);
        assert!(writes.iter().all(|(method, _, _)| method == Method::PATCH));
        assert_eq!(writes[0].1, "/load-balancers/lb-1");
        assert_eq!(writes[0].2, json!({"name": "web-2"}));
        assert_eq!(writes[1].1, "/load-balancers/health-monitors/hm-1");
        assert!(writes[1].2["http"].get("version").is_none());
        assert!(writes[1].2.get("type").is_none());
        assert_eq!(writes[2].1, "/load-balancers/listeners/l-1");
        assert_eq!(writes[2].2["name"], "renamed");
        assert!(writes[2].2.get("protocol_port").is_none());
        assert_eq!(writes[3].1, "/floating-ips/5.102.150.123");
        assert_eq!(writes[3].2, json!({"load_balancer": "lb-1"}));
        assert_eq!(ids, live_ids());
    }

    #[tokio::test]
    async fn tagging_patches_the_whole_tag_map_of_the_load_balancer() {
        let (client, fake) = serve(Fake::default()).await;
        let mut ids = live_ids();
        let mut tags = crate::objects::Tags::default();
        tags.insert("team".into(), "edge".into());
        tags.insert(OWNER_TAG.into(), "load-balancer.web".into());
        execute(&client, &mut ids, &Op::TagLb { tags })
            .await
            .unwrap();
        let writes = writes(&fake);
        assert_eq!(writes.len(), 1, "{writes:?}");
        assert_eq!(
            (&writes[0].0, writes[0].1.as_str()),
            (&Method::PATCH, "/load-balancers/lb-1")
        );
        assert_eq!(
            writes[0].2,
            json!({"tags": {"team": "edge", OWNER_TAG: "load-balancer.web"}})
        );
        assert_eq!(ids, live_ids());
    }

    #[tokio::test]
    async fn deleting_what_is_already_gone_is_done() {
        let missing = HashSet::from(["/load-balancers/pools/p-1/members/m-1".to_string()]);
        let (client, fake) = serve(Fake {
            missing,
            ..Fake::default()
        })
        .await;
        let mut ids = live_ids();
        let op = Op::DeleteMember {
            pool: "tcp".into(),
            member: "10.0.0.7:30080".into(),
        };
        execute(&client, &mut ids, &op).await.unwrap();
        assert!(ids.members["tcp"].is_empty());
        assert!(writes(&fake).is_empty());
    }

    #[tokio::test]
    async fn deleting_a_pool_forgets_its_members_and_monitor() {
        let (client, fake) = serve(Fake::default()).await;
        let mut ids = live_ids();
        execute(&client, &mut ids, &Op::DeletePool { pool: "tcp".into() })
            .await
            .unwrap();
        assert_eq!(writes(&fake)[0].1, "/load-balancers/pools/p-1");
        assert!(ids.pools.is_empty() && ids.members.is_empty() && ids.monitors.is_empty());
        assert_eq!(ids.listeners["tcp"], "l-1");
    }

    #[tokio::test]
    async fn deleting_a_vanished_load_balancer_is_done() {
        let missing = HashSet::from(["/load-balancers/lb-1".to_string()]);
        let (client, _) = serve(Fake {
            missing,
            ..Fake::default()
        })
        .await;
        let mut ids = live_ids();
        execute(&client, &mut ids, &Op::DeleteLb { name: "web".into() })
            .await
            .unwrap();
        assert_eq!(ids, LbIds::default());
    }

    #[tokio::test]
    async fn waits_for_the_load_balancer_to_be_running() {
        let (client, fake) = serve(Fake {
            changing_polls: 3,
            ..Fake::default()
        })
        .await;
        let mut ids = live_ids();
        execute(&client, &mut ids, &Op::DeleteMonitor { pool: "tcp".into() })
            .await
            .unwrap();
        assert_eq!(fake.polls.load(Ordering::SeqCst), 4);
        assert_eq!(writes(&fake).len(), 1);
        assert!(!ids.monitors.contains_key("tcp"));
    }

    #[tokio::test]
    async fn gives_up_on_a_load_balancer_that_stays_changing() {
        let (client, fake) = serve(Fake {
            changing_polls: u32::MAX,
            ..Fake::default()
        })
        .await;
        let mut ids = live_ids();
        let error = execute(&client, &mut ids, &Op::RenameLb { name: "x".into() })
            .await
            .unwrap_err();
        assert!(matches!(&error, Error::NotRunning { status, .. } if status == "changing"));
        assert!(writes(&fake).is_empty());
    }

    #[tokio::test]
    async fn an_unknown_pool_is_an_error_before_any_write() {
        let (client, fake) = serve(Fake::default()).await;
        let mut ids = live_ids();
        let op = Op::CreateMember {
            pool: "udp".into(),
            member: member(),
        };
        let error = execute(&client, &mut ids, &op).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "no UUID known for pool `udp`; the live state may have changed since the plan was made"
        );
        assert!(writes(&fake).is_empty());
    }
}
