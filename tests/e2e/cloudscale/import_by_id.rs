//! `skyplan import ADDR ID` of a load balancer made by hand, against a served cloud: the state
//! records what the cloud holds (so drift is quiet and the plan shows the config's differences
//! as changes), and the import is followed by the `skyplan.address` tag, an impact-`none` write
//! the plan shows and apply performs, so that a lost state adopts the load balancer again
//! instead of creating a second one.

use serde_json::{json, Value};

use crate::support::served::ServedCloud;

/// A load balancer with one port (80 → pool `tcp/http` with `algorithm`, members named as
/// skyplan and the CCM name them, a TCP monitor, listener `tcp/80`), made call by call
/// through the API as an operator makes one; untagged. Its UUID.
pub fn made_by_hand(cloud: &ServedCloud, name: &str, algorithm: &str, members: &[&str]) -> String {
    made_by_hand_naming(cloud, name, algorithm, members, |address| {
        format!("{address}:30080")
    })
}

/// [`made_by_hand`] with each member named by `member_name` from its address.
pub fn made_by_hand_naming(
    cloud: &ServedCloud,
    name: &str,
    algorithm: &str,
    members: &[&str],
    member_name: impl Fn(&str) -> String,
) -> String {
    let post = |path: &str, body: Value| -> Value {
        let answer = cloud.call("POST", path, Some(&body.to_string()));
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("POST {path}: {e}: {answer}"))
    };
    let lb = post(
        "/load-balancers",
        json!({"name": name, "flavor": "lb-standard", "zone": "lpg1"}),
    );
    let uuid = lb["uuid"].as_str().expect("a load balancer").to_string();
    let pool = post(
        "/load-balancers/pools",
        json!({"name": "tcp/http", "load_balancer": uuid, "algorithm": algorithm, "protocol": "tcp"}),
    );
    let pool = pool["uuid"].as_str().expect("a pool").to_string();
    let subnets: Vec<Value> = serde_json::from_str(&cloud.call("GET", "/subnets", None)).unwrap();
    let subnet = subnets[0]["uuid"].as_str().expect("the private subnet");
    for address in members {
        post(
            &format!("/load-balancers/pools/{pool}/members"),
            json!({"name": member_name(address), "protocol_port": 30080,
                   "monitor_port": 30080, "address": address, "subnet": subnet}),
        );
    }
    post(
        "/load-balancers/health-monitors",
        json!({"pool": pool, "type": "tcp"}),
    );
    post(
        "/load-balancers/listeners",
        json!({"name": "tcp/80", "pool": pool, "protocol": "tcp", "protocol_port": 80}),
    );
    uuid
}

/// `[load-balancer.web]` on port 80 → node port 30080 of 10.0.0.11, with `extra` keys.
fn web_config(extra: &str) -> String {
    format!(
        "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n{extra}\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n"
    )
}

fn change_of<'a>(plan: &'a Value, address: &str) -> &'a Value {
    plan["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("no {address} in {plan:#}"))
}

fn paths(change: &Value) -> Vec<&str> {
    change["attributes"]
        .as_array()
        .expect("attributes")
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect()
}

#[test]
fn import_records_what_the_cloud_holds_so_drift_is_quiet_and_the_plan_shows_the_config() {
    let cloud = ServedCloud::start();
    let uuid = made_by_hand(&cloud, "web", "source_ip", &["10.0.0.11"]);
    // The config asks for the default algorithm, round_robin: a change the import is not.
    cloud.configure(&web_config(""));

    let out = cloud.skyplan(&["import", "load-balancer.web", &uuid]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = cloud.skyplan(&["drift"]);
    assert_eq!(
        out.code, 0,
        "nothing changed behind skyplan's back since the import: {out:?}"
    );

    let plan = cloud.skyplan(&["plan", "--json"]).json();
    let web = change_of(&plan, "load-balancer.web");
    assert_eq!(web["action"], "update", "{plan:#}");
    let algorithm = (web["attributes"].as_array().unwrap().iter())
        .find(|a| a["path"] == "ports.http.algorithm")
        .unwrap_or_else(|| panic!("the config's algorithm is a change: {web:#}"));
    assert_eq!(algorithm["before"], "source_ip");
    assert_eq!(algorithm["after"], "round_robin");

    cloud.apply_ok();
    let out = cloud.skyplan(&["drift"]);
    assert_eq!(out.code, 0, "drift is quiet once applied: {out:?}");
    let out = cloud.skyplan(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "nothing left to plan: {out:?}");
}

#[test]
fn an_import_whose_config_matches_the_cloud_drifts_nothing_after_a_no_op_apply() {
    let cloud = ServedCloud::start();
    let uuid = made_by_hand(&cloud, "web", "source_ip", &["10.0.0.11"]);
    cloud.configure(&web_config(""));
    let out = cloud.skyplan(&["import", "load-balancer.web", &uuid]);
    assert_eq!(out.code, 0, "{out:?}");
    // The operator then writes what the cloud has: the plan has nothing of the pool to do.
    cloud.configure(&web_config("algorithm = \"source_ip\"\n"));
    cloud.apply_ok();
    let out = cloud.skyplan(&["drift"]);
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn an_imported_load_balancer_is_tagged_by_the_next_apply_so_a_lost_state_adopts_it() {
    let cloud = ServedCloud::start();
    let uuid = made_by_hand(&cloud, "web", "source_ip", &["10.0.0.11"]);
    cloud.configure(&web_config("algorithm = \"source_ip\"\n"));
    let out = cloud.skyplan(&["import", "load-balancer.web", &uuid]);
    assert_eq!(out.code, 0, "{out:?}");

    let plan = cloud.skyplan(&["plan", "--json"]).json();
    let web = change_of(&plan, "load-balancer.web");
    assert_eq!(
        (&web["action"], &web["impact"]),
        (&json!("update"), &json!("none")),
        "the tag is an in-place write without impact: {plan:#}"
    );
    assert_eq!(paths(web), ["tags.skyplan.address"], "{web:#}");
    let tag = &web["attributes"][0];
    assert_eq!(
        (&tag["before"], &tag["after"]),
        (&Value::Null, &json!("load-balancer.web"))
    );

    cloud.sim.reset_requests();
    cloud.apply_ok();
    let requests = cloud.sim.requests();
    let writes: Vec<&String> = (requests["by_route"].as_object().unwrap().keys())
        .filter(|route| !route.starts_with("GET"))
        .collect();
    assert!(
        matches!(writes.as_slice(), [one] if one.starts_with("PATCH /v1/load-balancers/{")),
        "only the load balancer's tags are written: {requests:#}"
    );
    let lb: Value =
        serde_json::from_str(&cloud.call("GET", &format!("/load-balancers/{uuid}"), None)).unwrap();
    assert_eq!(lb["tags"], json!({"skyplan.address": "load-balancer.web"}));
    let out = cloud.skyplan(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "tagged once: {out:?}");

    // The state is lost: the next plan finds the load balancer by its tag.
    let out = cloud.skyplan(&["state", "rm", "load-balancer.web"]);
    assert_eq!(out.code, 0, "{out:?}");
    let plan = cloud.skyplan(&["plan", "--json"]).json();
    assert_eq!(
        change_of(&plan, "load-balancer.web")["action"],
        "no-op",
        "adopted by its tag, not created again: {plan:#}"
    );
    cloud.apply_ok();
    let all: Vec<Value> =
        serde_json::from_str(&cloud.call("GET", "/load-balancers", None)).unwrap();
    assert_eq!(all.len(), 1, "no duplicate: {all:#?}");
}
