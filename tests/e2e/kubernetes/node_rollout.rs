//! A rollout of node policies against `skyplan sim serve --provider kubernetes`: each policy's
//! change is gated on its nodes reporting Ready; a node that stays NotReady after its change
//! (the `unhealthy-after-change` fault) stops the rollout with exit 5, and the next apply, the
//! node Ready again, does the rest.

use crate::support::kube_sim::KubeSim;
use crate::support::Project;

use super::node_policies::CLUSTER;

/// Two policies, one node each, one at a time; `tier` labels both.
fn config(tier: &str) -> String {
    let mut text = format!("{CLUSTER}\n[rollout]\nmax-disrupted = 1\nhealth-timeout = \"1s\"\n");
    for (policy, node) in [("a", "node-1"), ("b", "node-2")] {
        text.push_str(&format!(
            "\n[nodes.{policy}]\ncluster = \"prod\"\nnames = [\"{node}\"]\n\
             taints = [{{ key = \"tier\", value = \"{tier}\", effect = \"NoSchedule\" }}]\n"
        ));
    }
    text
}

#[test]
fn a_node_left_not_ready_stops_the_rollout_of_node_policies() {
    let project = Project::new();
    let world = project.path().join("kube.json");
    let sim = KubeSim::start_with_faults(&world, "unhealthy-after-change=node-1");
    sim.write_kubeconfig(&project);
    project.config(&config("web"));
    let out = project.apply(&[]);
    assert_eq!(out.code, 5, "{out:?}");
    assert!(
        out.stderr.contains(
            "rollout stopped: nodes.a was not healthy in time: node node-1: Ready False (KubeletNotReady)"
        ),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("not started: nodes.b: the rollout stopped before it"),
        "{out:?}"
    );
    let taints = |sim: &KubeSim, node: &str| sim.node(node)["spec"]["taints"].clone();
    assert_eq!(taints(&sim, "node-2"), serde_json::Value::Null, "untouched");
    sim.terminate();

    let sim = KubeSim::start_on(&world);
    sim.write_kubeconfig(&project);
    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(taints(&sim, "node-2")[0]["value"], "web");
    let plan = project.plan(&[]);
    assert_eq!(plan["summary"]["create"], 0, "{plan}");
}
