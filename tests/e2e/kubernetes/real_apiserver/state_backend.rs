//! `[backend.kubernetes]` against the real kube-apiserver: two projects — two machines —
//! sharing one workspace, a second run refused naming the holder, a holder killed with
//! `kill -9` whose Lease is taken over once its duration has passed (the time it took is
//! printed), the kill test with state, journal and lock in the cluster, and `state migrate`
//! into the cluster and back.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use skyplan_core::config::{KubernetesAccess, KubernetesBackend};
use skyplan_core::state::StateBackend;
use skyplan_kubernetes::state::KubeBackend;

use crate::cloudscale::kill_recovery::{
    config_a, config_b, crash_and_recover_in, kill_points, reference, Cloud,
};
use crate::kubernetes::real_apiserver::{unwrapped, RealCluster};
use crate::support::{run, Output, Project, SimServer, SIM_TOKEN};

fn fresh_workspace() -> String {
    format!("e2e-{}", &uuid::Uuid::new_v4().simple().to_string()[..16])
}

/// The `[backend.kubernetes]` table of a config: `workspace` in the namespace `default`.
fn backend_toml(cluster: &RealCluster, workspace: &str, lease_seconds: Option<u32>) -> String {
    let lease = lease_seconds.map_or(String::new(), |s| format!("lease-seconds = {s}\n"));
    format!(
        "[backend.kubernetes]\nnamespace = \"default\"\nworkspace = \"{workspace}\"\nkubeconfig = \"{}\"\n{lease}\n",
        cluster.kubeconfig.display()
    )
}

/// The workspace as the library sees it, to probe the lock from the test itself.
fn open(cluster: &RealCluster, workspace: &str) -> KubeBackend {
    KubeBackend::open(&KubernetesBackend {
        namespace: Some("default".into()),
        workspace: workspace.into(),
        access: KubernetesAccess::Kubeconfig {
            path: Some(cluster.kubeconfig.clone()),
            context: None,
        },
        lease_seconds: 15,
    })
    .expect("the test server accepts connections")
}

fn lb(name: &str, port: u16, node_port: u16) -> String {
    format!(
        "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\
         [[load-balancer.{name}.ports]]\nname = \"p{port}\"\nport = {port}\nnode-port = {node_port}\n\n"
    )
}

/// One simulated cloud (slow to settle, so an apply lasts) and two projects on one workspace.
struct Team {
    sim: SimServer,
    _world: tempfile::TempDir,
    backend: String,
    alice: Project,
    bob: Project,
}

impl Team {
    fn new(backend: String) -> Team {
        let world = tempfile::tempdir().unwrap();
        let sim = SimServer::start_settling(&world.path().join("world.json"), 700);
        let team = Team {
            sim,
            _world: world,
            backend,
            alice: Project::new(),
            bob: Project::new(),
        };
        let resources = lb("web", 80, 30080) + &lb("api", 443, 30443) + &lb("docs", 81, 30081);
        for project in [&team.alice, &team.bob] {
            project.config(&format!(
                "{}[provider.cloudscale]\nendpoint = \"{}\"\n\n{resources}",
                team.backend, team.sim.base_url
            ));
        }
        team
    }

    fn skyplan(&self, project: &Project, args: &[&str]) -> Output {
        run(project.command(args).env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }

    fn spawn_apply(&self, project: &Project) -> Child {
        let mut command = project.command(&["apply", "--auto-approve"]);
        command.env("CLOUDSCALE_API_TOKEN", SIM_TOKEN);
        command.stdout(Stdio::null()).stderr(Stdio::null());
        command.spawn().unwrap()
    }
}

/// Whether the project's workspace is locked, asked without taking the lock: force-unlock with
/// an id that matches no lock says "does not match" when there is one.
fn is_locked(team: &Team, project: &Project) -> bool {
    let out = team.skyplan(project, &["force-unlock", "no-such-lock-id"]);
    assert_eq!(out.code, 1, "{out:?}");
    out.stderr.contains("does not match")
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_killed_holders_lease_is_taken_over_once_its_15_s_have_passed() {
    let cluster = RealCluster::get();
    let workspace = fresh_workspace();
    let team = Team::new(backend_toml(&cluster, &workspace, None));
    // Connected before the kill, so the figure is the Lease's expiry, not a connect.
    let probe = open(&cluster, &workspace);
    let mut holder = team.spawn_apply(&team.alice);
    let holder_pid = holder.id();
    let started = Instant::now();
    while !is_locked(&team, &team.bob) {
        assert!(started.elapsed() < Duration::from_secs(20), "never locked");
        std::thread::sleep(Duration::from_millis(20));
    }

    let refused = team.skyplan(&team.bob, &["plan"]);
    assert_eq!(refused.code, 1, "a second run is refused: {refused:?}");
    let message = unwrapped(&refused.stderr);
    let pid = format!("(pid {holder_pid})");
    for part in [
        "the state is locked by",
        pid.as_str(),
        "`apply`",
        "lease of 15 s",
    ] {
        assert!(message.contains(part), "{part} missing from: {message}");
    }

    // Into the apply: the first load balancer is being created and waited for.
    std::thread::sleep(Duration::from_millis(900));
    holder.kill().unwrap(); // SIGKILL
    let killed_at = Instant::now();
    holder.wait().unwrap();
    let lock = loop {
        match probe.lock("probe", None) {
            Ok(lock) => break lock,
            Err(error) => assert!(error.holder().is_some(), "{error}"),
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(20),
            "never taken over"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let taken_after = killed_at.elapsed();
    println!(
        "kill -9 of the lock holder → next lock held after {} ms (lease 15 s, renewed every 5 s)",
        taken_after.as_millis()
    );
    assert_eq!(lock.taken_over().map(|h| h.pid), Some(holder_pid));
    // Renewed at most 5 s before the kill, the Lease lasts at least 10 s more.
    assert!(
        taken_after >= Duration::from_secs(9),
        "taken over early: {taken_after:?}"
    );
    assert!(taken_after <= Duration::from_secs(16), "{taken_after:?}");
    drop(lock);

    let next = team.skyplan(&team.bob, &["apply", "--auto-approve"]);
    assert_eq!(next.code, 0, "{next:?}");
    assert!(next.stderr.contains("interrupted"), "{next:?}");
    let listed = team.skyplan(&team.alice, &["state", "list"]);
    assert_eq!(
        listed.stdout,
        "load-balancer.api\nload-balancer.docs\nload-balancer.web\n"
    );
}

/// The kill test of `cloudscale::kill_recovery` with state, journal and lock in the cluster:
/// a Lease of 2 s and applies that wait for it, so each recovery waits out the killed run's.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn kill_apply_at_every_step_then_recover_with_the_kubernetes_backend() {
    let cluster = RealCluster::get();
    let in_cluster = || {
        let backend = backend_toml(&cluster, &fresh_workspace(), Some(2));
        Cloud::with_backend(&backend).waiting_for_the_lock("30s")
    };
    let (a, b) = (config_a(), config_b());
    let created = reference(std::slice::from_ref(&a));
    let changed = reference(&[a.clone(), b.clone()]);

    let probe = in_cluster();
    probe.configure(&a);
    let create_ops = probe.operations();
    assert_eq!(probe.apply(None).code, 0);
    probe.configure(&b);
    let update_ops = probe.operations();
    let local_state = probe.project.path().join("state/skyplan.state.json");
    assert!(!local_state.exists(), "the state is in the cluster");

    let mut points = 0;
    for point in kill_points(create_ops) {
        crash_and_recover_in(in_cluster(), None, &a, &point, &created);
        points += 1;
    }
    for point in kill_points(update_ops) {
        crash_and_recover_in(in_cluster(), Some(&a), &b, &point, &changed);
        points += 1;
    }
    println!("kill test on Kubernetes: {points} kill points ({create_ops} create and {update_ops} update operations), 0 duplicates, 0 orphans");
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn state_migrate_moves_the_state_into_the_cluster_and_back() {
    let cluster = RealCluster::get();
    let workspace = fresh_workspace();
    let cloud = Cloud::with_backend("");
    cloud.configure(&lb("web", 80, 30080));
    assert_eq!(cloud.apply(None).code, 0);
    let local = cloud.skyplan(&["state", "list"], None).stdout;

    let backend = backend_toml(&cluster, &workspace, None);
    let config = std::fs::read_to_string(cloud.project.path().join("skyplan.toml")).unwrap();
    cloud.project.config(&format!("{backend}{config}"));
    let moved = cloud.skyplan(&["state", "migrate", "--to", "kubernetes"], None);
    assert_eq!(moved.code, 0, "{moved:?}");
    assert!(
        moved
            .stdout
            .contains("Moved the state (serial 1, 1 resource)"),
        "{moved:?}"
    );
    assert!(
        moved.stdout.contains("Kubernetes namespace `default`"),
        "{moved:?}"
    );
    let index = cluster.object(&[
        "secret",
        &format!("skyplan-state-{workspace}"),
        "-n",
        "default",
    ]);
    assert_eq!(
        index["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "skyplan"
    );
    assert_eq!(index["metadata"]["annotations"]["skyplan.io/serial"], "1");
    std::fs::remove_dir_all(cloud.project.path().join("state")).unwrap();
    assert_eq!(cloud.skyplan(&["state", "list"], None).stdout, local);
    let nothing = cloud.skyplan(&["plan", "--detailed-exitcode"], None);
    assert_eq!(
        nothing.code, 0,
        "the cluster's state is the one applied: {nothing:?}"
    );

    let back = cloud.skyplan(&["state", "migrate", "--to", "local"], None);
    assert_eq!(back.code, 0, "{back:?}");
    assert!(
        back.stdout.contains("Remove [backend.kubernetes]"),
        "{back:?}"
    );
    assert!(cloud
        .project
        .path()
        .join("state/skyplan.state.json")
        .exists());
}
