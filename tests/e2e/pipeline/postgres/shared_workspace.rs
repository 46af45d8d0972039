//! Two project directories — two machines — sharing one PostgreSQL workspace: each sees the
//! other's applies, a second apply is refused at once with the holder's details, and a holder
//! killed with `kill -9` mid-apply frees the lock at once.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::pipeline::postgres::{
    backend_toml, fresh_workspace, lock_when_free, open, wait_until_locked,
};
use crate::support::needs::pg_url;
use crate::support::{run, Output, Project, SimServer, SIM_TOKEN};

fn lb(name: &str, ports: &[(&str, u16, u16)]) -> String {
    let mut text = format!(
        "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n"
    );
    for (port_name, port, node_port) in ports {
        text += &format!("[[load-balancer.{name}.ports]]\nname = \"{port_name}\"\nport = {port}\nnode-port = {node_port}\n");
    }
    text + "\n"
}

/// One simulated cloud and two projects whose state is the same PostgreSQL workspace.
struct Team {
    sim: SimServer,
    _world: tempfile::TempDir,
    backend: String,
    alice: Project,
    bob: Project,
}

impl Team {
    fn new(url: &str, settle_ms: u64) -> Team {
        let world = tempfile::tempdir().unwrap();
        let sim = SimServer::start_settling(&world.path().join("world.json"), settle_ms);
        Team {
            sim,
            _world: world,
            backend: backend_toml(url, &fresh_workspace()),
            alice: Project::new(),
            bob: Project::new(),
        }
    }

    fn configure(&self, project: &Project, resources: &str) {
        project.config(&format!(
            "{}[provider.cloudscale]\nendpoint = \"{}\"\n\n{resources}",
            self.backend, self.sim.base_url
        ));
    }

    fn skyplan(&self, project: &Project, args: &[&str]) -> Output {
        run(project.command(args).env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }

    fn spawn_apply(&self, project: &Project) -> Child {
        project
            .command(&["apply", "--auto-approve"])
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    fn lb_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .sim
            .list("/load-balancers")
            .iter()
            .map(|lb| lb["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    }
}

#[test]
#[ignore = "needs PostgreSQL: SKYPLAN_TEST_PG_URL (.ci/run starts one)"]
fn two_projects_sharing_a_workspace_see_each_others_applies() {
    let url = pg_url();
    let team = Team::new(&url, 0);
    let one_port = lb("web", &[("http", 80, 30080)]);
    let two_ports = lb("web", &[("http", 80, 30080), ("https", 443, 30443)]);
    team.configure(&team.alice, &one_port);
    team.configure(&team.bob, &one_port);

    let applied = team.skyplan(&team.alice, &["apply", "--auto-approve"]);
    assert_eq!(applied.code, 0, "{applied:?}");
    let listed = team.skyplan(&team.bob, &["state", "list"]);
    assert_eq!(listed.stdout, "load-balancer.web\n", "{listed:?}");
    let nothing = team.skyplan(&team.bob, &["plan", "--detailed-exitcode"]);
    assert_eq!(nothing.code, 0, "bob sees alice's apply: {nothing:?}");

    // Alice saves a plan; Bob applies a change first; Alice's saved plan is now refused.
    team.configure(&team.alice, &two_ports);
    let saved = team.alice.path().join("change.plan");
    let planned = team.skyplan(&team.alice, &["plan", "--out", saved.to_str().unwrap()]);
    assert_eq!(planned.code, 0, "{planned:?}");
    team.configure(&team.bob, &two_ports);
    let applied = team.skyplan(&team.bob, &["apply", "--auto-approve"]);
    assert_eq!(applied.code, 0, "{applied:?}");
    let stale = team.skyplan(
        &team.alice,
        &["apply", "--auto-approve", saved.to_str().unwrap()],
    );
    assert_eq!(stale.code, 1, "{stale:?}");
    assert!(
        stale
            .stderr
            .contains("the state changed since the plan was made"),
        "{stale:?}"
    );
    let shown = team.skyplan(&team.alice, &["state", "show", "load-balancer.web"]);
    assert!(
        shown.stdout.contains("https"),
        "alice sees bob's apply: {shown:?}"
    );
    let nothing = team.skyplan(&team.alice, &["plan", "--detailed-exitcode"]);
    assert_eq!(nothing.code, 0, "{nothing:?}");

    assert_eq!(team.lb_names(), ["web"]);
    for project in [&team.alice, &team.bob] {
        let local = project.path().join("state/skyplan.state.json");
        assert!(
            !local.exists(),
            "no local state beside a PostgreSQL backend"
        );
    }
}

#[test]
#[ignore = "needs PostgreSQL: SKYPLAN_TEST_PG_URL (.ci/run starts one)"]
fn a_second_apply_is_refused_at_once_with_the_holders_details_or_waits() {
    let url = pg_url();
    let team = Team::new(&url, 700);
    let resources = lb("web", &[("http", 80, 30080)]);
    team.configure(&team.alice, &resources);
    team.configure(&team.bob, &resources);
    let mut first = team.spawn_apply(&team.alice);
    wait_until_locked(&team.bob);

    let started = Instant::now();
    let refused = team.skyplan(&team.bob, &["apply", "--auto-approve"]);
    let took = started.elapsed();
    assert_eq!(refused.code, 1, "{refused:?}");
    let holder = format!("pid {}", first.id());
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    for detail in [
        "locked by",
        holder.as_str(),
        host.as_str(),
        "`apply`",
        "force-unlock",
    ] {
        assert!(
            refused.stderr.contains(detail),
            "no `{detail}` in {refused:?}"
        );
    }
    assert!(
        took < Duration::from_secs(5),
        "refused at once, not after {took:?}"
    );
    println!("second apply refused in {} ms", took.as_millis());

    let waited = team.skyplan(
        &team.bob,
        &["apply", "--auto-approve", "--lock-timeout", "60s"],
    );
    assert_eq!(waited.code, 0, "{waited:?}");
    assert!(first.wait().unwrap().success());
    assert_eq!(team.lb_names(), ["web"]);
}

#[test]
#[ignore = "needs PostgreSQL: SKYPLAN_TEST_PG_URL (.ci/run starts one)"]
fn a_holder_killed_mid_apply_frees_the_lock_at_once() {
    let url = pg_url();
    let team = Team::new(&url, 700);
    let resources = lb("web", &[("http", 80, 30080)])
        + &lb("api", &[("grpc", 443, 30444)])
        + &lb("docs", &[("http", 80, 30180)]);
    team.configure(&team.alice, &resources);
    team.configure(&team.bob, &resources);
    // Connected before the kill, so the figure is the lock's release, not a connect.
    let workspace = team.backend.split('"').nth(3).unwrap().to_string();
    let probe = open(&url, &workspace);
    let mut holder = team.spawn_apply(&team.alice);
    wait_until_locked(&team.bob);
    // Into the apply: the first load balancer is being created and waited for.
    std::thread::sleep(Duration::from_millis(900));
    holder.kill().unwrap(); // SIGKILL
    let killed_at = Instant::now();
    let (lock, _) = lock_when_free(&probe, Duration::from_secs(10));
    let freed_after = killed_at.elapsed();
    drop(lock);
    holder.wait().unwrap();
    println!(
        "kill -9 of the lock holder → next lock held after {} ms",
        freed_after.as_millis()
    );
    assert!(freed_after < Duration::from_secs(3), "{freed_after:?}");

    // No --lock-timeout: the lock must be free now, not after some TTL.
    let started = Instant::now();
    let next = team.skyplan(&team.bob, &["apply", "--auto-approve"]);
    assert_eq!(next.code, 0, "{next:?}");
    assert!(
        next.stderr.contains("interrupted"),
        "the interruption is reported: {next:?}"
    );
    println!(
        "the next apply (refresh, recovery, the rest of the plan) took {} ms",
        started.elapsed().as_millis()
    );
    let again = team.skyplan(&team.alice, &["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "converged: {again:?}");
    assert_eq!(team.lb_names(), ["api", "docs", "web"], "no duplicates");
}

#[test]
fn a_password_in_the_url_is_a_config_error_that_never_shows_it() {
    let project = Project::new();
    project.config(
        "[settings]\nstate-dir = \"st\"\n\n[backend.postgres]\n\
         url = \"postgres://skyplan:hunter2-s3cret@db.internal/skyplan\"\nworkspace = \"prod\"\n",
    );
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("skyplan.toml:5:7"), "{out:?}");
    assert!(
        out.stderr
            .contains("passwords do not belong in config files"),
        "{out:?}"
    );
    assert!(out.stderr.contains("PGPASSWORD"), "{out:?}");
    assert!(!format!("{out:?}").contains("hunter2"), "{out:?}");

    // From the environment it is refused as well, and not shown either.
    project.config("[backend.postgres]\nworkspace = \"prod\"\n");
    let out = run(project.command(&["state", "list"]).env(
        "SKYPLAN_PG_URL",
        "postgres://skyplan:hunter2-s3cret@127.0.0.1:1/x",
    ));
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("holds a password"), "{out:?}");
    assert!(!format!("{out:?}").contains("hunter2"), "{out:?}");
}

#[test]
#[ignore = "needs PostgreSQL: SKYPLAN_TEST_PG_URL (.ci/run starts one)"]
fn state_migrate_moves_the_state_to_postgres_and_back() {
    let url = pg_url();
    let world = tempfile::tempdir().unwrap();
    let sim = SimServer::start_settling(&world.path().join("world.json"), 0);
    let resources = format!(
        "[provider.cloudscale]\nendpoint = \"{}\"\n\n{}",
        sim.base_url,
        lb("web", &[("http", 80, 30080)])
    );
    let skyplan = |project: &Project, args: &[&str]| {
        run(project.command(args).env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    };
    let laptop = Project::new();
    laptop.config(&resources);
    assert_eq!(skyplan(&laptop, &["apply", "--auto-approve"]).code, 0);
    let local_state =
        std::fs::read_to_string(laptop.path().join("state/skyplan.state.json")).unwrap();

    let backend = backend_toml(&url, &fresh_workspace());
    laptop.config(&format!("{backend}{resources}"));
    let moved = skyplan(&laptop, &["state", "migrate", "--to", "postgres"]);
    assert_eq!(moved.code, 0, "{moved:?}");
    assert!(moved.stdout.contains("Moved the state"), "{moved:?}");
    assert!(!format!("{moved:?}").contains("PGPASSWORD="), "{moved:?}");
    let ci = Project::new();
    ci.config(&format!("{backend}{resources}"));
    let json = skyplan(&ci, &["state", "json"]);
    assert_eq!(
        json.stdout.trim_end(),
        local_state.trim_end(),
        "the same state, byte for byte"
    );
    assert_eq!(skyplan(&ci, &["plan", "--detailed-exitcode"]).code, 0);

    // A local state of another lineage is never overwritten by the way back.
    let other = Project::new();
    other.config(&resources.replace("web", "other"));
    assert_eq!(skyplan(&other, &["apply", "--auto-approve"]).code, 0);
    other.config(&format!("{backend}{}", resources.replace("web", "other")));
    let refused = skyplan(&other, &["state", "migrate", "--to", "local"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("already holds another state"),
        "{refused:?}"
    );

    let back = skyplan(&ci, &["state", "migrate", "--to", "local"]);
    assert_eq!(back.code, 0, "{back:?}");
    let returned = std::fs::read_to_string(ci.path().join("state/skyplan.state.json")).unwrap();
    assert_eq!(returned, local_state);
}
