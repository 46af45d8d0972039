//! What a cloud provider is to Kubernetes: the registry connects the clouds first, hands their
//! VMs to the Kubernetes provider (node-metadata drift), then the connected clusters to every
//! cloud (a Service-bound load balancer reads its cluster when its cloud refreshes).

use std::sync::Arc;

use skyplan_core::provider::Provider;

use crate::connection::Clusters;
use crate::instances::CloudInstances;

pub trait ClusterCloud: Provider {
    /// The cloud's VMs, as its controller describes them to Kubernetes.
    fn instances(&self) -> Arc<dyn CloudInstances>;

    /// The connected clusters; once per run, by the registry, before the first refresh.
    fn attach_clusters(&self, clusters: Arc<Clusters>);
}
