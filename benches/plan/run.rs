//! Running `skyplan` the way a user does, timed, with the peak memory of that one process.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary measured: this build's, or another one (`SKYPLAN_BENCH_BINARY`), so that the
/// same bench measures an older build for a before/after comparison.
pub fn binary() -> String {
    std::env::var("SKYPLAN_BENCH_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_skyplan").into())
}

/// The simulator's default token, accepted by `sim serve` without `--token`.
pub const SIM_TOKEN: &str = "skyplan-sim-cloudscale-token";

pub struct Run {
    pub wall: Duration,
    /// Peak resident set of the process, in bytes.
    pub max_rss: u64,
}

/// Runs `skyplan -c PROJECT ARGS…`; it must exit 0 (for a plan with `--detailed-exitcode`: no
/// changes, so every run measures the same work and the seeded world matches the config).
// The child is reaped by `wait4`, which clippy does not know.
#[allow(clippy::zombie_processes)]
pub fn skyplan(project: &Path, args: &[&str]) -> Run {
    let out_path = project.join("bench-output.txt");
    let output = std::fs::File::create(&out_path).expect("create the output file");
    let start = Instant::now();
    let child = Command::new(binary())
        .arg("-c")
        .arg(project)
        .args(args)
        .env("NO_COLOR", "1")
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .env_remove("CLOUDSCALE_ACCESS_TOKEN")
        .stdin(Stdio::null())
        .stdout(output.try_clone().expect("clone the output file"))
        .stderr(output)
        .spawn()
        .expect("run skyplan");
    let (status, max_rss) = wait_with_rusage(child.id());
    let wall = start.elapsed();
    assert!(
        status == 0,
        "skyplan {args:?} exited with {status}:\n{}",
        std::fs::read_to_string(&out_path).unwrap_or_default()
    );
    Run { wall, max_rss }
}

/// Waits for one child and reads its own resource usage (`wait4`): unlike
/// `getrusage(RUSAGE_CHILDREN)` it is not mixed with the simulator's or earlier runs'.
fn wait_with_rusage(pid: u32) -> (i32, u64) {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not waited for elsewhere; both pointers are valid.
    let waited = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid as libc::pid_t, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // Linux reports ru_maxrss in kilobytes.
    (code, usage.ru_maxrss as u64 * 1024)
}
