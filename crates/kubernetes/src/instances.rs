//! What a cloud knows about the VMs behind a cluster's nodes, and what its cloud controller
//! would therefore set on each Node: the narrow interface between a cloud provider and
//! node-metadata drift.

use futures::future::BoxFuture;

use skyplan_core::provider::ProviderError;

/// Whether the VM runs; the node lifecycle controller taints the Node of a stopped one
/// `node.cloudprovider.kubernetes.io/shutdown` and deletes the Node of a missing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceStatus {
    Running,
    Stopped,
    /// Any other state (starting, changing, error…), as the cloud spells it.
    Other,
}

/// A node address as the cloud controller reports it (`status.addresses`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceAddress {
    /// `Hostname`, `InternalIP` or `ExternalIP`.
    pub kind: String,
    pub address: String,
}

/// One VM, with the metadata its cloud controller derives from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudInstance {
    /// The VM's name: a Node without providerID is matched to the VM of the same name.
    pub name: String,
    /// `spec.providerID` the controller sets, e.g. `cloudscale://<uuid>`.
    pub provider_id: String,
    /// `node.kubernetes.io/instance-type`.
    pub instance_type: Option<String>,
    /// `topology.kubernetes.io/zone` (None: the controller sets no zone label).
    pub zone: Option<String>,
    /// `topology.kubernetes.io/region`.
    pub region: Option<String>,
    /// In the controller's order.
    pub addresses: Vec<InstanceAddress>,
    pub status: InstanceStatus,
}

/// A cloud's VMs, read once per run. Implemented by each cloud provider whose controller
/// initialises nodes.
pub trait CloudInstances: Send + Sync {
    /// The providerID scheme this cloud's controller uses (`cloudscale`, `external-cloudstack`,
    /// `phoenixnap`): a Node whose providerID has another scheme is not this cloud's.
    fn scheme(&self) -> &'static str;

    /// Every VM of the account.
    fn instances(&self) -> BoxFuture<'_, Result<Vec<CloudInstance>, ProviderError>>;
}
