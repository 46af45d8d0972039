//! A rollout's wall time against the sum of its changes' measured durations: `count` load
//! balancers, each with a pool recreation (the algorithm changed), applied with
//! `max-disrupted = M` and the health gate on. Run one at a time, the changes would take the
//! sum of their durations; M at a time, ideally that sum / M. What the rollout adds on top —
//! the gates' waits, a wave waiting for its slowest change — is the ratio printed.
//!
//! The simulator settles each load balancer change in `SETTLE_MS` (the real cloud takes some
//! ten seconds), so the figures are of skyplan's scheduling, not of a cloud.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::run::{binary, SIM_TOKEN};
use super::sim::SimServer;

const SETTLE_MS: u64 = 100;
const ALGORITHMS: [&str; 2] = ["round_robin", "source_ip"];

pub struct RolloutRow {
    count: usize,
    max_disrupted: usize,
    waves: usize,
    apply: Duration,
    plan: Duration,
    measured_sum: Duration,
}

impl RolloutRow {
    pub fn header() -> String {
        let titles = format!(
            "{:>5} | {:>13} | {:>5} | {:>9} | {:>8} | {:>16} | {:>14} | {:>15}",
            "N",
            "max-disrupted",
            "waves",
            "apply (s)",
            "plan (s)",
            "sum measured (s)",
            "sum / max (s)",
            "rollout / ideal"
        );
        let rule = format!(
            "{:->5}-+-{:->13}-+-{:->5}-+-{:->9}-+-{:->8}-+-{:->16}-+-{:->14}-+-{:->15}",
            "", "", "", "", "", "", "", ""
        );
        format!("{titles}\n{rule}")
    }

    pub fn line(&self) -> String {
        let ideal = self.measured_sum.as_secs_f64() / self.max_disrupted as f64;
        // What apply spent beyond its plan: the rollout itself.
        let rollout = (self.apply.saturating_sub(self.plan)).as_secs_f64();
        format!(
            "{:>5} | {:>13} | {:>5} | {:>9.2} | {:>8.2} | {:>16.2} | {:>14.2} | {:>15.2}",
            self.count,
            self.max_disrupted,
            self.waves,
            self.apply.as_secs_f64(),
            self.plan.as_secs_f64(),
            self.measured_sum.as_secs_f64(),
            ideal,
            rollout / ideal
        )
    }
}

/// Builds `count` load balancers, recreates their pools once (so every change has measured
/// durations), then measures the plan and the rollout of recreating them again.
pub fn measure(count: usize, max_disrupted: usize) -> RolloutRow {
    let project = tempfile::tempdir().expect("temp dir");
    let dir = project.path();
    let sim = SimServer::start_settling(&dir.join("world.json"), "none", SETTLE_MS);
    let configure = |algorithm| write_config(dir, &sim.base_url, count, max_disrupted, algorithm);
    configure(ALGORITHMS[0]);
    skyplan(dir, &["apply", "--auto-approve", "--parallelism", "20"]);
    configure(ALGORITHMS[1]);
    skyplan(dir, &["apply", "--auto-approve"]);
    configure(ALGORITHMS[0]);
    let (plan_wall, plan) = skyplan(dir, &["plan", "--json"]);
    let (apply, _) = skyplan(dir, &["apply", "--auto-approve"]);
    sim.stop();
    RolloutRow {
        count,
        max_disrupted,
        waves: plan["rollout"]["waves"].as_array().map_or(0, Vec::len),
        apply,
        plan: plan_wall,
        measured_sum: measured_sum(&plan, count),
    }
}

/// The sum of the changes' typical measured durations; every change must have one.
fn measured_sum(plan: &Value, count: usize) -> Duration {
    let changes = plan["changes"].as_array().expect("changes");
    let measured: Vec<u64> = (changes.iter())
        .filter_map(|c| c["measured_duration"]["typical_ms"].as_u64())
        .collect();
    assert_eq!(measured.len(), count, "a measured duration per change");
    Duration::from_millis(measured.iter().sum())
}

fn write_config(dir: &Path, endpoint: &str, count: usize, max: usize, algorithm: &str) {
    let mut text = format!(
        "[provider.cloudscale]\nendpoint = \"{endpoint}\"\n\n[rollout]\nmax-disrupted = {max}\n\n"
    );
    for i in 0..count {
        text.push_str(&format!(
            "[load-balancer.lb{i}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
             members = [\"10.0.0.11\", \"10.0.0.12\"]\nalgorithm = \"{algorithm}\"\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n"
        ));
    }
    std::fs::write(dir.join("skyplan.toml"), text).expect("write config");
}

/// Runs skyplan, which must succeed; its wall time and stdout as JSON (`Null` if not JSON).
fn skyplan(dir: &Path, args: &[&str]) -> (Duration, Value) {
    let started = Instant::now();
    let output = Command::new(binary())
        .arg("-c")
        .arg(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .stdin(Stdio::null())
        .output()
        .expect("run skyplan");
    let wall = started.elapsed();
    assert!(
        output.status.success(),
        "skyplan {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (wall, json)
}
