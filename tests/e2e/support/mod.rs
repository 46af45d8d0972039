//! The harness: a temporary project directory, the real `skyplan` binary run in it against the
//! embedded simulator, and readers for the plan and the simulated world.

pub mod http;
pub mod kube_sim;
pub mod needs;
pub mod node_health;
pub mod pools;
pub mod served;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use tempfile::TempDir;

/// The `skyplan` under test: this build's, or the one `SKYPLAN_E2E_BINARY` names — so a new
/// test can be run against an older build (a fix's test is seen to fail without the fix).
pub fn binary() -> &'static str {
    static BINARY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        std::env::var("SKYPLAN_E2E_BINARY")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_skyplan").to_string())
    });
    &BINARY
}

/// The simulator's default token, accepted by `sim serve` without `--token`.
pub const SIM_TOKEN: &str = "skyplan-sim-cloudscale-token";

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

pub struct Project {
    dir: TempDir,
    /// Set on every command (an embedded simulator's settings, kill points).
    env: Vec<(String, String)>,
}

impl Project {
    pub fn new() -> Project {
        Project {
            dir: tempfile::tempdir().expect("temp dir"),
            env: vec![],
        }
    }

    /// Runs skyplan with this variable set.
    pub fn with_env(mut self, name: &str, value: &str) -> Project {
        self.env.push((name.into(), value.into()));
        self
    }

    /// The same project, run without the variable `name`.
    pub fn without_env(mut self, name: &str) -> Project {
        self.env.retain(|(n, _)| n != name);
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path().join(name), text).expect("write config");
    }

    pub fn config(&self, text: &str) {
        self.write("skyplan.toml", text);
    }

    pub fn command(&self, args: &[&str]) -> Command {
        self.command_with_config(self.path(), args)
    }

    pub fn command_with_config(&self, config: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(binary());
        command
            .arg("-c")
            .arg(config)
            .args(args)
            .env("NO_COLOR", "1")
            .env("SKYPLAN_SIM_SETTLE_MS", "5")
            .env_remove("CLOUDSCALE_API_TOKEN")
            .env_remove("CLOUDSCALE_ACCESS_TOKEN")
            .stdin(Stdio::null());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        run(&mut self.command(args))
    }

    pub fn plan(&self, extra: &[&str]) -> Value {
        let mut args = vec!["plan", "--json"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert_eq!(out.code, 0, "{out:?}");
        out.json()
    }

    pub fn apply(&self, extra: &[&str]) -> Output {
        let mut args = vec!["apply", "--auto-approve"];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    pub fn apply_ok(&self) {
        let out = self.apply(&[]);
        assert_eq!(out.code, 0, "{out:?}");
    }

    pub fn world_path(&self) -> PathBuf {
        self.path().join("state/embedded/cloudscale.json")
    }

    /// The simulated cloud as its world file holds it.
    pub fn world(&self) -> World {
        let text = std::fs::read_to_string(self.world_path()).expect("world file");
        World(serde_json::from_str(&text).expect("world JSON"))
    }
}

pub fn run(command: &mut Command) -> Output {
    let out = command.output().expect("run skyplan");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The simulator's world file, read as JSON.
pub struct World(pub Value);

impl World {
    pub fn all(&self, collection: &str) -> Vec<Value> {
        self.0[collection].as_array().cloned().unwrap_or_default()
    }

    pub fn named(&self, collection: &str, name: &str) -> Option<Value> {
        self.all(collection).into_iter().find(|o| o["name"] == name)
    }

    pub fn uuid(&self, collection: &str, name: &str) -> String {
        let object = self
            .named(collection, name)
            .unwrap_or_else(|| panic!("no {collection} named {name}"));
        object["uuid"].as_str().expect("uuid").to_string()
    }

    pub fn member_uuids(&self) -> Vec<String> {
        let mut uuids: Vec<String> = self
            .all("members")
            .iter()
            .map(|m| m["uuid"].as_str().unwrap().to_string())
            .collect();
        uuids.sort();
        uuids
    }

    pub fn monitor_uuid(&self) -> String {
        let monitors = self.all("health_monitors");
        assert_eq!(monitors.len(), 1, "one monitor expected");
        monitors[0]["uuid"].as_str().unwrap().to_string()
    }
}

/// `skyplan sim serve --provider P --listen 127.0.0.1:0 --world W`, to be started by [`serving`].
pub fn sim_serve(provider: &str, world: &Path) -> Command {
    let mut command = Command::new(binary());
    command
        .args([
            "sim",
            "serve",
            "--provider",
            provider,
            "--listen",
            "127.0.0.1:0",
            "--world",
        ])
        .arg(world);
    command
}

/// Starts a `sim serve` command and returns it with the URL it announces on its first line.
pub fn serving(command: &mut Command) -> (Child, String) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sim serve");
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .expect("sim output");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    (child, url)
}

/// `skyplan sim serve` on a free port; killed on drop.
pub struct SimServer {
    child: Child,
    pub base_url: String,
}

impl SimServer {
    pub fn start(world: &Path) -> SimServer {
        SimServer::start_settling(world, 5)
    }

    /// `settle_ms`: how long a load balancer stays `changing` after each change.
    pub fn start_settling(world: &Path, settle_ms: u64) -> SimServer {
        SimServer::start_with(world, settle_ms, "none")
    }

    /// `faults`: what to inject, as `skyplan sim serve --faults` takes it.
    pub fn start_with(world: &Path, settle_ms: u64, faults: &str) -> SimServer {
        let mut command = sim_serve("cloudscale", world);
        command
            .env("SKYPLAN_SIM_SETTLE_MS", settle_ms.to_string())
            .env("SKYPLAN_SIM_FAULTS", faults);
        let (child, base_url) = serving(&mut command);
        SimServer { child, base_url }
    }

    /// Sends SIGTERM and waits for the server to end.
    pub fn terminate(mut self) {
        terminate(&mut self.child);
    }

    fn root(&self) -> String {
        self.base_url.trim_end_matches("/v1").to_string()
    }

    pub fn list(&self, path: &str) -> Vec<Value> {
        // The simulator's faults hit every client: retry like any careful client would.
        for _ in 0..20 {
            let url = format!("{}{path}", self.base_url);
            if let Ok(body) = http::get(&url).bearer(SIM_TOKEN).ok() {
                if let Ok(list) = serde_json::from_str(&body) {
                    return list;
                }
            }
        }
        panic!("cannot list {path}");
    }

    pub fn reset_requests(&self) {
        let status = http::request("POST", &format!("{}/_sim/requests/reset", self.root())).ok();
        assert!(status.is_ok(), "reset: {status:?}");
    }

    pub fn requests(&self) -> Value {
        let body = http::get(&format!("{}/_sim/requests", self.root()))
            .ok()
            .expect("requests");
        serde_json::from_str(&body).expect("requests JSON")
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server `name` in the simulated cloudscale cloud at `base_url` (`…/v1`), with a public
/// interface and one on the default private network, as the embedded cluster's nodes have:
/// what the CCM finds a Node's server by (its name). Returns the server as created.
pub fn create_server(base_url: &str, name: &str) -> Value {
    let networks = http::get(&format!("{base_url}/networks"))
        .bearer(SIM_TOKEN)
        .ok()
        .expect("list networks");
    let networks: Vec<Value> = serde_json::from_str(&networks).expect("networks JSON");
    let network = networks
        .iter()
        .find(|n| n["name"] == "default")
        .expect("the default private network");
    let server = serde_json::json!({
        "name": name, "flavor": "flex-8-4", "image": "debian-12", "zone": "lpg1",
        "interfaces": [{"network": "public"}, {"network": network["uuid"]}],
    });
    let body = http::request("POST", &format!("{base_url}/servers"))
        .bearer(SIM_TOKEN)
        .json(&server)
        .ok()
        .unwrap_or_else(|e| panic!("create server {name}: {e}"));
    serde_json::from_str(&body).expect("server JSON")
}

/// Sends SIGTERM to a `sim serve` and waits for it to end cleanly (it writes its world first).
pub fn terminate(child: &mut std::process::Child) {
    let pid = child.id();
    let pid_t = libc::pid_t::try_from(pid).expect("a process id");
    // SAFETY: kill(2) on the id of a child not yet waited for (so not reused) only signals it.
    let sent = unsafe { libc::kill(pid_t, libc::SIGTERM) };
    assert_eq!(
        sent,
        0,
        "SIGTERM to {pid}: {}",
        std::io::Error::last_os_error()
    );
    let exit = child.wait().expect("wait for sim serve");
    assert!(
        exit.success(),
        "sim serve ends cleanly on SIGTERM: {exit:?}"
    );
}

/// The quickstart as it sits in the repository, copied into a fresh project: its config under
/// `examples/quickstart` and its seeded simulated cloud and cluster under `state/embedded`, so
/// that `state-dir = "../../state"` finds them. Returns the project and the config directory.
pub fn quickstart() -> (Project, PathBuf) {
    let project = Project::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = project.path().join("examples/quickstart");
    std::fs::create_dir_all(&example).unwrap();
    std::fs::copy(
        repo.join("examples/quickstart/skyplan.toml"),
        example.join("skyplan.toml"),
    )
    .unwrap();
    for world in ["cloudscale.json", "kubernetes/prod.json"] {
        let to = project.path().join("state/embedded").join(world);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(repo.join("state/embedded").join(world), to).unwrap();
    }
    (project, example)
}
