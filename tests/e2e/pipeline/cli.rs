//! The command line around the plan: config errors with their position, the graph, the
//! schema, and the quickstart the README points at.

use std::path::Path;

use crate::support::Project;

const VALID: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
    [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

/// A mistyped flag or value is an error (1), never the 2 of "changes present" or "drift
/// present" that a CI job would take for drift; help and version are not errors.
#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let project = Project::new();
    project.config(VALID);
    for args in [
        &["drift", "--formt", "json"][..],
        &["plan", "--detailed-exitcode", "--fail-on", "sometimes"],
        &["no-such-command"],
    ] {
        let out = project.run(args);
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(out.stderr.contains("error:"), "{args:?}: {out:?}");
    }
    for args in [&["--help"][..], &["drift", "--help"], &["--version"]] {
        let out = project.run(args);
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        assert!(!out.stdout.is_empty(), "{args:?}: {out:?}");
    }
}

/// `SKYPLAN_CONFIG` is the default of `-c`: run from anywhere, the config is found; `-c`
/// still wins over it.
#[test]
fn skyplan_config_is_the_default_config() {
    let project = Project::new();
    project.config(VALID);
    let elsewhere = tempfile::tempdir().unwrap();
    let validate = |config: Option<&str>| {
        let mut command = std::process::Command::new(crate::support::binary());
        command
            .current_dir(elsewhere.path())
            .env("NO_COLOR", "1")
            .env("SKYPLAN_CONFIG", project.path());
        if let Some(config) = config {
            command.args(["-c", config]);
        }
        crate::support::run(command.arg("validate"))
    };
    let out = validate(None);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("The configuration is valid: 1 resource."),
        "{out:?}"
    );
    let missing = elsewhere.path().join("missing.toml");
    let out = validate(Some(missing.to_str().unwrap()));
    assert_eq!(out.code, 1, "-c wins over SKYPLAN_CONFIG: {out:?}");
    assert!(out.stderr.contains("missing.toml"), "{out:?}");
}

/// Completion scripts for the four shells, and man pages, generated from the commands.
#[test]
fn completions_and_man_pages() {
    let project = Project::new();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef skyplan"),
        ("fish", "complete -c skyplan"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = project.run(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {out:?}");
        assert!(out.stdout.contains(marker), "{shell}: {}", out.stdout);
        assert!(
            out.stdout.contains("force-unlock"),
            "{shell}: every command"
        );
    }
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut bash| {
            use std::io::Write;
            let script = project.run(&["completions", "bash"]).stdout;
            bash.stdin.take().unwrap().write_all(script.as_bytes())?;
            bash.wait()
        });
    assert!(syntax.unwrap().success(), "the bash script parses");
    let page = project.run(&["man"]);
    assert_eq!(page.code, 0, "{page:?}");
    assert!(page.stdout.contains(".TH skyplan 1"), "{}", page.stdout);
    let plan = project.run(&["man", "plan"]);
    assert!(
        plan.stdout.contains(".TH skyplan-plan 1"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("detailed\\-exitcode"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("\\-\\-config"),
        "global options on the command's page: {}",
        plan.stdout
    );
    assert!(page.stdout.contains("SKYPLAN_CONFIG"), "{}", page.stdout);
    let unknown = project.run(&["man", "plna"]);
    assert_eq!(unknown.code, 1, "{unknown:?}");
    assert!(
        unknown.stderr.contains("`plna` is not a skyplan command"),
        "{unknown:?}"
    );
}

/// Exit codes 2-5 are not only in the README: `--help` and every man page have an EXIT
/// STATUS, each command's own, and a subcommand of a subcommand has its page.
#[test]
fn help_and_man_pages_say_the_exit_status() {
    let project = Project::new();
    let help = project.run(&["--help"]);
    assert!(
        help.stdout.contains("Exit status:")
            && help
                .stdout
                .contains("  4  apply: applied, but some changes were held back"),
        "{}",
        help.stdout
    );
    let apply = project.run(&["apply", "--help"]);
    assert!(
        apply
            .stdout
            .contains("  5  a rollout stopped by a health gate"),
        "{}",
        apply.stdout
    );
    let plan = project.run(&["plan", "--help"]);
    assert!(
        plan.stdout
            .contains("  3  with --fail-on CLASS: a change at or above CLASS"),
        "{}",
        plan.stdout
    );
    let page = project.run(&["man"]).stdout;
    assert!(
        page.contains(".SH \"EXIT STATUS\"\n.TP\n\\fB0\\fR"),
        "{page}"
    );
    assert!(page.contains(".SH \"ENVIRONMENT\""), "{page}");
    let drift = project.run(&["man", "drift"]).stdout;
    assert!(drift.contains(".TP\n\\fB2\\fR\ndrift found"), "{drift}");
    let state_rm = project.run(&["man", "state", "rm"]);
    assert_eq!(state_rm.code, 0, "{state_rm:?}");
    assert!(
        state_rm.stdout.contains(".TH skyplan-state-rm 1")
            && state_rm.stdout.contains(".SH \"EXIT STATUS\""),
        "{}",
        state_rm.stdout
    );
    let unknown = project.run(&["man", "state", "rn"]);
    assert!(
        unknown
            .stderr
            .contains("`rn` is not a skyplan state command: one of"),
        "{unknown:?}"
    );
}

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
    assert!(out.stdout.contains("1 resource."), "{out:?}");
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

/// Every resource is drawn, the ones without cloud objects of their own too (a cluster skyplan
/// connects to, a node policy), linked to what depends on them.
#[test]
fn the_graph_shows_every_resource_and_their_dependencies() {
    let (project, example) = crate::support::quickstart();
    let out = crate::support::run(&mut project.command_with_config(&example, &["graph"]));
    assert_eq!(out.code, 0, "{out:?}");
    let node = |label: &str| {
        let line = out
            .stdout
            .lines()
            .find(|l| l.contains(&format!("[label=\"{label}\"]")));
        let line = line.unwrap_or_else(|| panic!("no node {label}: {}", out.stdout));
        line.trim().split(' ').next().unwrap().to_string()
    };
    let (cluster, nodes) = (
        node("cluster.prod cluster prod"),
        node("nodes.web nodes web"),
    );
    let store = node("load-balancer.store load-balancer store");
    for (from, to) in [(&cluster, &nodes), (&cluster, &store), (&nodes, &store)] {
        assert!(
            out.stdout.contains(&format!("  {from} -> {to};")),
            "{}",
            out.stdout
        );
    }
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
    let (project, example) = crate::support::quickstart();
    let out = crate::support::run(&mut project.command_with_config(&example, &["plan", "--json"]));
    assert_eq!(out.code, 0, "{out:?}");
    let plan = out.json();
    for class in ["none", "minimal", "pool-recreate", "forbidden"] {
        assert!(
            plan["summary"]["by_impact"][class].as_u64().unwrap() >= 1,
            "no {class} change: {plan:#}"
        );
    }
    let change = |address: &str| {
        let changes = plan["changes"].as_array().unwrap();
        changes
            .iter()
            .find(|c| c["address"] == address)
            .unwrap()
            .clone()
    };
    // The node policy and the controller-mode Service are part of the plan.
    assert_eq!(change("nodes.web")["impact"], "minimal", "{plan:#}");
    assert_eq!(change("load-balancer.store")["impact"], "pool-recreate");
    quickstart_store_pool_is_recreated_by_the_controller(&project, &example);
    for change in plan["changes"].as_array().unwrap() {
        for attribute in change["attributes"].as_array().unwrap() {
            assert!(!attribute["reason"].as_str().unwrap().is_empty());
            if attribute["impact"] == "none" {
                continue;
            }
            let max = attribute["estimated_downtime_s"]["max"].as_u64().unwrap();
            // A NoSchedule taint stops scheduling, not traffic: its estimate is 0 s. Every
            // load-balancer change above none costs some seconds.
            let is_node = change["address"].as_str().unwrap().starts_with("nodes.");
            assert!(is_node || max > 0, "{attribute:#}");
        }
    }
}

/// Applying the quickstart's controller-mode port rename (inside its Saturday window): the
/// simulated cloudscale CCM, not skyplan, deletes pool tcp/http and creates tcp/web.
fn quickstart_store_pool_is_recreated_by_the_controller(project: &Project, example: &Path) {
    let world = project.path().join("state/embedded/cloudscale.json");
    let pools = |name: &str| -> Vec<String> {
        let world: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&world).unwrap()).unwrap();
        let lbs = world["load_balancers"].as_array().unwrap();
        let store = lbs.iter().find(|lb| lb["name"] == "store").unwrap();
        let pools = world["pools"].as_array().unwrap();
        pools
            .iter()
            .filter(|p| p["load_balancer"] == store["uuid"] && p["name"] == name)
            .map(|p| p["uuid"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(pools("tcp/http").len(), 1, "the seeded Service's pool");
    let args = [
        "apply",
        "--auto-approve",
        "--target",
        "load-balancer.store",
        "--now",
        "2026-11-28T02:30:00+01:00",
    ];
    let out = crate::support::run(&mut project.command_with_config(example, &args));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        pools("tcp/http").is_empty(),
        "the controller deleted pool tcp/http"
    );
    assert_eq!(
        pools("tcp/web").len(),
        1,
        "the controller created pool tcp/web"
    );
    let replan = [
        "plan",
        "--detailed-exitcode",
        "--target",
        "load-balancer.store",
    ];
    let out = crate::support::run(&mut project.command_with_config(example, &replan));
    assert_eq!(out.code, 0, "converged: {out:?}");
}

/// Controller mode on a real cluster with the embedded cloud can never converge: no
/// controller in that cluster can reach a cloud that lives inside skyplan.
#[test]
fn validate_refuses_controller_mode_that_cannot_reach_the_embedded_cloud() {
    let project = Project::new();
    project.config(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"kubeconfig.yaml\"\n\n\
         [load-balancer.shop]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
         service = \"default/shop\"\nmode = \"ccm\"\n\n\
         [[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n",
    );
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("skyplan.toml:13:1"), "{out:?}");
    assert!(
        out.stderr.contains("[provider.cloudscale]") && out.stderr.contains("[cluster.prod]"),
        "names both tables: {out:?}"
    );
    // miette wraps the help to the terminal's width.
    let words = out.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("use mode = \"direct\"") && words.contains("endpoint"),
        "the ways out: {out:?}"
    );
}

/// `show` before anything was applied says there is no state, rather than printing nothing.
#[test]
fn show_with_no_state_says_so() {
    let project = Project::new();
    project.config("[provider.cloudscale]\nendpoint = \"embedded\"\n");
    let out = project.run(&["show"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .starts_with("No state: nothing has been applied or imported yet"),
        "{out:?}"
    );
}

/// A mistyped key gets the key it meant, not serde's list of every key the table takes.
#[test]
fn a_mistyped_key_gets_a_did_you_mean() {
    let project = Project::new();
    project.config(&VALID.replace("members =", "membrs ="));
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("unknown key `membrs`"), "{out:?}");
    assert!(out.stderr.contains("did you mean `members`?"), "{out:?}");
    assert!(
        !out.stderr.contains("expected one of"),
        "no list of names: {out:?}"
    );
}
