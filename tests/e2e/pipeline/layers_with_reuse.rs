//! Layers and reuse together: `-c base -c env/prod` lays the layers over each other as TOML
//! first, then expands `[variables]`, `[defaults…]` and `for-each` on the result. So a later
//! layer overrides a variable's value and a default's key; it overrides a for-each resource's
//! template (every instance) or one item's field of a map `for-each`, never an instance by its
//! address; and every value keeps the place it is written at, for errors and for
//! `config show --origin`.

use std::path::Path;

use crate::support::{self, Output, Project, World};

const BASE: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [variables]\nenv = \"staging\"\n\n\
    [defaults.load-balancer.cloudscale]\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\
    algorithm = \"round_robin\"\n\n\
    [[defaults.load-balancer.cloudscale.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
    [load-balancer.web]\nprovider = \"cloudscale\"\nfor-each = [\"a\", \"b\"]\n\
    name = \"${var.env}-web-${each.key}\"\n";

/// A project with `base/skyplan.toml` and `env/prod.toml` written.
fn layered(prod: &str) -> Project {
    let project = Project::new();
    for (dir, file, text) in [("base", "skyplan.toml", BASE), ("env", "prod.toml", prod)] {
        std::fs::create_dir_all(project.path().join(dir)).unwrap();
        project.write(&format!("{dir}/{file}"), text);
    }
    project
}

fn run(project: &Project, args: &[&str]) -> Output {
    let env = project.path().join("env");
    let mut all = vec!["-c", env.to_str().unwrap()];
    all.extend_from_slice(args);
    support::run(&mut project.command_with_config(&project.path().join("base"), &all))
}

/// The embedded cloud's world, in the first layer's state directory.
fn world(project: &Project) -> World {
    let path = Path::new("base/state/embedded/cloudscale.json");
    let text = std::fs::read_to_string(project.path().join(path)).unwrap();
    World(serde_json::from_str(&text).unwrap())
}

#[test]
fn a_later_layer_overrides_a_variable_and_a_default_key() {
    let project = layered(
        "[variables]\nenv = \"prod\"\n\n[defaults.load-balancer.cloudscale]\nzone = \"rma1\"\n",
    );
    let out = run(&project, &["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let world = world(&project);
    for name in ["prod-web-a", "prod-web-b"] {
        let found = world.named("load_balancers", name);
        let found = found.unwrap_or_else(|| panic!("{name}: {:?}", world.all("load_balancers")));
        assert_eq!(found["zone"], "rma1", "the later layer's default");
    }
    let pools = world.all("pools");
    assert!(
        pools.iter().all(|p| p["algorithm"] == "round_robin"),
        "{pools:?}"
    );
    assert_eq!(world.all("listeners").len(), 2, "base's default port, each");
    // --var still wins over every layer's [variables].
    let out = run(&project, &["plan", "--var", "env=test", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("test-web-a"), "{out:?}");
}

#[test]
fn a_later_layer_overrides_the_template_of_a_for_each_resource_for_every_instance() {
    let project = layered("[load-balancer.web]\nalgorithm = \"source_ip\"\nfor-each = [\"a\"]\n");
    let out = run(&project, &["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let world = world(&project);
    let balancers = world.all("load_balancers");
    assert_eq!(balancers.len(), 1, "the later layer's items: {balancers:?}");
    assert_eq!(balancers[0]["name"], "staging-web-a");
    assert_eq!(world.all("pools")[0]["algorithm"], "source_ip");
}

#[test]
fn a_later_layer_does_not_address_one_instance() {
    let project = layered("[load-balancer.'web[\"a\"]']\nalgorithm = \"source_ip\"\n");
    let out = run(&project, &["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("env/prod.toml:1"), "{out:?}");
}

#[test]
fn a_bad_default_in_a_later_layer_is_an_error_there_naming_the_instance() {
    let project = layered("# prod\n[defaults.load-balancer.cloudscale]\nalgorithm = \"fastest\"\n");
    let out = run(&project, &["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("env/prod.toml:3:13"), "{out:?}");
    assert!(out.stderr.contains("load-balancer.web[\"a\"]"), "{out:?}");
}

#[test]
fn config_show_origin_of_a_defaulted_and_a_variable_value() {
    let project = layered("[defaults.load-balancer.cloudscale]\nzone = \"rma1\"\n");
    let out = run(
        &project,
        &["config", "show", "--origin", "--var", "env=prod"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let shown = out
        .stdout
        .replace(&format!("{}/", project.path().display()), "");
    let instance = shown
        .split("[load-balancer.'web[\"b\"]']\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{shown}"));
    for line in [
        "algorithm = \"round_robin\"  # base/skyplan.toml:10\n",
        "members = [\"10.0.0.11\"]  # base/skyplan.toml:9\n",
        "name = \"prod-web-b\"  # base/skyplan.toml:20\n",
        "provider = \"cloudscale\"  # base/skyplan.toml:18\n",
        "zone = \"rma1\"  # env/prod.toml:2\n",
        "port = 80  # base/skyplan.toml:14\n",
    ] {
        assert!(instance.contains(line), "{line} in {shown}");
    }
    assert!(!shown.contains("[variables]"), "{shown}");
    assert!(!shown.contains("[defaults"), "{shown}");
}

#[test]
fn a_later_layer_changes_one_item_of_a_map_for_each() {
    let project = Project::new();
    let base =
        BASE.replace(
            "for-each = [\"a\", \"b\"]",
            "for-each = { a = { zone = \"lpg1\" }, b = { zone = \"lpg1\" } }",
        )
        .replace(
            "[defaults.load-balancer.cloudscale]\nzone = \"lpg1\"\n",
            "[defaults.load-balancer.cloudscale]\n",
        ) + "zone = \"${each.value.zone}\"\n";
    let prod = "[load-balancer.web.for-each.b]\nzone = \"rma1\"\n";
    for (dir, file, text) in [
        ("base", "skyplan.toml", base.as_str()),
        ("env", "prod.toml", prod),
    ] {
        std::fs::create_dir_all(project.path().join(dir)).unwrap();
        project.write(&format!("{dir}/{file}"), text);
    }
    let out = run(&project, &["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let world = world(&project);
    let zone = |name: &str| world.named("load_balancers", name).unwrap()["zone"].clone();
    assert_eq!(zone("staging-web-a"), "lpg1");
    assert_eq!(zone("staging-web-b"), "rma1");
}
