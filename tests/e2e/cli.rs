//! The command line around the plan: config errors with their position, the graph, the
//! schema, and the quickstart the README points at.

use std::path::Path;

use crate::support::Project;

const VALID: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
    [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

/// Each malformed config exits 1, names file:line:col and sends nothing (no world appears).
#[test]
fn malformed_configs_exit_1_with_the_position() {
    let cases = [
        (
            "unknown key",
            VALID.replace("zone = \"lpg1\"", "zone = \"lpg1\"\ncolour = \"blue\""),
            "skyplan.toml:7:1",
        ),
        (
            "wrong type",
            VALID.replace("port = 80", "port = \"eighty\""),
            "skyplan.toml:11:8",
        ),
        (
            "invalid CIDR",
            VALID.replace(
                "zone = \"lpg1\"",
                "zone = \"lpg1\"\nallowed-cidrs = [\"10.0.0.0/33\"]",
            ),
            "skyplan.toml:7:18",
        ),
        (
            "invalid enum",
            VALID.replace(
                "zone = \"lpg1\"",
                "zone = \"lpg1\"\nalgorithm = \"fastest\"",
            ),
            "skyplan.toml:7:13",
        ),
        (
            "invalid port",
            VALID.replace("node-port = 30080", "node-port = 0"),
            "skyplan.toml:12:13",
        ),
        (
            "TOML syntax",
            VALID.replace("port = 80", "port = = 80"),
            "skyplan.toml:11:8",
        ),
    ];
    for (what, text, position) in cases {
        let project = Project::new();
        project.config(&text);
        for command in [&["validate"][..], &["plan"], &["apply", "--auto-approve"]] {
            let out = project.run(command);
            assert_eq!(out.code, 1, "{what}, {command:?}: {out:?}");
            assert!(
                out.stderr.contains(position),
                "{what}: no {position} in {out:?}"
            );
        }
        assert!(
            !project.world_path().exists(),
            "{what}: nothing was sent anywhere"
        );
    }
}

#[test]
fn a_floating_ip_claimed_twice_is_a_config_error_naming_both() {
    let project = Project::new();
    let lb = |name: &str, member: &str, port: u16| {
        format!(
            "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"{member}\"]\nfloating-ips = [\"5.102.150.123/32\"]\n\n\
             [[load-balancer.{name}.ports]]\nport = 80\nnode-port = {port}\n\n"
        )
    };
    project.config(&format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n{}{}",
        lb("web", "10.0.0.11", 30080),
        lb("api", "10.0.0.12", 30081)
    ));
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("5.102.150.123/32"), "{out:?}");
    assert!(
        out.stderr.contains("skyplan.toml:8:") && out.stderr.contains("skyplan.toml:18:"),
        "both places: {out:?}"
    );
}

#[test]
fn validate_accepts_a_good_config() {
    let project = Project::new();
    project.config(VALID);
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("1 resources"), "{out:?}");
}

#[test]
fn graph_in_dot_and_mermaid() {
    let project = Project::new();
    project.config(VALID);
    let dot = project.run(&["graph"]);
    assert_eq!(dot.code, 0, "{dot:?}");
    assert!(dot.stdout.starts_with("digraph"), "{dot:?}");
    assert!(
        dot.stdout.contains("pool tcp/http") && dot.stdout.contains("->"),
        "{dot:?}"
    );
    let mermaid = project.run(&["graph", "--format", "mermaid"]);
    assert!(mermaid.stdout.starts_with("flowchart TD"), "{mermaid:?}");
    assert!(mermaid.stdout.contains("-->"), "{mermaid:?}");
}

#[test]
fn schema_is_the_committed_one() {
    let out = Project::new().run(&["schema"]);
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/skyplan.schema.json"),
    )
    .unwrap();
    let printed: serde_json::Value = out.json();
    let committed: serde_json::Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(printed, committed);
}

/// The README's first command: the quickstart's plan shows a change of every class.
#[test]
fn quickstart_plan_shows_every_class() {
    let project = Project::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = project.path().join("examples/quickstart");
    std::fs::create_dir_all(&example).unwrap();
    std::fs::copy(
        repo.join("examples/quickstart/skyplan.toml"),
        example.join("skyplan.toml"),
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join("state/embedded")).unwrap();
    std::fs::copy(
        repo.join("state/embedded/cloudscale.json"),
        project.path().join("state/embedded/cloudscale.json"),
    )
    .unwrap();
    let out = crate::support::run(&mut project.command_with_config(&example, &["plan", "--json"]));
    assert_eq!(out.code, 0, "{out:?}");
    let plan = out.json();
    for class in ["none", "minimal", "pool-recreate", "forbidden"] {
        assert!(
            plan["summary"]["by_impact"][class].as_u64().unwrap() >= 1,
            "no {class} change: {plan:#}"
        );
    }
    for change in plan["changes"].as_array().unwrap() {
        for attribute in change["attributes"].as_array().unwrap() {
            assert!(!attribute["reason"].as_str().unwrap().is_empty());
            if attribute["impact"] != "none" {
                assert!(
                    attribute["estimated_downtime_s"]["max"].as_u64().unwrap() > 0,
                    "{attribute:#}"
                );
            }
        }
    }
}
