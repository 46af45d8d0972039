//! How a CloudStack refresh and plan scale with the number of LB rules, against the embedded
//! simulator: for each N, N rules (load balancers of up to 100 ports on the VMs web-1 and
//! web-2) are applied, then `skyplan plan` runs five times. Prints the API requests of one
//! refresh (from skyplan's own count), the wall time of `plan` (min / median / max) and of the
//! apply. Run with `cargo bench --bench cloudstack`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_skyplan");
const SIZES: [usize; 3] = [1, 500, 1200];
const PORTS_PER_LB: usize = 100;
const PLANS: usize = 5;

fn main() {
    println!(
        "{:>5} | {:>16} | {:>32} | {:>9}",
        "rules", "refresh requests", "plan min / median / max (ms)", "apply (s)"
    );
    println!("{:->5}-+-{:->16}-+-{:->32}-+-{:->9}", "", "", "", "");
    for rules in SIZES {
        println!("{}", measure(rules));
    }
}

fn config(rules: usize) -> String {
    let mut text = String::from("[provider.cloudstack]\nendpoint = \"embedded\"\n\n");
    for lb in 0..rules.div_ceil(PORTS_PER_LB) {
        write!(
            text,
            "[load-balancer.lb{lb}]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n\
             members = [\"web-1\", \"web-2\"]\n"
        )
        .unwrap();
        let ports = (rules - lb * PORTS_PER_LB).min(PORTS_PER_LB);
        for port in 0..ports {
            write!(
                text,
                "[[load-balancer.lb{lb}.ports]]\nport = {}\nnode-port = {}\n",
                10000 + port,
                30000 + port
            )
            .unwrap();
        }
        text.push('\n');
    }
    text
}

fn skyplan(dir: &Path, args: &[&str]) -> (Duration, String) {
    let started = Instant::now();
    let out = Command::new(BINARY)
        .arg("-c")
        .arg(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("SKYPLAN_SIM_JOB_MS", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run skyplan");
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        matches!(out.status.code(), Some(0) | Some(2)),
        "skyplan {args:?}: {stderr}"
    );
    (elapsed, stderr)
}

/// skyplan logs `requests=N` once refresh and plan are done (with -v).
fn requests(log: &str) -> u64 {
    log.lines()
        .find(|l| l.contains("refresh and plan done"))
        .and_then(|l| l.split("requests=").nth(1))
        .and_then(|n| n.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no request count in: {log}"))
}

fn measure(rules: usize) -> String {
    let project = tempfile::tempdir().expect("temp dir");
    std::fs::write(project.path().join("skyplan.toml"), config(rules)).expect("config");
    let (apply, _) = skyplan(
        project.path(),
        &["apply", "--auto-approve", "--parallelism", "20"],
    );
    let (first, log) = skyplan(project.path(), &["-v", "plan", "--detailed-exitcode"]);
    let refresh_requests = requests(&log);
    let mut plans = vec![first];
    plans.extend((1..PLANS).map(|_| skyplan(project.path(), &["plan", "--detailed-exitcode"]).0));
    plans.sort();
    let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
    format!(
        "{:>5} | {:>16} | {:>32} | {:>9.1}",
        rules,
        refresh_requests,
        format!(
            "{:.0} / {:.0} / {:.0}",
            ms(&plans[0]),
            ms(&plans[PLANS / 2]),
            ms(&plans[PLANS - 1])
        ),
        apply.as_secs_f64()
    )
}
