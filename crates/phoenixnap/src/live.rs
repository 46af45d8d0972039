//! What one refresh read: the account's tag names, the blocks tagged with the CCM's usage tag,
//! the public networks; and for each load balancer its cluster's identity and Service.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Service;
use serde::{Deserialize, Serialize};

use super::api::{IpBlock, PublicNetwork};
use super::diff::PROVIDER;
use skyplan_core::model::Address;
use skyplan_core::provider::{ProviderError, Refreshed};

use crate::spec::PhoenixnapLoadBalancerSpec;

/// Everything one refresh read, which the pipeline hands back to plan, drift, import and
/// apply. Empty when no target is a PhoenixNAP load balancer.
#[derive(Debug, Default)]
pub struct Live {
    pub inventory: Inventory,
    pub clusters: BTreeMap<Address, ClusterFacts>,
    /// Each load balancer's Service, whole: apply writes it back with its changes.
    pub services: BTreeMap<Address, Service>,
    /// What a survey read besides (discovery): every connected cluster's identity and
    /// Services. `None` after a plain refresh.
    pub survey: Option<Vec<SurveyedCluster>>,
}

/// A connected cluster as a survey read it: the CCM tags a block with the kube-system UID,
/// which names the cluster; its Services are listed once.
#[derive(Debug, Clone)]
pub struct SurveyedCluster {
    /// The cluster's address in the config (`cluster.prod`).
    pub address: Address,
    pub uid: String,
    pub services: Vec<Service>,
}

impl SurveyedCluster {
    /// The Service `namespace/name`, if the cluster has it.
    pub fn service(&self, namespace: &str, name: &str) -> Option<&Service> {
        self.services.iter().find(|s| {
            s.metadata.namespace.as_deref() == Some(namespace)
                && s.metadata.name.as_deref() == Some(name)
        })
    }
}

impl Live {
    pub fn of(refreshed: &Refreshed) -> Result<&Live, ProviderError> {
        refreshed.downcast_ref(PROVIDER)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub tag_names: BTreeSet<String>,
    /// Blocks with `usage=cloud-provider-phoenixnap-auto`, plus any block a state names that
    /// lost that tag (read by id).
    pub blocks: Vec<IpBlock>,
    pub networks: Vec<PublicNetwork>,
}

impl Inventory {
    pub fn block(&self, id: &str) -> Option<&IpBlock> {
        self.blocks.iter().find(|b| b.id == id)
    }

    /// The public network named by id or name; the error lists the ones that exist.
    pub fn network(&self, wanted: &str) -> Result<&PublicNetwork, String> {
        self.networks
            .iter()
            .find(|n| n.id == wanted)
            .or_else(|| self.networks.iter().find(|n| n.name == wanted))
            .ok_or_else(|| {
                let known: Vec<String> = self
                    .networks
                    .iter()
                    .map(|n| format!("{} ({}, {})", n.name, n.id, n.location))
                    .collect();
                format!(
                    "public network `{wanted}` does not exist; public networks: {}",
                    match known.is_empty() {
                        true => "none".to_string(),
                        false => known.join(", "),
                    }
                )
            })
    }
}

/// The Service as refresh read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceFacts {
    pub service_type: String,
    /// `spec.loadBalancerIP`, `None` when empty.
    pub load_balancer_ip: Option<String>,
    pub load_balancer_class: Option<String>,
    pub resource_version: Option<String>,
}

/// A load balancer's cluster, as refresh read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterFacts {
    /// The kube-system namespace UID: the CCM's cluster id.
    pub uid: String,
    /// `None`: the Service does not exist.
    pub service: Option<ServiceFacts>,
    /// Why the Service cannot exist: its namespace does not (read only when it is missing).
    pub missing_namespace: Option<String>,
}

/// What skyplan keeps in the state for a load balancer: the spec it applied and what the cloud
/// gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AppliedBlock {
    pub spec: PhoenixnapLoadBalancerSpec,
    pub block: String,
    pub cidr: String,
    pub address: String,
    pub network_id: String,
    pub cluster_uid: String,
    /// The Service's type before skyplan made it LoadBalancer; restored when released.
    pub service_type_before: String,
}

impl AppliedBlock {
    pub fn from_json(value: &serde_json::Value) -> Option<AppliedBlock> {
        serde_json::from_value(value.clone()).ok()
    }
}

/// Per load balancer, its cluster's facts (absent: the cluster is not connected).
pub type ClusterViews = BTreeMap<Address, ClusterFacts>;
