//! What the config asks of Kubernetes, resolved: clusters skyplan connects to, node policies,
//! and a cloud load balancer's binding to a Service (the clouds' specs hold one).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use skyplan_core::model::Address;

/// How skyplan reaches an existing cluster (`[cluster.NAME] provider = "kubernetes"`). Such a
/// cluster is never created or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "endpoint")]
pub enum KubeAccess {
    /// A kubeconfig file and context, with kubectl's rules: `path` None means KUBECONFIG, then
    /// ~/.kube/config; `context` None means the current context.
    Kubeconfig {
        path: Option<PathBuf>,
        context: Option<String>,
    },
    /// The service account of the pod skyplan runs in (`in-cluster = true`).
    InCluster,
    /// The built-in Kubernetes simulator (three Ready nodes backed by the embedded cloud's
    /// servers), persisted under `<state-dir>/embedded/kubernetes/<cluster>.json`.
    Embedded,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubernetesClusterSpec {
    pub access: KubeAccess,
}

skyplan_core::wire_enum!(
    /// A node taint's effect.
    TaintEffect { NoSchedule => "NoSchedule", PreferNoSchedule => "PreferNoSchedule", NoExecute => "NoExecute" }
);

/// A taint as the config lists it; `(key, effect)` identifies it on a node, as kubectl does.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaintSpec {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub effect: TaintEffect,
}

/// Which nodes a policy covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeSelection {
    /// A label selector in kubectl's syntax (`role=web,!spot`, `tier in (a,b)`).
    Selector(String),
    /// Node-name globs (`worker-*`).
    Names(Vec<String>),
}

/// `[nodes.NAME]`: the labels and taints a policy manages on the nodes it selects. Labels and
/// taints set by others are left alone; one removed from the policy is removed from the nodes
/// (the state remembers what the policy set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePolicySpec {
    /// A `cluster.NAME` address.
    pub cluster: Address,
    pub selection: NodeSelection,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<TaintSpec>,
}

skyplan_core::wire_enum!(
    /// Who changes the cloud load balancer of a Service-bound load balancer.
    LbMode { Direct => "direct", Ccm => "ccm" }
);

/// A load balancer bound to a Kubernetes Service (`cluster`, `service`, `mode`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ServiceBinding {
    /// A `cluster.NAME` address.
    pub cluster: Address,
    pub namespace: String,
    pub name: String,
    pub mode: LbMode,
}

impl ServiceBinding {
    /// `namespace/name`, as the config writes it.
    pub fn service_ref(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

skyplan_core::choices!(
    TaintEffect => "taint effect",
    LbMode => "mode",
);
