//! How refresh and plan scale with the number of load balancers: for each N, `skyplan sim
//! serve` gets N load balancers applied (two members and one port each), then `skyplan plan`
//! runs five times. Prints a table: the API requests of one refresh, the wall time of `plan`
//! (min / median / max) and of the apply. Run with `cargo bench --bench plan`.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

const BINARY: &str = env!("CARGO_BIN_EXE_skyplan");
/// The simulator's default token, accepted by `sim serve` without `--token`.
const SIM_TOKEN: &str = "skyplan-sim-cloudscale-token";
const SIZES: [usize; 3] = [1, 100, 500];
const PLANS: usize = 5;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    println!(
        "{:>5} | {:>16} | {:>32} | {:>9}",
        "N", "refresh requests", "plan min / median / max (ms)", "apply (s)"
    );
    println!("{:->5}-+-{:->16}-+-{:->32}-+-{:->9}", "", "", "", "");
    for count in SIZES {
        let figures = measure(count, &runtime);
        println!("{}", figures.row());
    }
}

struct Figures {
    count: usize,
    refresh_requests: u64,
    /// Sorted.
    plans: Vec<Duration>,
    apply: Duration,
}

impl Figures {
    fn row(&self) -> String {
        let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
        let plan = format!(
            "{:.0} / {:.0} / {:.0}",
            ms(&self.plans[0]),
            ms(&self.plans[self.plans.len() / 2]),
            ms(&self.plans[self.plans.len() - 1])
        );
        format!(
            "{:>5} | {:>16} | {:>32} | {:>9.1}",
            self.count,
            self.refresh_requests,
            plan,
            self.apply.as_secs_f64()
        )
    }
}

fn measure(count: usize, runtime: &tokio::runtime::Runtime) -> Figures {
    let project = tempfile::tempdir().expect("temp dir");
    let sim = SimServer::start(&project.path().join("world.json"));
    std::fs::write(
        project.path().join("skyplan.toml"),
        config(&sim.base_url, count),
    )
    .expect("write config");

    let apply = timed(
        &project,
        &["apply", "--auto-approve", "--parallelism", "20"],
    );
    runtime.block_on(sim.reset_requests());
    let mut plans = vec![timed(&project, &["plan", "--detailed-exitcode"])];
    let refresh_requests = runtime.block_on(sim.requests());
    plans.extend((1..PLANS).map(|_| timed(&project, &["plan", "--detailed-exitcode"])));
    plans.sort();
    Figures {
        count,
        refresh_requests,
        plans,
        apply,
    }
}

fn config(endpoint: &str, count: usize) -> String {
    let mut config = format!("[provider.cloudscale]\nendpoint = \"{endpoint}\"\n\n");
    for i in 0..count {
        writeln!(
            config,
            "[load-balancer.lb{i}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
             members = [\"10.0.0.11\", \"10.0.0.12\"]\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n"
        )
        .expect("write to a String");
    }
    config
}

/// Runs `skyplan` in the project and returns its wall time; it must exit 0 (for a plan with
/// `--detailed-exitcode`: no changes, so every run measures the same work).
fn timed(project: &TempDir, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(BINARY)
        .arg("-c")
        .arg(project.path())
        .args(args)
        .env("NO_COLOR", "1")
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .env_remove("CLOUDSCALE_ACCESS_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run skyplan");
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "skyplan {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

/// `skyplan sim serve` on a free port; killed on drop.
struct SimServer {
    child: Child,
    base_url: String,
    http: reqwest::Client,
}

impl SimServer {
    fn start(world: &Path) -> SimServer {
        let mut child = Command::new(BINARY)
            .args(["sim", "serve", "--provider", "cloudscale"])
            .args(["--listen", "127.0.0.1:0", "--world"])
            .arg(world)
            .env("SKYPLAN_SIM_SETTLE_MS", "5")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sim serve");
        // The first line it prints names the URL it listens on.
        let mut line = String::new();
        BufReader::new(child.stderr.take().expect("piped stderr"))
            .read_line(&mut line)
            .expect("sim output");
        let base_url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        SimServer {
            child,
            base_url,
            http: reqwest::Client::new(),
        }
    }

    /// The `/_sim` routes sit beside the API's `/v1`.
    fn sim_url(&self, path: &str) -> String {
        format!("{}/_sim/{path}", self.base_url.trim_end_matches("/v1"))
    }

    async fn reset_requests(&self) {
        self.http
            .post(self.sim_url("requests/reset"))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .expect("reset the request counters");
    }

    /// API requests served since the last reset.
    async fn requests(&self) -> u64 {
        let counts: serde_json::Value = self
            .http
            .get(self.sim_url("requests"))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .expect("read the request counters")
            .json()
            .await
            .expect("request counters are JSON");
        counts["total"].as_u64().expect("a total count")
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        // Err: it already exited, which is what we want.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
