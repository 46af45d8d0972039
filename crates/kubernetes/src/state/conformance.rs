//! The state backends' conformance suite (core's), and what only this backend has — a Lease
//! that expires, a state larger than a Secret — against the real kube-apiserver that
//! `.ci/kube-apiserver.sh` starts (SKYPLAN_TEST_KUBECONFIG). Each fixture is a workspace of
//! its own in the namespace `default`, so the tests run side by side.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use serde_json::json;

use skyplan_core::config::{KubernetesAccess, KubernetesBackend};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::state::conformance::Fixture;
use skyplan_core::state::{LockInfo, ResourceState, State, StateBackend};

use super::KubeBackend;

const TEST_KUBECONFIG_ENV: &str = "SKYPLAN_TEST_KUBECONFIG";

/// A fresh workspace on the test server.
struct KubeWorkspace(KubernetesBackend);

impl KubeWorkspace {
    fn backend(&self) -> KubeBackend {
        KubeBackend::open(&self.0).expect("the test server accepts connections")
    }
}

impl Fixture for KubeWorkspace {
    fn open(&self) -> Box<dyn StateBackend> {
        Box::new(self.backend())
    }
}

/// The tests that use it are ignored unless asked for; asked for without a server, they fail
/// saying what to set.
fn fixture() -> KubeWorkspace {
    with_lease(15)
}

fn with_lease(seconds: u32) -> KubeWorkspace {
    let path = match std::env::var(TEST_KUBECONFIG_ENV) {
        Ok(path) if !path.is_empty() => path,
        _ => panic!(
            "{TEST_KUBECONFIG_ENV} is not set: this test needs a real kube-apiserver \
             (source .ci/kube-apiserver.sh && kube_start)"
        ),
    };
    KubeWorkspace(KubernetesBackend {
        namespace: Some("default".into()),
        workspace: format!("t-{}", &uuid::Uuid::new_v4().simple().to_string()[..20]),
        access: KubernetesAccess::Kubeconfig {
            path: Some(PathBuf::from(path)),
            context: None,
        },
        lease_seconds: seconds,
    })
}

skyplan_core::conformance_tests!(
    #[ignore = "needs kube-apiserver: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
    fixture: fixture()
);

/// A Lease as a killed holder leaves it: renewed `ago` before now, never again.
fn leave_dead_holders_lease(fixture: &KubeWorkspace, seconds: i32) -> LockInfo {
    let holder = LockInfo {
        host: "elsewhere".into(),
        pid: 4242,
        ..LockInfo::for_this_process("apply")
    };
    let now = k8s_openapi::jiff::Timestamp::now();
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some(format!("skyplan-lock-{}", fixture.0.workspace)),
            annotations: Some(
                [(
                    "skyplan.io/lock".into(),
                    serde_json::to_string(&holder).unwrap(),
                )]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(format!("elsewhere/4242/{}", holder.id)),
            lease_duration_seconds: Some(seconds),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            ..LeaseSpec::default()
        }),
    };
    let backend = fixture.backend();
    let api: Api<Lease> = backend.lease.api.clone();
    backend
        .executor
        .run(async move { api.create(&PostParams::default(), &lease).await })
        .expect("create the Lease");
    holder
}

#[test]
#[ignore = "needs kube-apiserver: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_dead_holders_lease_is_taken_over_once_its_duration_has_passed_never_earlier() {
    let fixture = fixture();
    let left_at = Instant::now();
    let dead = leave_dead_holders_lease(&fixture, 3);
    let store = fixture.open();
    let refused = store.lock("plan", None).unwrap_err();
    assert_eq!(refused.holder(), Some(&dead));
    assert!(
        refused.to_string().contains("lease of 3 s"),
        "the refusal says when it can be taken over: {refused}"
    );
    let lock = loop {
        match store.lock("plan", None) {
            Ok(lock) => break lock,
            Err(error) => {
                assert!(error.holder().is_some(), "{error}");
                assert!(
                    left_at.elapsed() < Duration::from_secs(10),
                    "never taken over"
                );
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let waited = left_at.elapsed();
    assert!(
        waited >= Duration::from_secs(3),
        "taken over early: {waited:?}"
    );
    assert_eq!(lock.taken_over(), Some(&dead));
    println!("a 3 s lease left by a dead holder was taken over after {waited:?}");
}

#[test]
#[ignore = "needs kube-apiserver: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_held_lease_is_renewed_past_its_duration() {
    let fixture = with_lease(2);
    let held = fixture.open().lock("apply", None).unwrap();
    // Three durations: without renewals the Lease would have expired twice over.
    std::thread::sleep(Duration::from_secs(6));
    let refused = fixture.open().lock("plan", None).unwrap_err();
    assert_eq!(refused.holder(), Some(held.info()));
    drop(held);
    fixture.open().lock("plan", None).unwrap();
}

/// A resource of `n` with the IDs and attributes a cloud gives a load balancer: mostly
/// UUIDs and addresses, which compress little.
fn resource(n: usize, serial: u64) -> ResourceState {
    let uuid = |i: usize| {
        let seed = (n as u128) << 64 | (i as u128) << 32 | u128::from(serial);
        uuid::Uuid::from_u128(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
    };
    let members: Vec<_> = (0..6)
        .map(
            |i| json!({"uuid": uuid(10 + i), "address": format!("10.{}.{}.{i}", n / 250, n % 250)}),
        )
        .collect();
    ResourceState {
        provider: "cloudscale".into(),
        id: uuid(0).to_string(),
        ids: json!({"pools": {"tcp/80": uuid(1), "tcp/443": uuid(2)},
                    "listeners": [uuid(3), uuid(4)], "monitors": [uuid(5), uuid(6)]}),
        attributes: json!({"zone": "lpg1", "name": format!("lb-{n}-{serial}"),
                           "members": members, "vip": format!("5.102.{}.{}", n / 250, n % 250)}),
        depends_on: vec![],
    }
}

fn state_of(resources: usize, serial: u64) -> State {
    let mut state = State::new();
    for n in 0..resources {
        let address = Address::new(ResourceKind::LoadBalancer, format!("lb-{n:05}"));
        state.resources.insert(address, resource(n, serial));
    }
    state
}

#[test]
#[ignore = "needs kube-apiserver: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_state_of_5000_resources_is_kept_across_several_secrets() {
    let fixture = fixture();
    let backend = fixture.backend();
    let mut state = state_of(5000, 1);
    state.serial = 1;
    let json = serde_json::to_vec_pretty(&state).unwrap();
    let started = Instant::now();
    let secrets = backend.write_counted(&state, None).unwrap();
    let written = started.elapsed();
    assert!(
        secrets > 2,
        "a state this large takes several Secrets: {secrets}"
    );
    let started = Instant::now();
    let loaded = fixture.open().load().unwrap().unwrap();
    let read = started.elapsed();
    assert_eq!(loaded, state);
    let compressed = super::codec::compress(&json).len();
    println!(
        "5000 resources: {} bytes of JSON, {compressed} compressed, in {secrets} Secrets; \
         written in {written:?}, read in {read:?}",
        json.len()
    );
    // Replacing it leaves the new generation's Secrets only.
    let mut next = state_of(5000, 2);
    (next.lineage, next.serial) = (state.lineage.clone(), 1);
    fixture.open().save(&mut next).unwrap();
    assert_eq!(fixture.open().load().unwrap().unwrap(), next);
    let store = backend.state.clone();
    let pieces = backend.executor.run(async move { store.pieces(&[]).await });
    let generations: std::collections::BTreeSet<_> =
        pieces.iter().map(|p| p.generation.clone()).collect();
    assert_eq!(
        (pieces.len(), generations.len()),
        (2, 1),
        "one generation's pieces left"
    );
}

/// Readers racing a writer that replaces a multi-Secret state: each read is one whole state.
#[test]
#[ignore = "needs kube-apiserver: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_reader_never_sees_a_half_written_state() {
    let fixture = std::sync::Arc::new(fixture());
    let mut state = state_of(3000, 0);
    fixture.open().save(&mut state).unwrap();
    let writer = {
        let (fixture, mut state) = (fixture.clone(), state.clone());
        std::thread::spawn(move || {
            let store = fixture.open();
            for _ in 0..4 {
                let mut next = state_of(3000, state.serial);
                (next.lineage, next.serial) = (state.lineage.clone(), state.serial);
                store.save(&mut next).unwrap();
                state = next;
            }
        })
    };
    let reader = fixture.open();
    let mut reads = 0;
    while !writer.is_finished() {
        let loaded = reader.load().unwrap().unwrap();
        // Every resource as the write of that serial made it: nothing from another write.
        let expected = state_of(3000, loaded.serial - 1);
        assert_eq!(
            loaded.resources, expected.resources,
            "serial {}",
            loaded.serial
        );
        reads += 1;
    }
    writer.join().unwrap();
    assert_eq!(reader.load().unwrap().unwrap().serial, 5);
    println!("{reads} reads during 4 writes, each a whole state");
}
