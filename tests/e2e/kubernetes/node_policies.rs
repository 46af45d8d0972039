//! Node policies end to end: the real binary against `skyplan sim serve --provider kubernetes`
//! reached through a kubeconfig file, the nodes checked through the simulator's HTTP API (plain
//! requests, not skyplan's Kubernetes client).

use serde_json::Value;

use crate::support::http;
use crate::support::kube_sim::KubeSim;
use crate::support::Project;

pub const CLUSTER: &str = "[cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"kubeconfig.yaml\"\ncontext = \"sim\"\n";

fn policy(taints: &str) -> String {
    format!(
        "{CLUSTER}\n[nodes.web]\ncluster = \"prod\"\nnames = [\"node-1\", \"node-2\"]\n\
         labels = {{ tier = \"web\" }}\ntaints = [{taints}]\n"
    )
}

const DEDICATED: &str = "{ key = \"dedicated\", value = \"web\", effect = \"NoSchedule\" }";

fn web_change(plan: &Value) -> &Value {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "nodes.web")
        .expect("nodes.web in the plan")
}

fn rows(change: &Value) -> Vec<(String, String)> {
    change["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_string(),
                a["impact"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(path: &str, impact: &str) -> (String, String) {
    (path.to_string(), impact.to_string())
}

#[test]
fn a_policy_is_planned_applied_and_then_converged() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    sim.write_kubeconfig(&project);
    project.config(&policy(DEDICATED));

    let plan = project.plan(&[]);
    let change = web_change(&plan);
    assert_eq!(change["action"], "create");
    assert_eq!(change["impact"], "minimal");
    assert_eq!(
        rows(change),
        [
            row("nodes.node-1.labels.tier", "none"),
            row("nodes.node-1.taints.dedicated:NoSchedule", "minimal"),
            row("nodes.node-2.labels.tier", "none"),
            row("nodes.node-2.taints.dedicated:NoSchedule", "minimal"),
        ]
    );
    assert_eq!(
        change["operations"][0],
        "patch node node-1: labels +tier=web, taints +dedicated=web:NoSchedule"
    );
    let cluster = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "cluster.prod")
        .unwrap();
    assert_eq!(cluster["action"], "no-op");

    let apply = project.apply(&[]);
    assert_eq!(apply.code, 0, "{apply:?}");
    assert!(
        apply.stdout.contains("nodes.web: as predicted"),
        "apply checks each patched node: {apply:?}"
    );
    for name in ["node-1", "node-2"] {
        let node = sim.node(name);
        assert_eq!(node["metadata"]["labels"]["tier"], "web", "{node}");
        let taints = node["spec"]["taints"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            taints.iter().any(|t| t["key"] == "dedicated"
                && t["value"] == "web"
                && t["effect"] == "NoSchedule"),
            "{node}"
        );
    }
    let untouched = sim.node("node-3");
    assert!(
        untouched["metadata"]["labels"].get("tier").is_none(),
        "{untouched}"
    );

    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "nothing left to plan: {out:?}");
}

#[test]
fn a_no_execute_taint_is_pool_recreate_and_what_the_policy_dropped_is_removed() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    sim.write_kubeconfig(&project);
    project.config(&policy(DEDICATED));
    project.apply_ok();

    let drain = "{ key = \"drain\", effect = \"NoExecute\" }";
    project.config(&policy(drain).replace("labels = { tier = \"web\" }\n", ""));
    let plan = project.plan(&[]);
    let change = web_change(&plan);
    assert_eq!(change["action"], "update");
    assert_eq!(change["impact"], "pool-recreate");
    assert_eq!(
        rows(change),
        [
            row("nodes.node-1.labels.tier", "none"),
            row("nodes.node-1.taints.drain:NoExecute", "pool-recreate"),
            row("nodes.node-1.taints.dedicated:NoSchedule", "minimal"),
            row("nodes.node-2.labels.tier", "none"),
            row("nodes.node-2.taints.drain:NoExecute", "pool-recreate"),
            row("nodes.node-2.taints.dedicated:NoSchedule", "minimal"),
        ]
    );
    project.apply_ok();
    let node = sim.node("node-1");
    assert!(node["metadata"]["labels"].get("tier").is_none(), "{node}");
    let taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let keys: Vec<&str> = taints.iter().filter_map(|t| t["key"].as_str()).collect();
    assert_eq!(keys, ["drain"], "{node}");
}

#[test]
fn a_node_newly_matching_the_selector_is_a_change_in_the_next_plan() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    sim.write_kubeconfig(&project);
    let config = policy(DEDICATED).replace(
        "names = [\"node-1\", \"node-2\"]",
        "selector = \"pool=web\"",
    );
    project.config(&config);
    let plan = project.plan(&[]);
    assert_eq!(
        web_change(&plan)["action"],
        "no-op",
        "no node carries pool=web yet"
    );
    project.apply_ok();

    let url = format!("{}/api/v1/nodes/node-3", sim.url);
    let patch = r#"{"metadata":{"labels":{"pool":"web"}}}"#;
    let result = http::request("PATCH", &url)
        .body("application/merge-patch+json", patch)
        .ok();
    assert!(result.is_ok(), "{result:?}");
    let plan = project.plan(&[]);
    let change = web_change(&plan);
    assert_eq!(change["action"], "update");
    assert_eq!(
        rows(change),
        [
            row("nodes.node-3.labels.tier", "none"),
            row("nodes.node-3.taints.dedicated:NoSchedule", "minimal"),
        ]
    );
}

const EMBEDDED: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
                        [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

#[test]
fn a_policy_over_the_embedded_cluster_converges_and_its_nodes_match_their_vms() {
    let project = Project::new();
    let config = policy(DEDICATED).replace(CLUSTER, EMBEDDED);
    project.config(&config);
    let plan = project.plan(&[]);
    let change = web_change(&plan);
    assert_eq!(change["impact"], "minimal");
    assert_eq!(
        change["operations"].as_array().map(Vec::len),
        Some(2),
        "{change}"
    );
    project.apply_ok();
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "nothing left to plan: {out:?}");
    let world = std::fs::read_to_string(project.path().join("state/embedded/kubernetes/prod.json"))
        .expect("the embedded cluster's world");
    assert!(
        world.contains("\"tier\""),
        "the label is in the cluster's world"
    );
    // The simulated controller initialised the nodes from their VMs: nothing to report.
    let out = project.run(&["drift"]);
    assert_eq!(out.code, 0, "{out:?}");
}

/// A change the Kubernetes simulator answered is in its world file after a SIGTERM sent right
/// after the answer, inside the writer's pause (as for the cloud simulators).
#[test]
fn sigterm_right_after_an_acknowledged_patch_keeps_it_in_the_world_file() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    // The first patch wakes the world writer, which then pauses; the second lands in the
    // pause, so only the write on SIGTERM can save it.
    for value in ["first", "second"] {
        let body = format!("{{\"metadata\": {{\"labels\": {{\"tier\": \"{value}\"}}}}}}");
        let answer = http::request("PATCH", &format!("{}/api/v1/nodes/node-1", sim.url))
            .body("application/merge-patch+json", body)
            .ok()
            .expect("PATCH answered");
        assert!(answer.contains(value), "{answer}");
    }
    sim.terminate();
    let world = std::fs::read_to_string(project.path().join("kube-world.json")).unwrap();
    let world: Value = serde_json::from_str(&world).unwrap();
    let text = world.to_string();
    assert!(text.contains("\"tier\":\"second\""), "{text}");
}

/// Sets a label on a node as someone else would, through the simulator's HTTP API.
fn label_by_hand(sim: &KubeSim, node: &str, key: &str, value: &str) {
    let url = format!("{}/api/v1/nodes/{node}", sim.url);
    let patch = format!(r#"{{"metadata":{{"labels":{{"{key}":"{value}"}}}}}}"#);
    let result = http::request("PATCH", &url)
        .body("application/merge-patch+json", &patch)
        .ok();
    assert!(result.is_ok(), "{result:?}");
}

/// `ignore-changes = ["labels.tier"]`: each node keeps its own `tier` — planned for none,
/// listed as ignored, written by no patch, no drift once others change it — while the policy's
/// taint is applied as ever.
#[test]
fn an_ignored_label_is_left_as_each_node_has_it() {
    let project = Project::new();
    let sim = KubeSim::start(&project);
    sim.write_kubeconfig(&project);
    label_by_hand(&sim, "node-1", "tier", "api");
    let config = policy(DEDICATED).replace(
        "taints = [",
        "ignore-changes = [\"labels.tier\"]\ntaints = [",
    );
    project.config(&config);

    let plan = project.plan(&[]);
    let change = web_change(&plan);
    assert_eq!(
        rows(change),
        [
            row("nodes.node-1.taints.dedicated:NoSchedule", "minimal"),
            row("nodes.node-2.taints.dedicated:NoSchedule", "minimal"),
        ]
    );
    assert_eq!(
        change["operations"][0],
        "patch node node-1: taints +dedicated=web:NoSchedule"
    );
    let ignored: Vec<(&str, &Value, &Value)> = (change["ignored"].as_array().unwrap().iter())
        .map(|i| (i["path"].as_str().unwrap(), &i["before"], &i["after"]))
        .collect();
    assert_eq!(
        ignored,
        [
            (
                "nodes.node-1.labels.tier",
                &Value::from("api"),
                &Value::from("web")
            ),
            (
                "nodes.node-2.labels.tier",
                &Value::Null,
                &Value::from("web")
            ),
        ]
    );

    let apply = project.apply(&[]);
    assert_eq!(apply.code, 0, "{apply:?}");
    assert!(
        apply.stdout.contains("nodes.web: as predicted"),
        "{apply:?}"
    );
    assert_eq!(sim.node("node-1")["metadata"]["labels"]["tier"], "api");
    assert!(sim.node("node-2")["metadata"]["labels"]
        .get("tier")
        .is_none());
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "nothing left to plan: {out:?}");

    label_by_hand(&sim, "node-2", "tier", "batch");
    let out = project.run(&["drift"]);
    assert_eq!(out.code, 0, "an ignored label is no drift: {out:?}");
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "nor a change: {out:?}");
}
