//! `ignore-changes`: an attribute managed by hand in the cloud is neither planned nor written
//! by apply — even when the object that carries it is recreated — nor reported as drift; a path
//! a resource does not have is a config error at its place.

use serde_json::Value;

use crate::support::served::ServedCloud;
use crate::support::Project;

const WEB: &str = "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                   members = [\"10.0.0.11\"]\nallowed-cidrs = [\"10.0.0.0/8\"]\n";
const PORT: &str = "\n[[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

/// The served cloud with web applied, as `configure` writes it.
fn applied() -> ServedCloud {
    let cloud = ServedCloud::start();
    configure(&cloud, "");
    cloud.apply_ok();
    cloud
}

/// The load balancer with `extra` keys.
fn configure(cloud: &ServedCloud, extra: &str) {
    cloud.configure(&format!("{WEB}{extra}{PORT}"));
}

fn listener(cloud: &ServedCloud) -> Value {
    cloud.sim.list("/load-balancers/listeners").remove(0)
}

/// The listener's CIDRs set by hand, as an operator would through the API.
fn set_cidrs_by_hand(cloud: &ServedCloud, cidrs: &str) {
    let uuid = listener(cloud)["uuid"].as_str().unwrap().to_string();
    let path = format!("/load-balancers/listeners/{uuid}");
    cloud.call(
        "PATCH",
        &path,
        Some(&format!(r#"{{"allowed_cidrs": {cidrs}}}"#)),
    );
}

#[test]
fn apply_changes_the_algorithm_and_leaves_the_cidrs_set_by_hand() {
    let cloud = applied();
    set_cidrs_by_hand(&cloud, r#"["192.0.2.0/24"]"#);
    configure(
        &cloud,
        "ignore-changes = [\"allowed-cidrs\"]\nalgorithm = \"source_ip\"\n",
    );

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
    let out = cloud.skyplan(&["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let pool = cloud.sim.list("/load-balancers/pools").remove(0);
    assert_eq!(pool["algorithm"], "source_ip");
    assert_eq!(
        listener(&cloud)["allowed_cidrs"],
        serde_json::json!(["192.0.2.0/24"])
    );

    let again = cloud.skyplan(&["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "nothing left to plan: {again:?}");
    let drift = cloud.skyplan(&["drift"]);
    assert_eq!(drift.code, 0, "{drift:?}");
}

#[test]
fn an_ignored_attribute_changed_in_the_cloud_is_no_drift_and_no_change() {
    let cloud = applied();
    configure(
        &cloud,
        "ignore-changes = [\"allowed-cidrs\", \"timeouts\"]\n",
    );
    set_cidrs_by_hand(&cloud, r#"["198.51.100.0/24"]"#);

    let drift = cloud.skyplan(&["drift"]);
    assert_eq!(drift.code, 0, "accepted by ignore-changes: {drift:?}");
    let plan = cloud.skyplan(&["plan", "--json", "--detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    let web = &plan.json()["changes"][0];
    assert_eq!(web["action"], "no-op");
    assert_eq!(web["ignored"][0]["path"], "allowed-cidrs");

    // Without it, the same difference is drift again.
    configure(&cloud, "");
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
