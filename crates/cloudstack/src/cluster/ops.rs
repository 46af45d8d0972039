//! The operations an apply performs on one CKS cluster, in plan order: each is exactly one API
//! call. Catalog objects are carried resolved (UUIDs) with their names for display, so a saved
//! plan runs exactly what it showed.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::spec::NodeType;

/// The cluster an operation acts on. `id` is `None` for a cluster that an earlier operation of
/// the same change creates: the executor fills in the id the create returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A catalog object: its UUID for the API and its name for the operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    pub id: String,
    pub name: String,
}

/// One `nodeofferings[i]` entry (CloudStack ≥ 4.21).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeOffering {
    pub node: NodeType,
    pub offering: Named,
}

/// `createKubernetesCluster`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateCluster {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub zone: Named,
    pub version: Named,
    pub offering: Named,
    pub workers: u32,
    pub control_nodes: u32,
    pub etcd_nodes: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_offerings: Vec<NodeOffering>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Named>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keypair: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum ClusterOp {
    /// createKubernetesCluster (async). Boxed: it is much larger than the other operations.
    Create(Box<CreateCluster>),
    /// scaleKubernetesCluster id, serviceofferingid, nodeofferings.
    ScaleOffering {
        cluster: Target,
        offering: Named,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        node_offerings: Vec<NodeOffering>,
    },
    /// scaleKubernetesCluster id, size. `pinned` repeats the per-type offerings the nodes
    /// already have: without them CloudStack ≥ 4.21 would also move every node type to the
    /// cluster's global offering (CS issue #11994).
    ScaleSize {
        cluster: Target,
        workers: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pinned: Vec<NodeOffering>,
    },
    /// scaleKubernetesCluster id, autoscalingenabled, minsize, maxsize (never with a size).
    Autoscale {
        cluster: Target,
        enabled: bool,
        #[serde(default)]
        min: u32,
        #[serde(default)]
        max: u32,
    },
    /// upgradeKubernetesCluster id, kubernetesversionid.
    Upgrade { cluster: Target, version: Named },
    /// startKubernetesCluster id.
    Start { cluster: Target },
    /// stopKubernetesCluster id.
    Stop { cluster: Target },
    /// deleteKubernetesCluster id.
    Delete { cluster: Target },
}

impl fmt::Display for ClusterOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterOp::Create(create) => write!(
                f,
                "create cluster {} (Kubernetes {}, {} control + {} workers, {})",
                create.name,
                create.version.name,
                create.control_nodes,
                create.workers,
                create.offering.name
            ),
            ClusterOp::ScaleOffering {
                cluster,
                offering,
                node_offerings,
            } => {
                write!(
                    f,
                    "scale cluster {} to offering {}",
                    cluster.name, offering.name
                )?;
                for entry in node_offerings {
                    write!(f, ", {} {}", entry.node, entry.offering.name)?;
                }
                Ok(())
            }
            ClusterOp::ScaleSize {
                cluster, workers, ..
            } => write!(f, "scale cluster {} to {workers} workers", cluster.name),
            ClusterOp::Autoscale {
                cluster,
                enabled: true,
                min,
                max,
            } => write!(
                f,
                "set autoscaling of cluster {} to {min}-{max} workers",
                cluster.name
            ),
            ClusterOp::Autoscale { cluster, .. } => {
                write!(f, "turn off autoscaling of cluster {}", cluster.name)
            }
            ClusterOp::Upgrade { cluster, version } => write!(
                f,
                "upgrade cluster {} to Kubernetes {}",
                cluster.name, version.name
            ),
            ClusterOp::Start { cluster } => write!(f, "start cluster {}", cluster.name),
            ClusterOp::Stop { cluster } => write!(f, "stop cluster {}", cluster.name),
            ClusterOp::Delete { cluster } => write!(f, "delete cluster {}", cluster.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            name: "lab".into(),
            id: Some("c1".into()),
        }
    }

    #[test]
    fn operations_read_as_what_they_do() {
        let op = ClusterOp::ScaleSize {
            cluster: target(),
            workers: 5,
            pinned: vec![],
        };
        assert_eq!(op.to_string(), "scale cluster lab to 5 workers");
        let op = ClusterOp::Autoscale {
            cluster: target(),
            enabled: false,
            min: 0,
            max: 0,
        };
        assert_eq!(op.to_string(), "turn off autoscaling of cluster lab");
    }

    #[test]
    fn operations_survive_a_saved_plan() {
        let op = ClusterOp::Upgrade {
            cluster: target(),
            version: Named {
                id: "v2".into(),
                name: "1.30.1".into(),
            },
        };
        let text = serde_json::to_string(&op).unwrap();
        assert!(text.contains("\"op\":\"upgrade\""), "{text}");
        assert_eq!(serde_json::from_str::<ClusterOp>(&text).unwrap(), op);
    }
}
