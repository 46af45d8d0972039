//! `[variables]` against the embedded cloudscale: a value from the config, overridden by
//! `SKYPLAN_VAR_NAME`, then `--var-file`, then `--var`; and each error at its place.

use crate::support::{Output, Project};

const PROVIDER: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n";

/// `web`, named in the cloud by the variable `name`.
const WEB: &str = "[load-balancer.web]\nprovider = \"cloudscale\"\nname = \"${var.name}\"\n\
                   zone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
                   [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

/// The project with `name = "web"` in `[variables]`, applied.
fn applied() -> Project {
    let project = Project::new();
    project.config(&format!("{PROVIDER}[variables]\nname = \"web\"\n\n{WEB}"));
    project.apply_ok();
    project
}

/// The name the plan would give web (unchanged: "web").
fn planned_name(project: &Project, args: &[&str]) -> String {
    let plan = project.plan(args);
    let attributes = plan["changes"][0]["attributes"].as_array().unwrap();
    (attributes.iter())
        .find(|a| a["path"] == "name")
        .map_or("web".into(), |a| a["after"].as_str().unwrap().to_string())
}

fn invalid(out: &Output, place: &str, message: &str) {
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains(place), "{place} in {out:?}");
    assert!(out.stderr.contains(message), "{message} in {out:?}");
}

#[test]
fn a_variable_takes_the_config_s_value_unless_the_environment_a_var_file_or_var_says() {
    let project = applied();
    assert_eq!(project.world().all("load_balancers")[0]["name"], "web");
    assert_eq!(planned_name(&project, &[]), "web");

    let project = project.with_env("SKYPLAN_VAR_name", "from-env");
    assert_eq!(planned_name(&project, &[]), "from-env");
    project.write("prod.vars", "name = \"from-file\"\n");
    let var_file = project.path().join("prod.vars");
    let var_file = var_file.to_str().unwrap();
    assert_eq!(
        planned_name(&project, &["--var-file", var_file]),
        "from-file"
    );
    assert_eq!(
        planned_name(
            &project,
            &["--var-file", var_file, "--var", "name=from-var"]
        ),
        "from-var"
    );
}

#[test]
fn a_reference_to_no_variable_is_an_error_at_the_reference() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}",
        WEB.replace("var.name", "var.nmae")
    ));
    let out = project.run(&["validate"]);
    invalid(&out, "skyplan.toml:6:9", "the variable `nmae` has no value");
}

#[test]
fn a_variable_never_used_is_an_error_at_its_definition() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}[variables]\nname = \"web\"\nzone = \"lpg1\"\n\n{WEB}"
    ));
    let out = project.run(&["validate"]);
    invalid(
        &out,
        "skyplan.toml:6:1",
        "the variable `zone` is never used",
    );
}

#[test]
fn a_var_naming_no_variable_is_an_error_naming_it() {
    let project = applied();
    let out = project.run(&["plan", "--var", "nmae=x"]);
    invalid(&out, "--var", "`nmae` is not a variable of the config");
    let out = project.run(&["plan", "--var", "no-equals-sign"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("is not NAME=VALUE"), "{out:?}");
}

#[test]
fn a_credential_from_a_variable_is_refused_saying_where_credentials_come_from() {
    let project = Project::new();
    project.config(&format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\ntoken = \"${{var.token}}\"\n\n\
         [variables]\ntoken = \"secret\"\nname = \"web\"\n\n{WEB}"
    ));
    let out = project.run(&["validate"]);
    invalid(
        &out,
        "skyplan.toml:3:9",
        "`token` is a credential: it never comes from a variable",
    );
    assert!(out.stderr.contains("CLOUDSCALE_API_TOKEN"), "{out:?}");
}

#[test]
fn a_doubled_dollar_is_a_literal() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}",
        WEB.replace("${var.name}", "web-$${x}")
    ));
    let plan = project.plan(&[]);
    assert_eq!(
        plan["changes"][0]["attributes"][0]["after"], "web-${x}",
        "{plan}"
    );
}
