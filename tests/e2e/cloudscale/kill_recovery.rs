//! The kill test: apply is killed (SIGKILL, at exact journal checkpoints) at every step of a
//! create and of an update; the next apply must recover so that state, cloud and config
//! converge with no duplicates and no orphans.
//!
//! CI runs a sample of the kill points; `SKYPLAN_KILL_TEST=full cargo test --test e2e kill`
//! runs all of them.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{run, Project, SimServer, SIM_TOKEN};

fn lb(name: &str, extra: &str, ports: &[(&str, u16, u16)]) -> String {
    let mut text = format!(
        "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\", \"10.0.0.12\"]\n{extra}\n"
    );
    for (port_name, port, node_port) in ports {
        text += &format!("[[load-balancer.{name}.ports]]\nname = \"{port_name}\"\nport = {port}\nnode-port = {node_port}\n");
    }
    text + "\n"
}

/// Three load balancers: two ports on web, a floating IP on api.
pub(crate) fn config_a() -> String {
    lb("web", "", &[("http", 80, 30080), ("https", 443, 30443)])
        + &lb(
            "api",
            "floating-ips = [\"5.102.150.123/32\"]",
            &[("grpc", 443, 30444)],
        )
        + &lb("docs", "", &[("http", 80, 30180)])
}

/// Every kind of operation: a pool recreated, a port renamed, members and a monitor changed.
pub(crate) fn config_b() -> String {
    lb(
        "web",
        "algorithm = \"source_ip\"",
        &[("http", 80, 30080), ("https", 443, 30443)],
    ) + &lb(
        "api",
        "floating-ips = [\"5.102.150.123/32\"]\nhealth-monitor = { type = \"ping\" }",
        &[("grpc", 443, 31444)],
    ) + &lb("docs", "name = \"docs-renamed\"", &[("web", 80, 30180)])
}

/// A project with its own simulated cloud, its state where `backend` (TOML put before the
/// provider table; empty: the state directory) keeps it.
pub(crate) struct Cloud {
    pub(crate) project: Project,
    sim: SimServer,
    backend: String,
    /// Given to every apply, e.g. `--lock-timeout` for a backend whose killed holder's lock
    /// outlives it for a while.
    apply_args: Vec<String>,
}

impl Cloud {
    fn new() -> Cloud {
        Cloud::with_backend("")
    }

    pub(crate) fn with_backend(backend: &str) -> Cloud {
        let project = Project::new();
        // A cloud that settles at once: this test is about crashes, not waiting.
        let sim = SimServer::start_settling(&project.path().join("world.json"), 0);
        Cloud {
            project,
            sim,
            backend: backend.to_string(),
            apply_args: Vec::new(),
        }
    }

    /// Every apply waits up to `timeout` for the lock.
    pub(crate) fn waiting_for_the_lock(mut self, timeout: &str) -> Cloud {
        self.apply_args = vec!["--lock-timeout".into(), timeout.into()];
        self
    }

    pub(crate) fn configure(&self, body: &str) {
        self.project.config(&format!(
            "{}[provider.cloudscale]\nendpoint = \"{}\"\n\n{body}",
            self.backend, self.sim.base_url
        ));
    }

    pub(crate) fn skyplan(&self, args: &[&str], kill_at: Option<&str>) -> crate::support::Output {
        let mut command = self.project.command(args);
        command.env("CLOUDSCALE_API_TOKEN", SIM_TOKEN);
        if let Some(point) = kill_at {
            command.env("SKYPLAN_TEST_KILL_AT", point);
        }
        run(&mut command)
    }

    pub(crate) fn apply(&self, kill_at: Option<&str>) -> crate::support::Output {
        let mut args = vec!["apply", "--auto-approve"];
        args.extend(self.apply_args.iter().map(String::as_str));
        self.skyplan(&args, kill_at)
    }

    pub(crate) fn operations(&self) -> usize {
        let out = self.skyplan(&["plan", "--json"], None);
        out.json()["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["operations"].as_array().unwrap().len())
            .sum()
    }

    fn list(&self, path: &str) -> Vec<Value> {
        self.sim.list(path)
    }

    /// The cloud as sorted lines, one per object, naming it by its parents: equal for two
    /// clouds that hold the same objects; a duplicate or an orphan shows as an extra line.
    pub(crate) fn inventory(&self) -> Vec<String> {
        let lbs: BTreeMap<String, String> = self
            .list("/load-balancers")
            .iter()
            .map(|l| {
                (
                    l["uuid"].as_str().unwrap().to_string(),
                    l["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let name = |o: &Value, key: &str| {
            lbs.get(o[key]["uuid"].as_str().unwrap_or_default())
                .cloned()
                .unwrap_or_else(|| "ORPHAN".into())
        };
        let mut lines: Vec<String> = self
            .list("/load-balancers")
            .iter()
            .map(|l| format!("lb {} {} {}", l["name"], l["flavor"]["slug"], l["tags"]))
            .collect();
        for pool in self.list("/load-balancers/pools") {
            let owner = name(&pool, "load_balancer");
            lines.push(format!(
                "pool {owner} {} {} {}",
                pool["name"], pool["algorithm"], pool["protocol"]
            ));
            for member in self.list(&format!(
                "/load-balancers/pools/{}/members",
                pool["uuid"].as_str().unwrap()
            )) {
                lines.push(format!(
                    "member {owner} {} {} {}",
                    pool["name"], member["name"], member["monitor_port"]
                ));
            }
        }
        for monitor in self.list("/load-balancers/health-monitors") {
            lines.push(format!(
                "monitor {} {} {}",
                name(&monitor, "load_balancer"),
                monitor["pool"]["name"],
                monitor["type"]
            ));
        }
        for listener in self.list("/load-balancers/listeners") {
            lines.push(format!(
                "listener {} {} {} {}",
                name(&listener, "load_balancer"),
                listener["pool"]["name"],
                listener["name"],
                listener["allowed_cidrs"]
            ));
        }
        for ip in self.list("/floating-ips") {
            lines.push(format!(
                "floating-ip {} {}",
                ip["network"],
                ip["load_balancer"]["uuid"]
                    .as_str()
                    .map(|u| lbs[u].clone())
                    .unwrap_or_default()
            ));
        }
        lines.sort();
        lines
    }

    /// The state names exactly the live load balancers, by the right UUIDs.
    pub(crate) fn assert_state_tracks_the_cloud(&self) {
        let listed = self.skyplan(&["state", "list"], None).stdout;
        assert_eq!(
            listed,
            "load-balancer.api\nload-balancer.docs\nload-balancer.web\n"
        );
        for lb in self.list("/load-balancers") {
            let address = lb["tags"]["skyplan.address"]
                .as_str()
                .expect("owned")
                .to_string();
            let entry: Value =
                serde_json::from_str(&self.skyplan(&["state", "show", &address], None).stdout)
                    .unwrap();
            assert_eq!(entry["id"], lb["uuid"], "{address}");
        }
    }
}

/// The cloud a clean apply of `configs` (in turn) produces.
pub(crate) fn reference(configs: &[String]) -> Vec<String> {
    let cloud = Cloud::new();
    for config in configs {
        cloud.configure(config);
        let out = cloud.apply(None);
        assert_eq!(out.code, 0, "{out:?}");
    }
    cloud.inventory()
}

pub(crate) fn kill_points(operations: usize) -> Vec<String> {
    let full = std::env::var("SKYPLAN_KILL_TEST").is_ok_and(|v| v == "full");
    let every = if full { 1 } else { 7 };
    let mut points = Vec::new();
    for phase in ["intent", "call", "done"] {
        for n in (1..=operations).filter(|n| full || n % every == 1 || *n == operations) {
            points.push(format!("{phase}:{n}"));
        }
    }
    points
}

/// Applies `before` cleanly (if any), then `after` killed at `point`, then `after` again.
fn crash_and_recover(before: Option<&str>, after: &str, point: &str, expected: &[String]) {
    crash_and_recover_in(Cloud::new(), before, after, point, expected);
}

/// [`crash_and_recover`] in `cloud`, whose state may be kept elsewhere.
pub(crate) fn crash_and_recover_in(
    cloud: Cloud,
    before: Option<&str>,
    after: &str,
    point: &str,
    expected: &[String],
) {
    if let Some(before) = before {
        cloud.configure(before);
        assert_eq!(cloud.apply(None).code, 0);
    }
    cloud.configure(after);
    let killed = cloud.apply(Some(point));
    assert_eq!(
        killed.code, -1,
        "{point}: apply should have been killed: {killed:?}"
    );
    let recovered = cloud.apply(None);
    assert_eq!(recovered.code, 0, "{point}: recovery failed: {recovered:?}");
    assert!(
        recovered.stderr.contains("interrupted"),
        "{point}: the interruption is reported: {recovered:?}"
    );
    let again = cloud.skyplan(&["plan", "--detailed-exitcode"], None);
    assert_eq!(
        again.code, 0,
        "{point}: config and cloud converged: {again:?}"
    );
    assert_eq!(
        cloud.inventory(),
        expected,
        "{point}: no duplicates, no orphans"
    );
    cloud.assert_state_tracks_the_cloud();
}

#[test]
fn kill_apply_at_every_step_then_recover() {
    let (a, b) = (config_a(), config_b());
    let created = reference(std::slice::from_ref(&a));
    let changed = reference(&[a.clone(), b.clone()]);

    let probe = Cloud::new();
    probe.configure(&a);
    let create_ops = probe.operations();
    assert_eq!(probe.apply(None).code, 0);
    probe.configure(&b);
    let update_ops = probe.operations();

    let mut points = 0;
    for point in kill_points(create_ops) {
        crash_and_recover(None, &a, &point, &created);
        points += 1;
    }
    for point in kill_points(update_ops) {
        crash_and_recover(Some(&a), &b, &point, &changed);
        points += 1;
    }
    println!("kill test: {points} kill points ({create_ops} create and {update_ops} update operations), 0 duplicates, 0 orphans");
}
