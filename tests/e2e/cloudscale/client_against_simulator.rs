//! The cloudscale provider's client, refresh and executor, called as a library rather than
//! through the binary, against the cloudscale simulator over real HTTP: what execute creates,
//! refresh reads back under the same names and UUIDs. Here rather than in the provider's crate
//! because no provider crate depends on the simulators, not even for its tests
//! (`pipeline/layering.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;

use skyplan_cloudscale::client::{Backoff, CloudscaleClient, Secret, WaitPolicy};
use skyplan_cloudscale::execute::{execute, LbIds};
use skyplan_cloudscale::objects::{
    HttpObject, LbObject, LbObjects, ListenerObject, MemberObject, MonitorObject, PoolObject,
    Snapshot, Tags, OWNER_TAG,
};
use skyplan_cloudscale::ops::Op;
use skyplan_cloudscale::refresh::refresh;
use skyplan_cloudscale::spec::VipAddress;
use skyplan_sim::cloudscale::{spawn, SimHandle, SimOptions, DEFAULT_SUBNET_UUID, DEFAULT_TOKEN};

struct Cloud {
    sim: SimHandle,
    client: Arc<CloudscaleClient>,
    _dir: TempDir,
}

async fn cloud() -> Cloud {
    let dir = tempfile::tempdir().unwrap();
    let options = SimOptions {
        token: None,
        settle: Duration::from_millis(30),
        ..SimOptions::default()
    };
    let world = dir.path().join("cloudscale.json");
    let sim = spawn(world, "127.0.0.1:0".parse().unwrap(), options)
        .await
        .unwrap();
    let lb_wait = WaitPolicy {
        backoff: Backoff {
            first: Duration::from_millis(10),
            max: Duration::from_millis(50),
        },
        timeout: Duration::from_secs(10),
    };
    let client = CloudscaleClient::new(&sim.base_url(), Secret::new(DEFAULT_TOKEN))
        .unwrap()
        .with_lb_wait(lb_wait);
    Cloud {
        sim,
        client: Arc::new(client),
        _dir: dir,
    }
}

fn owned(address: &str) -> Tags {
    Tags::from([(OWNER_TAG.to_string(), address.to_string())])
}

fn lb(name: &str) -> LbObject {
    LbObject {
        uuid: None,
        name: name.into(),
        flavor: "lb-standard".into(),
        zone: "lpg1".into(),
        vip_addresses: vec![VipAddress {
            subnet: DEFAULT_SUBNET_UUID.to_string(),
            address: None,
        }],
        tags: owned(&format!("lb.{name}")),
        status: None,
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
        subnet: DEFAULT_SUBNET_UUID.to_string(),
        tags: owned("lb.web"),
    }
}

fn monitor(delay_s: u32) -> MonitorObject {
    MonitorObject {
        uuid: None,
        kind: "http".into(),
        delay_s,
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
        tags: owned("lb.web"),
    }
}

fn listener(name: &str) -> ListenerObject {
    ListenerObject {
        uuid: None,
        name: name.into(),
        protocol: "tcp".into(),
        protocol_port: 80,
        allowed_cidrs: vec![],
        timeout_client_data_ms: 50000,
        timeout_member_connect_ms: 5000,
        timeout_member_data_ms: 50000,
        tags: owned("lb.web"),
    }
}

fn build_ops() -> Vec<Op> {
    let pool = PoolObject {
        uuid: None,
        name: "tcp".into(),
        algorithm: "round_robin".into(),
        protocol: "tcp".into(),
        tags: owned("lb.web"),
    };
    let tcp = || "tcp".to_string();
    vec![
        Op::CreateLb { lb: lb("web") },
        Op::CreatePool { pool },
        Op::CreateMember {
            pool: tcp(),
            member: member(),
        },
        Op::CreateMonitor {
            pool: tcp(),
            monitor: monitor(2),
        },
        Op::CreateListener {
            pool: tcp(),
            listener: listener("tcp/80"),
        },
    ]
}

async fn run(client: &CloudscaleClient, ids: &mut LbIds, ops: &[Op]) {
    for op in ops {
        execute(client, ids, op)
            .await
            .unwrap_or_else(|error| panic!("{op}: {error}"));
    }
}

fn web(snapshot: &Snapshot) -> &LbObjects {
    let mut owned = snapshot.owned_by("lb.web");
    let web = owned.next().expect("lb.web exists");
    assert!(owned.next().is_none(), "one lb.web");
    web
}

#[tokio::test]
async fn what_execute_creates_refresh_reads_back() {
    let cloud = cloud().await;
    let mut ids = LbIds::default();
    run(&cloud.client, &mut ids, &build_ops()).await;

    let snapshot = refresh(&cloud.client, |_| true).await.unwrap();
    let web = web(&snapshot);
    assert_eq!(LbIds::from_live(web), ids);
    let tcp = &web.pools["tcp"];
    assert_eq!(tcp.members["10.0.0.7:30080"].protocol_port, 30080);
    assert_eq!(tcp.monitor.as_ref().map(|m| m.delay_s), Some(2));
    assert_eq!(
        tcp.listener.as_ref().map(|l| l.name.as_str()),
        Some("tcp/80")
    );
    assert_eq!(snapshot.subnets.len(), 1);
}

#[tokio::test]
async fn refresh_costs_one_request_per_collection_and_wanted_pool() {
    let cloud = cloud().await;
    run(&cloud.client, &mut LbIds::default(), &build_ops()).await;

    cloud.sim.reset_requests();
    let snapshot = refresh(&cloud.client, |_| false).await.unwrap();
    assert_eq!(cloud.sim.request_count(), 6);
    assert!(web(&snapshot).pools["tcp"].members.is_empty());

    cloud.sim.reset_requests();
    refresh(&cloud.client, |lb| lb.name == "web").await.unwrap();
    assert_eq!(cloud.sim.request_count(), 6 + 1);
}

#[tokio::test]
async fn updates_change_live_objects_in_place() {
    let cloud = cloud().await;
    let mut ids = LbIds::default();
    run(&cloud.client, &mut ids, &build_ops()).await;
    let before = ids.clone();

    let tcp = || "tcp".to_string();
    let updates = [
        Op::RenameLb {
            name: "web-2".into(),
        },
        Op::UpdateMonitor {
            pool: tcp(),
            monitor: monitor(5),
        },
        Op::UpdateListener {
            pool: tcp(),
            listener: listener("renamed"),
        },
    ];
    run(&cloud.client, &mut ids, &updates).await;

    let snapshot = refresh(&cloud.client, |_| true).await.unwrap();
    let web = web(&snapshot);
    assert_eq!(web.lb.name, "web-2");
    let tcp = &web.pools["tcp"];
    assert_eq!(tcp.monitor.as_ref().map(|m| m.delay_s), Some(5));
    assert_eq!(
        tcp.listener.as_ref().map(|l| l.name.as_str()),
        Some("renamed")
    );
    assert_eq!(ids, before, "updates keep every UUID");
}

#[tokio::test]
async fn a_floating_ip_moves_to_the_load_balancer() {
    let cloud = cloud().await;
    let mut other = LbIds::default();
    run(
        &cloud.client,
        &mut other,
        &[Op::CreateLb { lb: lb("other") }],
    )
    .await;
    let created: Value = cloud
        .client
        .post(
            "/floating-ips",
            &json!({"ip_version": 4, "load_balancer": other.lb}),
        )
        .await
        .unwrap();
    let network = created["network"].as_str().unwrap().to_string();

    let mut ids = LbIds::default();
    let assign = Op::AssignFloatingIp {
        network: network.clone(),
    };
    run(
        &cloud.client,
        &mut ids,
        &[Op::CreateLb { lb: lb("web") }, assign],
    )
    .await;

    let snapshot = refresh(&cloud.client, |_| false).await.unwrap();
    assert!(web(&snapshot).floating_ips.contains(&network));
    let other_lb = snapshot
        .load_balancer(other.lb.as_deref().unwrap())
        .unwrap();
    assert!(other_lb.floating_ips.is_empty());
}

#[tokio::test]
async fn deletes_remove_everything_and_repeat_harmlessly() {
    let cloud = cloud().await;
    let mut ids = LbIds::default();
    run(&cloud.client, &mut ids, &build_ops()).await;

    let tcp = || "tcp".to_string();
    let deletes = [
        Op::DeleteMember {
            pool: tcp(),
            member: member().name,
        },
        Op::DeleteListener {
            pool: tcp(),
            listener: "tcp/80".into(),
        },
        Op::DeleteMonitor { pool: tcp() },
        Op::DeletePool { pool: tcp() },
    ];
    run(&cloud.client, &mut ids, &deletes).await;
    let snapshot = refresh(&cloud.client, |_| true).await.unwrap();
    assert!(web(&snapshot).pools.is_empty());
    assert_eq!(ids.pools, BTreeMap::new());

    let lb_uuid = ids.lb.clone();
    run(
        &cloud.client,
        &mut ids,
        &[Op::DeleteLb { name: "web".into() }],
    )
    .await;
    assert_eq!(ids, LbIds::default());
    let snapshot = refresh(&cloud.client, |_| true).await.unwrap();
    assert_eq!(snapshot.owned_by("lb.web").count(), 0);

    let mut stale = LbIds {
        lb: lb_uuid,
        ..LbIds::default()
    };
    run(
        &cloud.client,
        &mut stale,
        &[Op::DeleteLb { name: "web".into() }],
    )
    .await;
}

/// The ops of `build_ops` with no tags anywhere: objects made by hand, then imported.
fn untagged_ops() -> Vec<Op> {
    build_ops()
        .into_iter()
        .map(|op| match op {
            Op::CreateLb { mut lb } => {
                lb.tags.clear();
                Op::CreateLb { lb }
            }
            Op::CreatePool { mut pool } => {
                pool.tags.clear();
                Op::CreatePool { pool }
            }
            Op::CreateMember { pool, mut member } => {
                member.tags.clear();
                Op::CreateMember { pool, member }
            }
            Op::CreateMonitor { pool, mut monitor } => {
                monitor.tags.clear();
                Op::CreateMonitor { pool, monitor }
            }
            Op::CreateListener { pool, mut listener } => {
                listener.tags.clear();
                Op::CreateListener { pool, listener }
            }
            other => other,
        })
        .collect()
}

#[tokio::test]
async fn verification_finds_tagged_and_untagged_objects_under_their_uuids() {
    use skyplan_cloudscale::verify::{compare, observe};
    use skyplan_core::model::Impact;
    for ops in [build_ops(), untagged_ops()] {
        let cloud = cloud().await;
        let mut ids = LbIds::default();
        run(&cloud.client, &mut ids, &ops).await;
        let observed = observe(&cloud.client, "lb.web", &ids).await.unwrap();
        assert_eq!(observed.status.as_deref(), Some("running"));
        assert_eq!(observed.ids, ids);
        let verified = compare("lb.web", Impact::None, &ids, &observed);
        assert_eq!(verified.summary(), "as predicted");
    }
}

#[tokio::test]
async fn verification_sees_a_pool_the_cloud_recreated() {
    use skyplan_cloudscale::verify::{compare, observe};
    use skyplan_core::model::Impact;
    let cloud = cloud().await;
    let mut ids = LbIds::default();
    run(&cloud.client, &mut ids, &build_ops()).await;
    let pool = ids.pools["tcp"].clone();
    let recreated = LbIds {
        pools: BTreeMap::from([("tcp".to_string(), format!("{pool}-was"))]),
        ..ids.clone()
    };
    let observed = observe(&cloud.client, "lb.web", &recreated).await.unwrap();
    let verified = compare("lb.web", Impact::Minimal, &recreated, &observed);
    assert_eq!(
        verified.summary(),
        "predicted minimal, but pool tcp was recreated"
    );
}
