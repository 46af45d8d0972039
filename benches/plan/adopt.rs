//! Adopting an estate at scale: the same seeded world, first planned with the config that
//! declares it, then taken over from a config that declares nothing — `skyplan discover`, then
//! `skyplan import --generate-config --all` — and planned again from the generated file, which
//! must show no changes (the run fails otherwise). The bound: discovering and
//! generating cost at most 1.5× the plan.

use std::path::Path;
use std::time::Duration;

use super::run;
use super::sim::SimServer;
use super::{median, world, ROUNDS};

pub struct AdoptRow {
    count: usize,
    plan: Duration,
    discover: Duration,
    generate: Duration,
}

impl AdoptRow {
    pub fn header() -> String {
        format!(
            "{:>5} | {:>8} | {:>12} | {:>24} | {:>15}\n{:->5}-+-{:->8}-+-{:->12}-+-{:->24}-+-{:->15}",
            "N", "plan (s)", "discover (s)", "import --generate-config", "generate / plan", "", "", "", "", ""
        )
    }

    pub fn line(&self) -> String {
        format!(
            "{:>5} | {:>8.2} | {:>12.2} | {:>22.2} s | {:>15.2}",
            self.count,
            self.plan.as_secs_f64(),
            self.discover.as_secs_f64(),
            self.generate.as_secs_f64(),
            self.generate.as_secs_f64() / self.plan.as_secs_f64()
        )
    }
}

/// Measures one size without latency: medians of [`ROUNDS`] runs of each command.
pub fn measure(template: &serde_json::Value, count: usize) -> AdoptRow {
    let project = tempfile::tempdir().expect("temp dir");
    let world_path = project.path().join("world.json");
    let seeded = world::seeded(template, count);
    std::fs::write(&world_path, serde_json::to_vec(&seeded).expect("JSON")).expect("write world");
    drop(seeded);
    let sim = SimServer::start(&world_path, "none");
    let declared = project.path().join("declared");
    std::fs::create_dir(&declared).expect("mkdir");
    std::fs::write(
        declared.join("skyplan.toml"),
        world::config(&sim.base_url, count),
    )
    .expect("write config");
    let plans: Vec<Duration> = (0..ROUNDS)
        .map(|_| run::skyplan(&declared, &["plan", "--detailed-exitcode"]).wall)
        .collect();
    let (mut discovers, mut generates) = (vec![], vec![]);
    for round in 0..ROUNDS {
        let adopting = project.path().join(format!("adopting-{round}"));
        std::fs::create_dir(&adopting).expect("mkdir");
        let provider = format!("[provider.cloudscale]\nendpoint = \"{}\"\n", sim.base_url);
        std::fs::write(adopting.join("skyplan.toml"), provider).expect("write config");
        discovers.push(run::skyplan(&adopting, &["discover", "--format", "json"]).wall);
        let file = adopting.join("adopted.toml");
        let file = file.to_str().expect("a UTF-8 path");
        generates
            .push(run::skyplan(&adopting, &["import", "--generate-config", file, "--all"]).wall);
        assert_adopted(&adopting, count);
    }
    sim.stop();
    AdoptRow {
        count,
        plan: median(&plans),
        discover: median(&discovers),
        generate: median(&generates),
    }
}

/// The generated config declares every load balancer, and its plan has no changes (`run`
/// fails on exit 2).
fn assert_adopted(project: &Path, count: usize) {
    let text = std::fs::read_to_string(project.join("adopted.toml")).expect("the generated file");
    let declared = text
        .lines()
        .filter(|l| l.starts_with("[load-balancer."))
        .count();
    assert_eq!(declared, count, "every load balancer adopted");
    run::skyplan(project, &["plan", "--detailed-exitcode"]);
}
