//! Environments: `-c base -c env/prod` lays each later config over the earlier ones, key by
//! key inside tables; an array (of tables too) is replaced whole; a resource only in a later
//! layer is added; a relative path resolves against the file that writes it; an error is at
//! its place in the layer that writes it; `config show --origin` says where each value is
//! set.

use std::path::{Path, PathBuf};

use crate::support::{self, Output, Project, World};

const BASE: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\
    algorithm = \"round_robin\"\n\n\
    [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
    [[load-balancer.web.ports]]\nname = \"https\"\nport = 443\nnode-port = 30443\n";

/// A project with `base/skyplan.toml` and `env/prod.toml` written.
fn layered(prod: &str) -> Project {
    let project = Project::new();
    for (dir, file, text) in [("base", "skyplan.toml", BASE), ("env", "prod.toml", prod)] {
        std::fs::create_dir_all(project.path().join(dir)).unwrap();
        project.write(&format!("{dir}/{file}"), text);
    }
    project
}

fn layers(project: &Project) -> (PathBuf, PathBuf) {
    (project.path().join("base"), project.path().join("env"))
}

fn run(project: &Project, args: &[&str]) -> Output {
    let (base, env) = layers(project);
    let mut all = vec!["-c", env.to_str().unwrap()];
    all.extend_from_slice(args);
    support::run(&mut project.command_with_config(&base, &all))
}

fn apply(project: &Project) {
    let out = run(project, &["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
}

/// The embedded cloud's world, kept in the first layer's state directory by default.
fn world(project: &Project, state: &Path) -> World {
    let path = project.path().join(state).join("embedded/cloudscale.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    World(serde_json::from_str(&text).unwrap())
}

#[test]
fn a_later_layer_overrides_a_key_and_keeps_the_others() {
    let project = layered("[load-balancer.web]\nalgorithm = \"source_ip\"\n");
    apply(&project);
    let world = world(&project, Path::new("base/state"));
    assert_eq!(world.all("pools")[0]["algorithm"], "source_ip");
    assert_eq!(world.all("listeners").len(), 2, "the ports are base's");
}

#[test]
fn an_array_of_tables_in_a_later_layer_replaces_the_earlier_one_whole() {
    let prod = "[[load-balancer.web.ports]]\nname = \"web\"\nport = 8080\nnode-port = 30880\n";
    let project = layered(prod);
    apply(&project);
    let listeners = world(&project, Path::new("base/state")).all("listeners");
    let ports: Vec<_> = listeners
        .iter()
        .map(|l| l["protocol_port"].clone())
        .collect();
    assert_eq!(ports, [8080], "{listeners:?}");
}

#[test]
fn a_resource_only_in_a_later_layer_is_added() {
    let prod = "[load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                members = [\"10.0.0.41\"]\n\n[[load-balancer.api.ports]]\nname = \"grpc\"\n\
                port = 443\nnode-port = 30444\n";
    let project = layered(prod);
    let out = run(&project, &["validate"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("valid: 2 resources"), "{out:?}");
    // `-c` before and after the subcommand: both count.
    let (base, env) = layers(&project);
    let after = ["validate", "-c", env.to_str().unwrap()];
    let out = support::run(&mut project.command_with_config(&base, &after));
    assert!(out.stdout.contains("valid: 2 resources"), "{out:?}");
}

#[test]
fn a_relative_state_dir_resolves_against_the_file_that_writes_it() {
    let project = layered("[settings]\nstate-dir = \"prod-state\"\n");
    apply(&project);
    let world = world(&project, Path::new("env/prod-state"));
    assert_eq!(world.all("load_balancers").len(), 1);
    assert!(
        !project.path().join("base/state").exists(),
        "nothing in base's default"
    );
}

#[test]
fn an_error_in_the_second_layer_is_located_in_the_second_file() {
    let project = layered("# production\n[load-balancer.web]\nalgorithm = 5\n");
    let out = run(&project, &["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("invalid type: integer `5`"), "{out:?}");
    assert!(out.stderr.contains("env/prod.toml:3:13"), "{out:?}");
}

#[test]
fn config_show_origin_prints_each_value_with_the_place_that_sets_it() {
    let project = layered(
        "[load-balancer.web]\nalgorithm = \"source_ip\"\n\n[settings]\nstate-dir = \"s\"\n",
    );
    let out = run(&project, &["config", "show", "--origin"]);
    assert_eq!(out.code, 0, "{out:?}");
    let shown = out
        .stdout
        .replace(&format!("{}/", project.path().display()), "");
    assert_eq!(
        shown,
        "[load-balancer.web]\n\
         algorithm = \"source_ip\"  # env/prod.toml:2\n\
         members = [\"10.0.0.11\"]  # base/skyplan.toml:7\n\
         provider = \"cloudscale\"  # base/skyplan.toml:5\n\
         zone = \"lpg1\"  # base/skyplan.toml:6\n\
         \n\
         [[load-balancer.web.ports]]\n\
         name = \"http\"  # base/skyplan.toml:11\n\
         node-port = 30080  # base/skyplan.toml:13\n\
         port = 80  # base/skyplan.toml:12\n\
         \n\
         [[load-balancer.web.ports]]\n\
         name = \"https\"  # base/skyplan.toml:16\n\
         node-port = 30443  # base/skyplan.toml:18\n\
         port = 443  # base/skyplan.toml:17\n\
         \n\
         [provider.cloudscale]\n\
         endpoint = \"embedded\"  # base/skyplan.toml:2\n\
         \n\
         [settings]\n\
         state-dir = \"s\"  # env/prod.toml:5\n"
    );
    let plain = run(&project, &["config", "show"]);
    assert!(!plain.stdout.contains('#'), "{plain:?}");
    assert!(
        plain.stdout.contains("\nalgorithm = \"source_ip\"\n"),
        "{plain:?}"
    );
}

#[test]
fn config_show_of_an_invalid_config_reports_its_problems() {
    let project = layered("[load-balancer.web]\nmembers = [\"10.0.0.300\"]\n");
    let out = run(&project, &["config", "show", "--origin"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("env/prod.toml:2:12"), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn a_relative_kubeconfig_resolves_against_the_file_that_writes_it() {
    let project = Project::new();
    let files = [
        (
            "base/skyplan.toml",
            "[cluster.prod]\nprovider = \"kubernetes\"\n",
        ),
        (
            "env/prod.toml",
            "[cluster.prod]\nkubeconfig = \"kube.yaml\"\n",
        ),
    ];
    for (file, text) in files {
        std::fs::create_dir_all(project.path().join(file).parent().unwrap()).unwrap();
        project.write(file, text);
    }
    let out = run(&project, &["plan"]);
    assert_eq!(out.code, 1, "{out:?}");
    let expected = project.path().join("env/kube.yaml");
    let said = format!("reading kubeconfig {}:", expected.display());
    assert!(out.stderr.contains(&said), "{said}: {out:?}");
}
