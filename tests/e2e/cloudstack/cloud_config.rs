//! skyplan against `skyplan sim serve --provider cloudstack` through the INI `cloud-config`
//! the CloudStack CCM and `cs` read: its keys are used, never shown, and the server version
//! the simulator reports decides the version-dependent rows.

use crate::cloudstack::support::CsSimServer;
use crate::support::{run, Output, Project};

const API_KEY: &str = "ops-api-key-4711";
const SECRET_KEY: &str = "ops-SECRET-0815~key";

fn lb(allowed: &str) -> String {
    format!(
        "[provider.cloudstack]\ncloud-config = \"cloud-config.ini\"\n\n\
         [load-balancer.web]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n\
         members = [\"web-1\", \"web-2\"]\nallowed-cidrs = {allowed}\n\n\
         [[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n"
    )
}

fn write_cloud_config(project: &Project, url: &str, secret: &str) {
    project.write(
        "cloud-config.ini",
        &format!("[Global]\napi-url = {url}\napi-key = {API_KEY}\nsecret-key = {secret}\n"),
    );
}

fn skyplan(project: &Project, args: &[&str]) -> Output {
    let out = run(&mut project.command(args));
    for secret in [SECRET_KEY, "SECRET-0815"] {
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "the secret key is never printed: {out:?}"
        );
    }
    out
}

#[test]
fn cs_cloud_config_keys_work_are_never_printed_and_the_server_version_counts() {
    let project = Project::new();
    let sim = CsSimServer::start_with(
        &project.path().join("world.json"),
        &[
            "--api-key",
            API_KEY,
            "--secret-key",
            SECRET_KEY,
            "--server-version",
            "4.20.1.0",
        ],
    );
    write_cloud_config(&project, &sim.base_url, SECRET_KEY);
    project.config(&lb("[]"));
    let out = skyplan(&project, &["-vv", "apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");

    project.config(&lb("[\"10.0.0.0/8\"]"));
    let out = skyplan(&project, &["-vv", "plan", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let plan = out.json();
    let web = &plan["changes"][0];
    assert_eq!(
        web["impact"], "pool-recreate",
        "below 4.22 a rule's CIDRs change only by delete and create: {plan:#}"
    );
    let out = skyplan(&project, &["-vv", "apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(skyplan(&project, &["plan", "--detailed-exitcode"]).code, 0);
}

#[test]
fn cs_a_wrong_secret_is_a_clear_error_that_does_not_show_it() {
    let project = Project::new();
    let sim = CsSimServer::start_with(
        &project.path().join("world.json"),
        &["--api-key", API_KEY, "--secret-key", SECRET_KEY],
    );
    write_cloud_config(&project, &sim.base_url, "ops-SECRET-0815-wrong");
    project.config(&lb("[]"));
    let out = skyplan(&project, &["-vv", "plan"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("401"), "{out:?}");
    assert!(!out.stderr.contains("ops-SECRET-0815-wrong"), "{out:?}");
}

#[test]
fn cs_a_missing_cloud_config_names_the_file() {
    let project = Project::new();
    project.config(&lb("[]"));
    let out = run(&mut project.command(&["plan"]));
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("cloud-config.ini"), "{out:?}");
}
