//! A flaky cloud: with about 10% of API calls failing (throttled, server errors, dropped
//! connections, and calls that were carried out but whose answer was lost), apply still
//! converges in one run and creates nothing twice.

use crate::support::{run, Project, SimServer, SIM_TOKEN};

const FAULTS: &str = "429=0.03,5xx=0.03,drop=0.02,after-commit=0.02,seed=11";

#[test]
fn apply_converges_under_injected_faults_without_duplicates() {
    let project = Project::new();
    let world = project.path().join("world.json");
    let sim = SimServer::start_with(&world, 0, FAULTS);
    let mut config = format!("[provider.cloudscale]\nendpoint = \"{}\"\n\n", sim.base_url);
    for i in 0..12 {
        config += &format!(
            "[load-balancer.lb{i}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\", \"10.0.0.12\"]\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"https\"\nport = 443\nnode-port = 30443\n\n"
        );
    }
    project.config(&config);
    let skyplan = |args: &[&str]| {
        run(project
            .command(args)
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
            .env("SKYPLAN_LOG", "skyplan=debug"))
    };

    let out = skyplan(&["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "apply converges despite the faults: {out:?}");
    let requests = sim.requests();
    let retries =
        out.stderr.matches("retrying").count() + out.stderr.matches("trying again").count();
    let adopted = out.stderr.matches("went through despite").count();

    let again = skyplan(&["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "the final plan is empty: {again:?}");

    let pools: usize = sim.list("/load-balancers/pools").len();
    let lbs: usize = sim.list("/load-balancers").len();
    let members: usize = sim
        .list("/load-balancers/pools")
        .iter()
        .map(|p| {
            sim.list(&format!(
                "/load-balancers/pools/{}/members",
                p["uuid"].as_str().unwrap()
            ))
            .len()
        })
        .sum();
    assert_eq!((lbs, pools, members), (12, 24, 48), "nothing created twice");
    assert_eq!(sim.list("/load-balancers/listeners").len(), 24);
    assert_eq!(sim.list("/load-balancers/health-monitors").len(), 24);

    let faults = &requests["faults"];
    let injected: u64 = ["429", "5xx", "drop", "after-commit"]
        .iter()
        .map(|k| faults[k].as_u64().unwrap())
        .sum();
    assert!(injected > 0, "faults were injected: {requests:#}");
    println!(
        "faults test: {} calls, {injected} injected faults ({faults}), {retries} retries, {adopted} lost creates adopted, final plan empty",
        requests["total"]
    );
}
