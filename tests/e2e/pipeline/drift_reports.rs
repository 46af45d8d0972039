//! `skyplan drift` after someone changes the cloud behind skyplan's back with plain HTTP, through
//! `skyplan sim serve`: exit 2, and every report format says what drifted.

use serde_json::Value;

use crate::support::http;
use crate::support::{run, Output, Project, SimServer, SIM_TOKEN};

struct Watched {
    project: Project,
    sim: SimServer,
}

impl Watched {
    fn new() -> Watched {
        let project = Project::new();
        let sim = SimServer::start_settling(&project.path().join("world.json"), 0);
        project.config(&format!(
            "[provider.cloudscale]\nendpoint = \"{}\"\n\n\
             [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
             [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
             [load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.12\"]\n\n\
             [[load-balancer.api.ports]]\nname = \"grpc\"\nport = 443\nnode-port = 30443\n",
            sim.base_url
        ));
        let watched = Watched { project, sim };
        let out = watched.skyplan(&["apply", "--auto-approve"]);
        assert_eq!(out.code, 0, "{out:?}");
        watched
    }

    fn skyplan(&self, args: &[&str]) -> Output {
        run(self
            .project
            .command(args)
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }

    fn drift(&self, format: &str) -> Output {
        self.skyplan(&["drift", "--format", format])
    }

    /// A request to the simulated API, as an operator would send one to the real one.
    fn call(&self, method: &str, path: &str, body: Option<&str>) -> String {
        let url = format!("{}{path}", self.sim.base_url);
        let request = http::request(method, &url).bearer(SIM_TOKEN);
        let request = match body {
            Some(body) => request.body("application/json", body),
            None => request.header("Content-Type", "application/json"),
        };
        request
            .ok()
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn uuid_of(&self, path: &str, name: &str) -> String {
        let list: Vec<Value> = serde_json::from_str(&self.call("GET", path, None)).unwrap();
        list.iter().find(|o| o["name"] == name).unwrap()["uuid"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

#[test]
fn drift_made_through_the_api_is_reported_in_every_format() {
    let watched = Watched::new();
    let clean = watched.drift("text");
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

    let text = watched.drift("text");
    assert_eq!(text.code, 2, "{text:?}");
    assert!(
        text.stdout.contains("allowed-cidrs") && text.stdout.contains("0.0.0.0/0"),
        "{text:?}"
    );

    let json = watched.drift("json");
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

    let markdown = watched.drift("markdown");
    assert_eq!(markdown.code, 2);
    assert!(markdown.stdout.contains("allowed-cidrs"), "{markdown:?}");
    assert!(
        markdown.stdout.contains("load-balancer.api"),
        "{markdown:?}"
    );

    let junit = watched.drift("junit");
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

    let github = watched.drift("github");
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
        "points at [load-balancer.web]: {web_line}"
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
