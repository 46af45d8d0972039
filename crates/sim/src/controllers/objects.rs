//! The parts of Kubernetes and cloudscale objects the controllers read, decoded from the wire
//! JSON. Unknown fields are ignored, missing ones default, as Go's decoders do.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Meta {
    pub name: String,
    pub namespace: Option<String>,
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub finalizers: Vec<String>,
    pub deletion_timestamp: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Node {
    pub metadata: Meta,
    pub spec: NodeSpec,
    pub status: NodeStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    #[serde(rename = "providerID")]
    pub provider_id: Option<String>,
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeStatus {
    pub conditions: Vec<Condition>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Condition {
    #[serde(rename = "type")]
    pub kind: String,
    pub status: String,
}

impl Node {
    pub fn from_json(value: &Value) -> Option<Node> {
        serde_json::from_value(value.clone()).ok()
    }

    pub fn has_taint(&self, key: &str) -> bool {
        self.spec.taints.iter().any(|taint| taint.key == key)
    }

    /// A node without a Ready condition counts as not ready, as the lifecycle controller's
    /// `GetNodeCondition` → nil → "not ready" does.
    pub fn is_ready(&self) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.kind == "Ready" && c.status == "True")
    }

    pub fn provider_id(&self) -> Option<&str> {
        self.spec
            .provider_id
            .as_deref()
            .filter(|id| !id.trim().is_empty())
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Service {
    pub metadata: Meta,
    pub spec: ServiceSpec,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ServiceSpec {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub load_balancer_class: Option<String>,
    pub ports: Vec<ServicePort>,
    pub external_traffic_policy: Option<String>,
    pub health_check_node_port: Option<u16>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ServicePort {
    pub name: Option<String>,
    pub protocol: Option<String>,
    pub port: u16,
    pub node_port: Option<u16>,
}

impl Service {
    pub fn from_json(value: &Value) -> Option<Service> {
        serde_json::from_value(value.clone()).ok()
    }

    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }

    /// `namespace/name`, the service controller's queue key.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace(), self.metadata.name)
    }

    pub fn path(&self) -> String {
        format!(
            "/api/v1/namespaces/{}/services/{}",
            self.namespace(),
            self.metadata.name
        )
    }

    /// cloud-provider's `wantsLoadBalancer`: type LoadBalancer and no class of its own.
    pub fn wants_load_balancer(&self) -> bool {
        self.spec.kind.as_deref() == Some("LoadBalancer") && self.spec.load_balancer_class.is_none()
    }

    pub fn is_local_traffic(&self) -> bool {
        self.spec.external_traffic_policy.as_deref() == Some("Local")
    }
}

/// A cloudscale server as `GET /v1/servers` renders it.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Server {
    pub uuid: String,
    pub name: String,
    pub status: String,
    pub flavor: Slug,
    pub zone: Slug,
    pub interfaces: Vec<Interface>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Slug {
    pub slug: String,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Interface {
    #[serde(rename = "type")]
    pub kind: String,
    pub addresses: Vec<InterfaceAddress>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct InterfaceAddress {
    pub version: u8,
    pub address: String,
    pub subnet: Option<SubnetRef>,
}

/// A subnet as responses nest it; the CCM copies it into members as it is.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(default)]
pub struct SubnetRef {
    pub href: String,
    pub uuid: String,
    pub cidr: String,
}

impl Server {
    pub fn from_json(value: &Value) -> Option<Server> {
        serde_json::from_value(value.clone()).ok()
    }
}
