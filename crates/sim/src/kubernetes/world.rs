//! The simulated cluster's data and its file format: every object as the JSON the API serves,
//! by kind and `namespace/name`, and the cluster-wide resourceVersion counter. Keeping objects
//! as JSON (as etcd keeps them) lets the patch engines work on exactly what clients see.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::health::NodeDraw;
use super::kinds::{Kind, ObjectKey};
use super::FreshNode;

pub const WORLD_FORMAT: u32 = 1;

/// The taint kubelet registers a node with when a cloud controller must initialise it.
pub const UNINITIALIZED_TAINT: &str = "node.cloudprovider.kubernetes.io/uninitialized";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct World {
    #[serde(default = "format_one")]
    pub format: u32,
    /// The last resourceVersion handed out; every write takes the next one.
    #[serde(default)]
    pub resource_version: u64,
    #[serde(default)]
    pub namespaces: BTreeMap<String, Value>,
    #[serde(default)]
    pub nodes: BTreeMap<String, Value>,
    /// By `namespace/name`.
    #[serde(default)]
    pub services: BTreeMap<String, Value>,
    /// The version the server reports (MAJOR, MINOR), on which what it does to a write
    /// depends; `None` (a world not served) behaves as the newest. Not part of the file.
    #[serde(skip)]
    pub version: Option<(u32, u32)>,
    /// The nodes the `unhealthy-after-change` fault broke (see `health.rs`): in memory only.
    #[serde(skip)]
    pub unhealthy_nodes: BTreeSet<String>,
    /// The fault's draw, when the server was started with it. Not part of the file.
    #[serde(skip)]
    pub node_draw: Option<NodeDraw>,
}

fn format_one() -> u32 {
    WORLD_FORMAT
}

impl World {
    pub fn objects(&self, kind: Kind) -> &BTreeMap<String, Value> {
        match kind {
            Kind::Namespace => &self.namespaces,
            Kind::Node => &self.nodes,
            Kind::Service => &self.services,
        }
    }

    pub fn objects_mut(&mut self, kind: Kind) -> &mut BTreeMap<String, Value> {
        match kind {
            Kind::Namespace => &mut self.namespaces,
            Kind::Node => &mut self.nodes,
            Kind::Service => &mut self.services,
        }
    }

    pub fn get(&self, kind: Kind, key: &ObjectKey) -> Option<&Value> {
        self.objects(kind).get(&key.storage_key())
    }

    /// The resourceVersion the next write stores.
    pub fn next_resource_version(&mut self) -> String {
        self.resource_version += 1;
        self.resource_version.to_string()
    }

    /// A cluster as `kubeadm init` leaves it, with `nodes` joined by their kubelets.
    pub fn fresh(nodes: &[FreshNode], version: (u32, u32), now: Timestamp) -> World {
        let mut world = World {
            format: WORLD_FORMAT,
            ..World::default()
        };
        let created = timestamp(now);
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let rv = world.next_resource_version();
            world
                .namespaces
                .insert(name.into(), fresh_namespace(name, &rv, &created));
        }
        for node in nodes {
            let rv = world.next_resource_version();
            world
                .nodes
                .insert(node.name.clone(), fresh_node(node, version, &rv, &created));
        }
        world
    }
}

/// RFC 3339 in UTC to the second, as metav1.Time marshals.
pub fn timestamp(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn fresh_namespace(name: &str, rv: &str, created: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            // Random but kept in the world file: the uid of kube-system is a cluster's identity
            // for some cloud controllers, so it must not change across restarts.
            "uid": new_uid(),
            "resourceVersion": rv,
            "creationTimestamp": created,
            "labels": {"kubernetes.io/metadata.name": name},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

fn fresh_node(node: &FreshNode, version: (u32, u32), rv: &str, created: &str) -> Value {
    let mut spec = json!({});
    if let Some(provider_id) = &node.provider_id {
        spec["providerID"] = provider_id.as_str().into();
    }
    if node.uninitialized {
        spec["taints"] = json!([{"key": UNINITIALIZED_TAINT, "value": "true",
                                 "effect": "NoSchedule"}]);
    }
    json!({
        "metadata": {
            "name": node.name,
            "uid": new_uid(),
            "resourceVersion": rv,
            "creationTimestamp": created,
            "labels": {
                "kubernetes.io/hostname": node.name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": spec,
        "status": {
            "capacity": {"cpu": "4", "memory": "8148012Ki", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "8045612Ki", "pods": "110"},
            "conditions": [{
                "type": "Ready",
                "status": "True",
                "lastHeartbeatTime": created,
                "lastTransitionTime": created,
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }],
            "addresses": [
                {"type": "InternalIP", "address": node.internal_ip},
                {"type": "Hostname", "address": node.name},
            ],
            "nodeInfo": {
                "kubeletVersion": format!("v{}.{}.0", version.0, version.1),
                "kubeProxyVersion": format!("v{}.{}.0", version.0, version.1),
                "operatingSystem": "linux",
                "architecture": "amd64",
                "osImage": "Ubuntu 24.04 LTS",
                "containerRuntimeVersion": "containerd://1.7.24",
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, uninitialized: bool) -> FreshNode {
        FreshNode {
            uninitialized,
            ..FreshNode::ready(name, "10.0.0.9")
        }
    }

    #[test]
    fn a_fresh_world_has_the_system_namespaces_and_its_nodes() {
        let world = World::fresh(&[node("a", false)], (1, 33), Timestamp::UNIX_EPOCH);
        assert!(world.namespaces.contains_key("default"));
        assert!(world.namespaces.contains_key("kube-system"));
        let a = &world.nodes["a"];
        assert_eq!(a["status"]["nodeInfo"]["kubeletVersion"], "v1.33.0");
        assert_eq!(a["status"]["addresses"][0]["address"], "10.0.0.9");
        assert!(a["spec"].get("taints").is_none());
        assert!(a["spec"].get("providerID").is_none());
        assert_eq!(a["metadata"]["creationTimestamp"], "1970-01-01T00:00:00Z");
        assert_eq!(world.resource_version, 5);
    }

    #[test]
    fn an_uninitialised_node_carries_the_cloud_taint() {
        let world = World::fresh(&[node("a", true)], (1, 33), Timestamp::UNIX_EPOCH);
        assert_eq!(
            world.nodes["a"]["spec"]["taints"],
            json!([{"key": UNINITIALIZED_TAINT, "value": "true", "effect": "NoSchedule"}])
        );
    }
}
