//! What a config directory means: its skyplan `*.toml` files. Another tool's file beside
//! them (`Cargo.toml`, `pyproject.toml`) is skipped, and `-v` says so; a file mixing
//! skyplan's tables with others is an error at its place; a file named with `-c` is always
//! read. And the hint of a saved plan prints a command that works, `-c` included.

use std::process::Command;

use crate::support::{self, binary, Project};

const VALID: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
    [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

const CARGO: &str =
    "[package]\nname = \"infra\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n";
const PYPROJECT: &str = "[project]\nname = \"infra\"\n\n[tool.black]\nline-length = 99\n";

fn beside_other_tools() -> Project {
    let project = Project::new();
    project.config(VALID);
    project.write("Cargo.toml", CARGO);
    project.write("pyproject.toml", PYPROJECT);
    project
}

#[test]
fn other_tools_files_beside_skyplan_toml_are_skipped_and_v_says_so() {
    let project = beside_other_tools();
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("valid: 1 resource"), "{out:?}");
    let plan = project.plan(&[]);
    assert_eq!(plan["changes"].as_array().unwrap().len(), 1, "{plan}");
    let verbose = project.run(&["-v", "validate"]);
    for file in ["Cargo.toml", "pyproject.toml"] {
        let said = verbose
            .stderr
            .lines()
            .any(|l| l.contains("skipped a file that is not skyplan's") && l.contains(file));
        assert!(said, "{file}: {verbose:?}");
    }
    assert!(
        verbose.stderr.contains("tables=\"project, tool\""),
        "{verbose:?}"
    );
}

#[test]
fn a_file_mixing_other_tables_with_skyplan_s_is_an_error_at_the_table() {
    let project = Project::new();
    project.config(VALID);
    project.write(
        "typo.toml",
        "[package]\nname = \"x\"\n\n[load-balancer.x]\n",
    );
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("unknown key `package`"), "{out:?}");
    assert!(out.stderr.contains("typo.toml:1:2"), "{out:?}");
}

#[test]
fn a_directory_without_a_skyplan_file_is_an_error_naming_what_it_skipped() {
    let project = Project::new();
    project.write("Cargo.toml", CARGO);
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("no skyplan file in this directory: Cargo.toml ([package], [dependencies]) is another tool's"),
        "{out:?}"
    );
}

#[test]
fn a_file_named_with_c_is_always_read() {
    let project = beside_other_tools();
    let cargo = project.path().join("Cargo.toml");
    let out = support::run(&mut project.command_with_config(&cargo, &["validate"]));
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("unknown key `package`"), "{out:?}");
}

/// The command between the backticks of the saved-plan hint, as arguments after `skyplan`.
fn hinted_command(stderr: &str) -> Vec<String> {
    let hint = stderr
        .lines()
        .find(|l| l.contains("applies exactly this plan"))
        .unwrap_or_else(|| panic!("no hint in {stderr}"));
    let command = hint.split('`').nth(1).expect("a command in backticks");
    let words: Vec<String> = command.split(' ').map(str::to_string).collect();
    assert_eq!(words[0], "skyplan", "{hint}");
    words[1..].to_vec()
}

#[test]
fn the_saved_plan_hint_prints_a_command_that_works_from_anywhere() {
    let project = beside_other_tools();
    let plan = project.path().join("plan.json");
    let out = project.run(&["plan", "--out", plan.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    let args = hinted_command(&out.stderr);
    assert_eq!(
        args[..2],
        ["-c".to_string(), project.path().display().to_string()],
        "{args:?}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let mut apply = Command::new(binary());
    apply
        .current_dir(elsewhere.path())
        .env("NO_COLOR", "1")
        .args(&args);
    let out = support::run(&mut apply);
    assert_eq!(out.code, 0, "the hinted command applies the plan: {out:?}");
    assert_eq!(project.world().all("load_balancers").len(), 1);
}

#[test]
fn the_saved_plan_hint_has_no_c_for_the_default_config() {
    let project = beside_other_tools();
    let mut plan = Command::new(binary());
    plan.current_dir(project.path())
        .env("NO_COLOR", "1")
        .env_remove("SKYPLAN_CONFIG")
        .args(["plan", "--out", "plan.json"]);
    let out = support::run(&mut plan);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(hinted_command(&out.stderr), ["apply", "plan.json"]);
}

/// A hint the pipeline prints (not the CLI) carries the `-c` flags too.
#[test]
fn a_hint_from_the_state_names_the_config_it_was_run_with() {
    let project = beside_other_tools();
    project.apply_ok();
    let id = project.world().uuid("load_balancers", "web");
    let out = project.run(&["import", "load-balancer.web", &id]);
    assert_eq!(out.code, 1, "{out:?}");
    let hint = format!(
        "`skyplan -c {} state rm` it first",
        project.path().display()
    );
    assert!(out.stderr.contains(&hint), "{hint}: {out:?}");
}
