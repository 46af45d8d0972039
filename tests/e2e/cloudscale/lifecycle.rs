//! Whole-life behaviour: create, adopt after a lost state, refuse what must be refused, report
//! bad configs with their position, and keep refresh to a fixed number of requests.

use std::fmt::Write;

use crate::support::{Project, SimServer, SIM_TOKEN};

fn load_balancer(name: &str, extra: &str) -> String {
    format!(
        "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\", \"10.0.0.12\"]\n{extra}\n\
         [[load-balancer.{name}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n"
    )
}

const EMBEDDED: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n";

#[test]
fn a_new_load_balancer_is_created_then_the_plan_is_empty() {
    let project = Project::new();
    project.config(&format!("{EMBEDDED}{}", load_balancer("web", "")));
    let plan = project.plan(&[]);
    assert_eq!(plan["changes"][0]["action"], "create");
    assert_eq!(plan["impact"], "none");
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 2, "changes present: {out:?}");
    project.apply_ok();
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "no changes after apply: {out:?}");
    assert!(
        !out.stderr.contains("interrupted"),
        "a finished apply leaves no journal: {out:?}"
    );
    assert!(!project.path().join("state/skyplan.journal").exists());
    assert!(out.stdout.contains("No changes"), "{out:?}");
    let world = project.world();
    assert_eq!(world.all("load_balancers").len(), 1);
    assert_eq!(world.all("members").len(), 2);
    assert_eq!(
        world.all("load_balancers")[0]["tags"]["skyplan.address"],
        "load-balancer.web"
    );
}

#[test]
fn a_lost_state_dir_adopts_instead_of_duplicating() {
    let project = Project::new();
    project.config(&format!(
        "{EMBEDDED}{}{}",
        load_balancer("web", ""),
        load_balancer("api", "")
    ));
    project.apply_ok();
    std::fs::remove_file(project.path().join("state/skyplan.state.json"))
        .expect("state file exists");
    let plan = project.plan(&[]);
    assert_eq!(
        plan["summary"]["no_op"], 2,
        "tagged objects are adopted: {plan:#}"
    );
    project.apply_ok();
    let world = project.world();
    assert_eq!(world.all("load_balancers").len(), 2, "no duplicates");
    assert_eq!(world.all("pools").len(), 2, "no duplicates");
    let out = project.run(&["state", "list"]);
    assert_eq!(
        out.stdout, "load-balancer.api\nload-balancer.web\n",
        "{out:?}"
    );
}

#[test]
fn a_removed_load_balancer_is_refused_unless_allowed() {
    let project = Project::new();
    project.config(&format!(
        "{EMBEDDED}{}{}",
        load_balancer("web", ""),
        load_balancer("api", "")
    ));
    project.apply_ok();
    project.config(&format!("{EMBEDDED}{}", load_balancer("web", "")));
    let plan = project.plan(&[]);
    let api = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "load-balancer.api")
        .unwrap()
        .clone();
    assert_eq!(
        (api["action"].as_str(), api["impact"].as_str()),
        (Some("delete"), Some("forbidden"))
    );
    let out = project.apply(&[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        project.world().all("load_balancers").len(),
        2,
        "nothing deleted"
    );
    let out = project.apply(&["--allow-delete", "load-balancer.api"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(project.world().all("load_balancers").len(), 1);
    assert_eq!(
        project.run(&["state", "list"]).stdout,
        "load-balancer.web\n"
    );
}

#[test]
fn replace_does_a_forbidden_change_explicitly() {
    let project = Project::new();
    project.config(&format!("{EMBEDDED}{}", load_balancer("web", "")));
    project.apply_ok();
    let before = project.world().uuid("load_balancers", "web");
    project.config(&format!(
        "{EMBEDDED}{}",
        load_balancer("web", "flavor = \"lb-large\"")
    ));
    let plan = project.plan(&["--replace", "load-balancer.web"]);
    assert_eq!(plan["changes"][0]["action"], "replace");
    let out = project.apply(&["--replace", "load-balancer.web"]);
    assert_eq!(out.code, 0, "{out:?}");
    let world = project.world();
    assert_eq!(world.all("load_balancers").len(), 1);
    assert_ne!(world.uuid("load_balancers", "web"), before);
    assert_eq!(world.all("load_balancers")[0]["flavor"], "lb-large");
}

#[test]
fn fail_on_exits_3_at_or_above_the_class() {
    let project = Project::new();
    project.config(&format!("{EMBEDDED}{}", load_balancer("web", "")));
    project.apply_ok();
    project.config(&format!(
        "{EMBEDDED}{}",
        load_balancer("web", "algorithm = \"source_ip\"")
    ));
    assert_eq!(project.run(&["plan", "--fail-on", "pool-recreate"]).code, 3);
    assert_eq!(project.run(&["plan", "--fail-on", "forbidden"]).code, 0);
    let out = project.run(&["plan"]);
    assert!(
        out.stdout
            .contains("ports.http.algorithm: \"round_robin\" → \"source_ip\""),
        "{out:?}"
    );
    assert!(out.stdout.contains("60-120 s"), "{out:?}");
}

#[test]
fn apply_without_a_terminal_needs_auto_approve() {
    let project = Project::new();
    project.config(&format!("{EMBEDDED}{}", load_balancer("web", "")));
    let out = project.run(&["apply"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("--auto-approve"), "{out:?}");
}

/// Writes `count` load balancers, each with one pool, served by `sim serve` over a world file
/// they were applied to; returns the requests a plan made.
fn refresh_requests(count: usize) -> (u64, serde_json::Value) {
    let project = Project::new();
    let world = project.path().join("world.json");
    let sim = SimServer::start(&world);
    let mut config = format!("[provider.cloudscale]\nendpoint = \"{}\"\n\n", sim.base_url);
    for i in 0..count {
        write!(config, "{}", load_balancer(&format!("lb{i}"), "")).unwrap();
    }
    project.config(&config);
    let out = crate::support::run(
        project
            .command(&["apply", "--auto-approve", "--parallelism", "20"])
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        !out.stdout.contains(SIM_TOKEN) && !out.stderr.contains(SIM_TOKEN),
        "the token is never printed"
    );
    sim.reset_requests();
    let out = crate::support::run(
        project
            .command(&["plan", "--detailed-exitcode"])
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let requests = sim.requests();
    (requests["total"].as_u64().unwrap(), requests)
}

#[test]
fn refresh_costs_six_collection_reads_plus_one_per_pool() {
    for count in [1, 500] {
        let (total, requests) = refresh_requests(count);
        assert_eq!(total, 6 + count as u64, "{requests:#}");
    }
}

#[test]
fn import_takes_an_existing_load_balancer_under_management_and_state_rm_lets_it_go() {
    let project = Project::new();
    let sim = SimServer::start_settling(&project.path().join("world.json"), 0);
    // Made by hand, without skyplan's tag.
    let made = crate::support::http::request("POST", &format!("{}/load-balancers", sim.base_url))
        .bearer(SIM_TOKEN)
        .body(
            "application/json",
            r#"{"name": "web", "flavor": "lb-standard", "zone": "lpg1"}"#,
        )
        .ok()
        .expect("create by hand");
    let uuid = serde_json::from_str::<serde_json::Value>(&made).unwrap()["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let endpoint = format!("[provider.cloudscale]\nendpoint = \"{}\"\n\n", sim.base_url);
    project.config(&format!("{endpoint}{}", load_balancer("web", "")));
    let skyplan = |args: &[&str]| {
        crate::support::run(project.command(args).env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    };

    let out = skyplan(&["import", "load-balancer.web", &uuid]);
    assert_eq!(out.code, 0, "{out:?}");
    let plan = skyplan(&["plan", "--json"]).json();
    assert_eq!(
        plan["changes"][0]["action"], "update",
        "the imported load balancer is updated, not created: {plan:#}"
    );
    assert_eq!(skyplan(&["apply", "--auto-approve"]).code, 0);
    assert_eq!(
        sim.list("/load-balancers").len(),
        1,
        "no second load balancer"
    );
    assert_eq!(sim.list("/load-balancers/pools").len(), 1);

    project.config(&endpoint);
    let out = skyplan(&["state", "rm", "load-balancer.web"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        skyplan(&["plan", "--detailed-exitcode"]).code,
        0,
        "forgotten: nothing to plan"
    );
    assert_eq!(
        sim.list("/load-balancers").len(),
        1,
        "the cloud object stays"
    );
}
