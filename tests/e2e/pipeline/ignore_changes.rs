//! `ignore-changes`: an attribute managed by hand in the cloud is neither planned nor written
//! by apply — even when the object that carries it is recreated — nor reported as drift; a path
//! a resource does not have is a config error at its place.

use serde_json::Value;

use crate::support::http;
use crate::support::{run, Output, Project, SimServer, SIM_TOKEN};

struct Cloud {
    project: Project,
    sim: SimServer,
}

const WEB: &str = "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                   members = [\"10.0.0.11\"]\nallowed-cidrs = [\"10.0.0.0/8\"]\n";
const PORT: &str = "\n[[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

impl Cloud {
    fn applied() -> Cloud {
        let project = Project::new();
        let sim = SimServer::start_settling(&project.path().join("world.json"), 0);
        let cloud = Cloud { project, sim };
        cloud.configure("");
        let out = cloud.skyplan(&["apply", "--auto-approve"]);
        assert_eq!(out.code, 0, "{out:?}");
        cloud
    }

    /// The load balancer with `extra` keys.
    fn configure(&self, extra: &str) {
        self.project.config(&format!(
            "[provider.cloudscale]\nendpoint = \"{}\"\n\n{WEB}{extra}{PORT}",
            self.sim.base_url
        ));
    }

    fn skyplan(&self, args: &[&str]) -> Output {
        run(self
            .project
            .command(args)
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }

    fn listener(&self) -> Value {
        self.sim.list("/load-balancers/listeners").remove(0)
    }

    /// The listener's CIDRs set by hand, as an operator would through the API.
    fn set_cidrs_by_hand(&self, cidrs: &str) {
        let uuid = self.listener()["uuid"].as_str().unwrap().to_string();
        let url = format!("{}/load-balancers/listeners/{uuid}", self.sim.base_url);
        let body = format!(r#"{{"allowed_cidrs": {cidrs}}}"#);
        http::request("PATCH", &url)
            .bearer(SIM_TOKEN)
            .body("application/json", &body)
            .ok()
            .expect("PATCH listener");
    }
}

#[test]
fn apply_changes_the_algorithm_and_leaves_the_cidrs_set_by_hand() {
    let cloud = Cloud::applied();
    cloud.set_cidrs_by_hand(r#"["192.0.2.0/24"]"#);
    cloud.configure("ignore-changes = [\"allowed-cidrs\"]\nalgorithm = \"source_ip\"\n");

    let plan = cloud.skyplan(&["plan", "--json"]).json();
    let web = &plan["changes"][0];
    assert_eq!(web["action"], "update", "{plan}");
    let paths: Vec<&str> = (web["attributes"].as_array().unwrap().iter())
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"ports.http.algorithm"), "{paths:?}");
    assert!(!paths.contains(&"allowed-cidrs"), "{paths:?}");
    assert_eq!(
        web["ignored"],
        serde_json::json!([{ "path": "allowed-cidrs", "before": ["192.0.2.0/24"], "after": ["10.0.0.0/8"] }])
    );
    let text = cloud.skyplan(&["plan"]);
    assert!(
        text.stdout.contains("ignored: load-balancer.web allowed-cidrs: cloud [\"192.0.2.0/24\"], config [\"10.0.0.0/8\"]"),
        "{}",
        text.stdout
    );

    // The pool is recreated with its listener: the listener comes back with the cloud's CIDRs.
    let out = cloud.skyplan(&[
        "apply",
        "--auto-approve",
        "--now",
        "2026-11-28T02:30:00+01:00",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let pool = cloud.sim.list("/load-balancers/pools").remove(0);
    assert_eq!(pool["algorithm"], "source_ip");
    assert_eq!(
        cloud.listener()["allowed_cidrs"],
        serde_json::json!(["192.0.2.0/24"])
    );

    let again = cloud.skyplan(&["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "nothing left to plan: {again:?}");
    let drift = cloud.skyplan(&["drift"]);
    assert_eq!(drift.code, 0, "{drift:?}");
}

#[test]
fn an_ignored_attribute_changed_in_the_cloud_is_no_drift_and_no_change() {
    let cloud = Cloud::applied();
    cloud.configure("ignore-changes = [\"allowed-cidrs\", \"timeouts\"]\n");
    cloud.set_cidrs_by_hand(r#"["198.51.100.0/24"]"#);

    let drift = cloud.skyplan(&["drift"]);
    assert_eq!(drift.code, 0, "accepted by ignore-changes: {drift:?}");
    let plan = cloud.skyplan(&["plan", "--json", "--detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    let web = &plan.json()["changes"][0];
    assert_eq!(web["action"], "no-op");
    assert_eq!(web["ignored"][0]["path"], "allowed-cidrs");

    // Without it, the same difference is drift again.
    cloud.configure("");
    assert_eq!(cloud.skyplan(&["drift"]).code, 2);
}

#[test]
fn a_path_the_resource_does_not_have_is_an_error_at_its_place() {
    let project = Project::new();
    project.config(&format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n{WEB}\
         ignore-changes = [\"timeouts.client-data-ms\", \"allowed-cidr\", \"ports.http.algorithm\"]\n{PORT}"
    ));
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("`allowed-cidr` is not an attribute of load-balancer.web"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("skyplan.toml:9:46"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("client-data-ms` is not"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("algorithm` is not"), "{}", out.stderr);
}
