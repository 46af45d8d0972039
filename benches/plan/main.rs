//! How plan scales with the number of load balancers (two ports and ten members each), against
//! `skyplan sim serve` on loopback, next to the raw-fetch floor measured in the same run: the
//! same URLs fetched by a plain concurrent HTTP client at the same concurrency.
//!
//! `cargo bench --bench plan` measures 100 and 1,000 load balancers; `SKYPLAN_BENCH_LARGE=1`
//! adds 5,000. Each size is measured without and with 20-40 ms of latency per request (the
//! simulator's latency fault). Apply is measured once, at `SKYPLAN_BENCH_APPLY` load
//! balancers (default 100), building the template the larger worlds are copied from (see
//! `world`). `SKYPLAN_BENCH_BINARY` measures another build of skyplan (e.g. an older one) with
//! this same bench. `SKYPLAN_BENCH_SIZES=1000,5000` picks the sizes; `SKYPLAN_BENCH_KEEP=1` keeps each size's project (config and world file);
//! `SKYPLAN_BENCH_LATENCY=0` measures only the rows without latency;
//! `SKYPLAN_BENCH_SIM_BINARY` serves the simulator from another build than the one measured.
//! Then each size is adopted (`adopt`): discover and `import --generate-config --all` against
//! the plan of the same world (`SKYPLAN_BENCH_ADOPT=0` leaves it out). Last, a rollout:
//! `SKYPLAN_BENCH_ROLLOUT` load balancers (default 20; `0` leaves it out), each with a pool
//! recreation, applied with `max-disrupted` 1, 2 and 5, against the sum of their measured
//! durations (`rollout`).

mod adopt;
mod floor;
mod rollout;
mod run;
mod sim;
mod world;

use std::path::Path;
use std::time::Duration;

use sim::SimServer;

const SIZES: [usize; 2] = [100, 1000];
const LARGE: usize = 5000;
/// Pairs of (floor, plan) measured per size; medians are reported.
const ROUNDS: usize = 3;
/// skyplan's default `max-concurrent-requests`, used by the floor too.
const CONCURRENCY: usize = 16;
const LATENCY: &str = "latency=20-40ms";

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let apply_count = env_number("SKYPLAN_BENCH_APPLY", 100);
    let (template, apply) = build_template(apply_count);
    println!("binary: {}", run::binary());
    println!("simulator: {}", run::sim_binary());
    println!(
        "apply of {apply_count} load balancers (2 ports, 10 members each) from an empty \
         account, --parallelism 20, no latency: {:.1} s",
        apply.as_secs_f64()
    );
    println!("plan and floor: medians of {ROUNDS} pairs; ratio = median of plan/floor per pair");
    println!();
    println!(
        "{:>5} | {:>8} | {:>12} | {:>8} | {:>22} | {:>9} | {:>5} | {:>7}",
        "N",
        "latency",
        "validate (s)",
        "requests",
        "plan (s) med [min-max]",
        "floor (s)",
        "ratio",
        "RSS MB"
    );
    println!(
        "{:->5}-+-{:->8}-+-{:->12}-+-{:->8}-+-{:->22}-+-{:->9}-+-{:->5}-+-{:->7}",
        "", "", "", "", "", "", "", ""
    );
    let mut sizes = SIZES.to_vec();
    if std::env::var_os("SKYPLAN_BENCH_LARGE").is_some() {
        sizes.push(LARGE);
    }
    if let Ok(list) = std::env::var("SKYPLAN_BENCH_SIZES") {
        sizes = list
            .split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect();
    }
    // `SKYPLAN_BENCH_LATENCY=0` leaves out the rows with latency, for a quicker loopback run.
    let with_latency = std::env::var("SKYPLAN_BENCH_LATENCY").map_or(true, |v| v != "0");
    let faults: &[&'static str] = if with_latency {
        &["none", LATENCY]
    } else {
        &["none"]
    };
    for &faults in faults {
        for &count in &sizes {
            let row = measure(&template, count, faults, &runtime);
            println!("{}", row.line());
        }
    }
    if std::env::var("SKYPLAN_BENCH_ADOPT").map_or(true, |v| v != "0") {
        println!();
        println!("adoption, no latency: the plan of the declared estate, then discover and import --generate-config --all from a config that declares nothing (medians of {ROUNDS})");
        println!("{}", adopt::AdoptRow::header());
        for &count in &sizes {
            println!("{}", adopt::measure(&template, count).line());
        }
    }
    rollouts();
}

/// The rollout rows: one per `max-disrupted`.
fn rollouts() {
    let count = env_number("SKYPLAN_BENCH_ROLLOUT", 20);
    if count == 0 {
        return;
    }
    println!();
    println!("rollout of {count} pool recreations, health gate on; rollout / ideal = (apply - plan) / (sum of measured / max-disrupted)");
    println!("{}", rollout::RolloutRow::header());
    for max_disrupted in [1, 2, 5] {
        println!("{}", rollout::measure(count, max_disrupted).line());
    }
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Applies `count` load balancers to a fresh simulated account; returns the world as the
/// simulator wrote it and the apply's wall time.
fn build_template(count: usize) -> (serde_json::Value, Duration) {
    let project = tempfile::tempdir().expect("temp dir");
    let world = project.path().join("world.json");
    let sim = SimServer::start(&world, "none");
    write_config(project.path(), &sim.base_url, count);
    let apply = run::skyplan(
        project.path(),
        &["apply", "--auto-approve", "--parallelism", "20"],
    );
    sim.stop();
    let text = std::fs::read(&world).expect("the simulator wrote its world");
    let world = serde_json::from_slice(&text).expect("the world is JSON");
    (world, apply.wall)
}

fn write_config(project: &Path, endpoint: &str, count: usize) {
    std::fs::write(project.join("skyplan.toml"), world::config(endpoint, count))
        .expect("write config");
}

struct Row {
    count: usize,
    faults: &'static str,
    validate: Duration,
    requests: u64,
    /// Sorted.
    plans: Vec<Duration>,
    floor: Duration,
    ratio: f64,
    max_rss: u64,
}

impl Row {
    fn line(&self) -> String {
        let s = |d: &Duration| d.as_secs_f64();
        let plan = format!(
            "{:.2} [{:.2}-{:.2}]",
            s(&median(&self.plans)),
            s(&self.plans[0]),
            s(&self.plans[self.plans.len() - 1])
        );
        let latency = if self.faults == "none" {
            "0"
        } else {
            "20-40ms"
        };
        format!(
            "{:>5} | {:>8} | {:>12.3} | {:>8} | {:>22} | {:>9.2} | {:>5.2} | {:>7.0}",
            self.count,
            latency,
            s(&self.validate),
            self.requests,
            plan,
            s(&self.floor),
            self.ratio,
            self.max_rss as f64 / 1e6
        )
    }
}

fn median<T: Copy + PartialOrd>(values: &[T]) -> T {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    sorted[sorted.len() / 2]
}

fn measure(
    template: &serde_json::Value,
    count: usize,
    faults: &'static str,
    runtime: &tokio::runtime::Runtime,
) -> Row {
    let project = tempfile::tempdir().expect("temp dir");
    let world_path = project.path().join("world.json");
    let seeded = world::seeded(template, count);
    let pools: Vec<String> = seeded["pools"]
        .as_array()
        .expect("pools")
        .iter()
        .map(|pool| pool["uuid"].as_str().expect("a pool UUID").to_string())
        .collect();
    std::fs::write(&world_path, serde_json::to_vec(&seeded).expect("JSON")).expect("write world");
    drop(seeded);
    let sim = SimServer::start(&world_path, faults);
    write_config(project.path(), &sim.base_url, count);

    let validates: Vec<Duration> = (0..ROUNDS)
        .map(|_| run::skyplan(project.path(), &["validate"]).wall)
        .collect();
    let plan_args = ["plan", "--detailed-exitcode"];
    let (mut plans, mut floors, mut ratios, mut max_rss) = (vec![], vec![], vec![], 0);
    let mut requests = 0;
    for round in 0..ROUNDS {
        let (floor, floor_requests) =
            runtime.block_on(floor::raw_fetch(&sim.base_url, &pools, CONCURRENCY));
        runtime.block_on(sim.reset_requests());
        let plan = run::skyplan(project.path(), &plan_args);
        if round == 0 {
            requests = runtime.block_on(sim.requests());
            assert_eq!(
                requests, floor_requests as u64,
                "the floor must fetch what one refresh fetches"
            );
        }
        ratios.push(plan.wall.as_secs_f64() / floor.as_secs_f64());
        plans.push(plan.wall);
        floors.push(floor);
        max_rss = max_rss.max(plan.max_rss);
    }
    plans.sort();
    if std::env::var_os("SKYPLAN_BENCH_KEEP").is_some() {
        // For profiling one plan by hand against the same world.
        eprintln!(
            "kept {count} load balancers in {}",
            project.keep().display()
        );
    }
    Row {
        count,
        faults,
        validate: median(&validates),
        requests,
        plans,
        floor: median(&floors),
        ratio: median(&ratios),
        max_rss,
    }
}
