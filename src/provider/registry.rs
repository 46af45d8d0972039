//! The provider registry: which providers exist, how each is connected from its config table,
//! and how each resource kind appears in the object graph. Adding a provider touches this file,
//! the config and the provider's own folder — not the pipeline.

use std::collections::BTreeMap;

use crate::config::{Config, ResourceSpec};
use crate::graph::{ObjectGraph, ObjectKey};
use crate::model::Address;
use crate::provider::cloudscale::CloudscaleProvider;
use crate::provider::cloudstack::{self, provider::CloudstackProvider};
use crate::provider::{Provider, ProviderError};

/// The providers a config may name, in the order `validate` lists them.
pub const PROVIDERS: [&str; 2] = ["cloudscale", "cloudstack"];

/// Connects every provider the config has a table for.
pub async fn connect(
    config: &Config,
) -> Result<BTreeMap<String, Box<dyn Provider>>, ProviderError> {
    let state_dir = &config.settings.state_dir;
    let mut providers: BTreeMap<String, Box<dyn Provider>> = BTreeMap::new();
    if let Some(cloudscale) = &config.providers.cloudscale {
        let provider = CloudscaleProvider::connect(&cloudscale.endpoint, state_dir).await?;
        providers.insert(provider.name().to_string(), Box::new(provider));
    }
    if let Some(cloudstack) = &config.providers.cloudstack {
        let provider = CloudstackProvider::connect(&cloudstack.endpoint, state_dir).await?;
        providers.insert(provider.name().to_string(), Box::new(provider));
    }
    Ok(providers)
}

/// The object graph of the configured resources; resources others depend on (clusters) are
/// added first, so that their dependants can point at them.
pub fn graph(config: &Config) -> ObjectGraph {
    let mut graph = ObjectGraph::new();
    let mut clusters: BTreeMap<&Address, ObjectKey> = BTreeMap::new();
    for resource in &config.resources {
        if let ResourceSpec::CloudstackCluster(spec) = &resource.spec {
            cloudstack::graph::add_cluster(&mut graph, &resource.address, spec);
            let key = cloudstack::graph::cluster_key(&resource.address, spec);
            clusters.insert(&resource.address, key);
        }
    }
    for resource in &config.resources {
        let address = &resource.address;
        match &resource.spec {
            ResourceSpec::LoadBalancer(spec) => {
                crate::provider::cloudscale::order::add_to_graph(&mut graph, address, spec)
            }
            ResourceSpec::CloudstackLoadBalancer(spec) => {
                let cluster = cloudstack::graph::members_cluster(spec);
                let cluster = cluster.as_ref().and_then(|c| clusters.get(c));
                cloudstack::graph::add_load_balancer(&mut graph, address, spec, cluster);
            }
            // Clusters skyplan only connects to, and node policies, have no cloud objects.
            ResourceSpec::CloudstackCluster(_)
            | ResourceSpec::KubernetesCluster(_)
            | ResourceSpec::NodePolicy(_) => {}
        }
    }
    graph
}
