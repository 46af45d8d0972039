//! `skyplan drift` after someone changes the cloud behind skyplan's back with plain HTTP, through
//! `skyplan sim serve`: exit 2, and every report format says what drifted.

use crate::support::served::ServedCloud;
use crate::support::Output;

/// `skyplan drift --format FORMAT`.
fn drift(cloud: &ServedCloud, format: &str) -> Output {
    cloud.skyplan(&["drift", "--format", format])
}

#[test]
fn drift_made_through_the_api_is_reported_in_every_format() {
    let watched = ServedCloud::two_applied();
    let clean = drift(&watched, "text");
    assert_eq!(clean.code, 0, "no drift right after apply: {clean:?}");

    // Behind skyplan's back: web's listener opened to the world, api's load balancer deleted.
    let listener = watched.uuid_of("/load-balancers/listeners", "tcp/80");
    watched.call(
        "PATCH",
        &format!("/load-balancers/listeners/{listener}"),
        Some(r#"{"allowed_cidrs": ["0.0.0.0/0"]}"#),
    );
    let api = watched.uuid_of("/load-balancers", "api");
    watched.call("DELETE", &format!("/load-balancers/{api}"), None);

    let text = drift(&watched, "text");
    assert_eq!(text.code, 2, "{text:?}");
    assert!(
        text.stdout.contains("allowed-cidrs") && text.stdout.contains("0.0.0.0/0"),
        "{text:?}"
    );

    let json = drift(&watched, "json");
    assert_eq!(json.code, 2);
    let report = json.json();
    assert_eq!(report["drift"], true);
    let by_address = |address: &str| {
        report["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["address"] == address)
            .unwrap()
            .clone()
    };
    assert_eq!(by_address("load-balancer.api")["status"], "missing");
    let web = by_address("load-balancer.web");
    assert_eq!(web["status"], "drifted");
    assert_eq!(web["items"][0]["path"], "allowed-cidrs");
    assert_eq!(web["items"][0]["expected"], serde_json::json!([]));
    assert_eq!(web["items"][0]["actual"], serde_json::json!(["0.0.0.0/0"]));
    assert_eq!(web["items"][0]["impact"], "minimal");

    let markdown = drift(&watched, "markdown");
    assert_eq!(markdown.code, 2);
    assert!(markdown.stdout.contains("allowed-cidrs"), "{markdown:?}");
    assert!(
        markdown.stdout.contains("load-balancer.api"),
        "{markdown:?}"
    );

    let junit = drift(&watched, "junit");
    assert_eq!(junit.code, 2);
    assert!(junit.stdout.starts_with("<?xml"), "{junit:?}");
    assert!(
        junit.stdout.contains(r#"tests="2""#) && junit.stdout.contains(r#"failures="2""#),
        "{junit:?}"
    );
    assert!(
        junit.stdout.contains(r#"name="load-balancer.web""#) && junit.stdout.contains("<failure"),
        "{junit:?}"
    );

    let github = drift(&watched, "github");
    assert_eq!(github.code, 2);
    let web_line = github
        .stdout
        .lines()
        .find(|l| l.contains("load-balancer.web"))
        .unwrap_or_else(|| panic!("{github:?}"));
    assert!(
        web_line.starts_with("::warning file=") || web_line.starts_with("::error file="),
        "{web_line}"
    );
    assert!(
        web_line.contains("skyplan.toml,line=4,col=1"),
        "allowed-cidrs is not written (a default): at [load-balancer.web]: {web_line}"
    );
    assert!(
        github
            .stdout
            .lines()
            .any(|l| l.contains("load-balancer.api") && l.contains("line=14")),
        "{github:?}"
    );

    // Restoring the drift is a plan like any other.
    let plan = watched.skyplan(&["plan", "--json"]);
    let changes = plan.json()["changes"].clone();
    assert!(changes
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["address"] == "load-balancer.api" && c["action"] == "create"));
}

/// A resource in the config that was never applied is not "in sync": it is reported as
/// `not applied`, counted on its own, and makes drift exit 2 in every format.
#[test]
fn a_configured_resource_never_applied_is_reported_as_not_applied() {
    let project = crate::support::Project::new();
    let lb = |name: &str, port: u16| {
        format!(
            "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
             [[load-balancer.{name}.ports]]\nname = \"http\"\nport = {port}\nnode-port = 30080\n\n"
        )
    };
    let provider = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n";
    project.config(&format!("{provider}{}", lb("web", 80)));
    project.apply_ok();
    project.config(&format!("{provider}{}{}", lb("web", 80), lb("api", 81)));

    let text = project.run(&["drift"]);
    assert_eq!(text.code, 2, "{text:?}");
    assert!(!text.stdout.contains("No drift"), "{text:?}");
    assert!(
        text.stdout.contains("load-balancer.api") && text.stdout.contains("not applied"),
        "{text:?}"
    );
    assert!(
        text.stdout.contains("1 not applied") && text.stdout.contains("1 in sync"),
        "{text:?}"
    );

    let json = project.run(&["drift", "--format", "json"]);
    assert_eq!(json.code, 2, "{json:?}");
    let report = json.json();
    assert_eq!(report["drift"], true);
    assert_eq!(report["summary"]["not_applied"], 1);
    assert_eq!(report["summary"]["in_sync"], 1);
    assert_eq!(report["summary"]["resources"], 2);
    let api = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == "load-balancer.api")
        .unwrap_or_else(|| panic!("{report:#}"))
        .clone();
    assert_eq!(api["status"], "not-applied");
    assert_eq!(api["line"], 14, "{api:#}");

    let markdown = project.run(&["drift", "--format", "markdown"]);
    assert_eq!(markdown.code, 2);
    assert!(
        !markdown.stdout.contains("no drift") && markdown.stdout.contains("not applied"),
        "{markdown:?}"
    );
    let junit = project.run(&["drift", "--format", "junit"]);
    assert_eq!(junit.code, 2);
    assert!(
        junit.stdout.contains(r#"tests="2""#) && junit.stdout.contains(r#"failures="1""#),
        "{junit:?}"
    );
    let github = project.run(&["drift", "--format", "github"]);
    assert_eq!(github.code, 2);
    assert!(
        github
            .stdout
            .lines()
            .any(|l| l.contains("load-balancer.api")
                && l.contains("line=14")
                && l.contains("not applied")),
        "{github:?}"
    );
}

/// A resource never applied whose object the cloud already holds: drift says what applying it
/// does with the class `plan` gives — here a forbidden flavor change, never "none".
#[test]
fn a_never_applied_resource_drifts_with_the_class_plan_gives_it() {
    let project = crate::support::Project::new();
    let web = |flavor: &str| {
        format!(
            "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
             [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nflavor = \"{flavor}\"\n\
             members = [\"10.0.0.11\"]\n\n\
             [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n"
        )
    };
    project.config(&web("lb-standard"));
    project.apply_ok();
    let forgot = project.run(&["state", "rm", "load-balancer.web"]);
    assert_eq!(forgot.code, 0, "{forgot:?}");
    project.config(&web("lb-large"));

    let plan = project.plan(&[]);
    let planned = &plan["changes"][0];
    assert_eq!(planned["impact"], "forbidden", "{plan:#}");
    let json = project.run(&["drift", "--format", "json"]);
    assert_eq!(json.code, 2, "{json:?}");
    let report = json.json();
    let resource = &report["resources"][0];
    assert_eq!(resource["status"], "not-applied", "{report:#}");
    assert_eq!(resource["impact"], planned["impact"], "{report:#}");
    let text = project.run(&["drift"]);
    assert!(
        text.stdout
            .contains("not applied: in the config but never applied; restoring it is forbidden")
            && text
                .stdout
                .contains("changing it as configured is forbidden"),
        "{text:?}"
    );
}
