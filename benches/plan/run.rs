//! Running `skyplan` the way a user does, timed, with the peak memory of that one process.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary measured: this build's, or another one (`SKYPLAN_BENCH_BINARY`), so that the
/// same bench measures an older build for a before/after comparison.
pub fn binary() -> String {
    std::env::var("SKYPLAN_BENCH_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_skyplan").into())
}

/// The binary that serves the simulator: the measured one unless `SKYPLAN_BENCH_SIM_BINARY`
/// names another, so that a before/after comparison can hold the simulator (and with it the
/// raw-fetch floor) fixed and measure only the client.
pub fn sim_binary() -> String {
    std::env::var("SKYPLAN_BENCH_SIM_BINARY").unwrap_or_else(|_| binary())
}

/// The simulator's default token, accepted by `sim serve` without `--token`.
pub const SIM_TOKEN: &str = "skyplan-sim-cloudscale-token";

/// Reports the peak memory of the process it runs. Not `wait4` from here: Linux counts the
/// memory of the process that forked and exec'd skyplan (this bench, which holds the world)
/// in skyplan's peak; `time` is small.
const TIME: &str = "/usr/bin/time";

pub struct Run {
    pub wall: Duration,
    /// Peak resident set of the process, in bytes.
    pub max_rss: u64,
}

/// Runs `skyplan -c PROJECT ARGS…`; it must exit 0 (for a plan with `--detailed-exitcode`: no
/// changes, so every run measures the same work and the seeded world matches the config).
pub fn skyplan(project: &Path, args: &[&str]) -> Run {
    let out_path = project.join("bench-output.txt");
    let rss_path = project.join("bench-max-rss.txt");
    let output = std::fs::File::create(&out_path).expect("create the output file");
    let start = Instant::now();
    let status = Command::new(TIME)
        .args(["-f", "%M", "-o"])
        .arg(&rss_path)
        .arg(binary())
        .arg("-c")
        .arg(project)
        .args(args)
        .env("NO_COLOR", "1")
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .env_remove("CLOUDSCALE_ACCESS_TOKEN")
        .stdin(Stdio::null())
        .stdout(output.try_clone().expect("clone the output file"))
        .stderr(output)
        .status()
        .expect("run skyplan under /usr/bin/time");
    let wall = start.elapsed();
    assert!(
        status.success(),
        "skyplan {args:?} exited with {status}:\n{}",
        std::fs::read_to_string(&out_path).unwrap_or_default()
    );
    let kilobytes: u64 = std::fs::read_to_string(&rss_path)
        .expect("time wrote the peak memory")
        .trim()
        .parse()
        .expect("a number of kilobytes");
    Run {
        wall,
        max_rss: kilobytes * 1024,
    }
}
