//! Node readiness under the `unhealthy-after-change` fault (`faults.rs`). Without it a node
//! reports the Ready condition stored with it (True for a fresh world; the embedded world's
//! kubelet stand-in turns it Unknown when the machine stops). With it, a change to a node's
//! labels or taints draws whether the node breaks: a node it picked is served with `Ready`
//! `False` (reason `KubeletNotReady`) until it changes again.
//!
//! Which nodes were picked lives in memory only (`World::unhealthy_nodes`, never in the world
//! file, and the stored node is left as it was): a server started without the fault reports
//! them Ready again.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::faults::{KubeFaults, UnhealthyNodes};
use super::kinds::Kind;
use super::world::World;

pub const NOT_READY_REASON: &str = "KubeletNotReady";

/// The fault and the random source its draws come from (seeded by the spec's `seed`).
#[derive(Debug, Clone)]
pub struct NodeDraw {
    picks: UnhealthyNodes,
    rng: StdRng,
}

/// Two worlds are equal by their objects; the draw's random state is not part of them.
impl PartialEq for NodeDraw {
    fn eq(&self, other: &Self) -> bool {
        self.picks == other.picks
    }
}

impl NodeDraw {
    /// The draw of `faults`, if it has the fault.
    pub fn of(faults: &KubeFaults) -> Option<NodeDraw> {
        let picks = faults.unhealthy_after_change.clone()?;
        let rng = faults
            .seed
            .map_or_else(StdRng::from_os_rng, StdRng::seed_from_u64);
        Some(NodeDraw { picks, rng })
    }

    fn picks(&mut self, node: &str) -> bool {
        match &self.picks {
            UnhealthyNodes::Node(name) => name == node,
            UnhealthyNodes::Share(share) => self.rng.random::<f64>() < *share,
        }
    }
}

/// Whether a write changed what a node policy changes: its labels or its taints.
pub fn labels_or_taints_changed(old: &Value, new: &Value) -> bool {
    old["metadata"]["labels"] != new["metadata"]["labels"]
        || old["spec"]["taints"] != new["spec"]["taints"]
}

impl World {
    /// Records that the labels or taints of `node` changed: with the fault on, it draws anew
    /// whether the node reports not Ready.
    pub fn node_changed(&mut self, node: &str) {
        let Some(draw) = self.node_draw.as_mut() else {
            return;
        };
        match draw.picks(node) {
            true => self.unhealthy_nodes.insert(node.to_owned()),
            false => self.unhealthy_nodes.remove(node),
        };
    }

    /// `object` (a stored object of `kind`) as the server shows it: a node the fault broke
    /// with its Ready condition `False`.
    pub fn shown(&self, kind: Kind, mut object: Value) -> Value {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        if kind == Kind::Node && self.unhealthy_nodes.contains(name) {
            set_not_ready(&mut object);
        }
        object
    }
}

fn set_not_ready(node: &mut Value) {
    let not_ready = json!({
        "type": "Ready", "status": "False", "reason": NOT_READY_REASON,
        "message": "simulated: the unhealthy-after-change fault broke the node when it changed",
    });
    let mut conditions: Vec<Value> = node["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions.retain(|c| c["type"] != "Ready");
    conditions.push(not_ready);
    node["status"]["conditions"] = json!(conditions);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world(spec: &str) -> World {
        World {
            node_draw: NodeDraw::of(&spec.parse().unwrap()),
            ..World::default()
        }
    }

    fn ready(name: &str) -> Value {
        json!({"metadata": {"name": name},
               "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    }

    #[test]
    fn a_named_node_changed_while_the_fault_is_on_is_served_not_ready() {
        let mut world = world("unhealthy-after-change=node-2");
        world.node_changed("node-1");
        world.node_changed("node-2");
        let shown = world.shown(Kind::Node, ready("node-2"));
        assert_eq!(shown["status"]["conditions"][0]["status"], "False");
        assert_eq!(shown["status"]["conditions"][0]["reason"], NOT_READY_REASON);
        assert_eq!(world.shown(Kind::Node, ready("node-1")), ready("node-1"));
    }

    #[test]
    fn without_the_fault_a_change_leaves_the_node_ready() {
        let mut world = world("none");
        world.node_changed("node-2");
        assert_eq!(world.shown(Kind::Node, ready("node-2")), ready("node-2"));
    }

    #[test]
    fn a_probability_redraws_at_each_change() {
        let mut always = world("unhealthy-after-change=1");
        always.node_changed("node-1");
        assert!(always.unhealthy_nodes.contains("node-1"));
        let mut never = world("unhealthy-after-change=0");
        never.unhealthy_nodes.insert("node-1".into());
        never.node_changed("node-1");
        assert!(never.unhealthy_nodes.is_empty(), "a new change heals it");
    }

    #[test]
    fn only_labels_and_taints_count_as_a_change() {
        let node = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"taints": []}});
        let mut relabelled = node.clone();
        relabelled["metadata"]["labels"]["a"] = json!("2");
        let mut annotated = node.clone();
        annotated["metadata"]["annotations"] = json!({"x": "y"});
        assert!(labels_or_taints_changed(&node, &relabelled));
        assert!(!labels_or_taints_changed(&node, &annotated));
    }
}
