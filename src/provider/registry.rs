//! The provider registry: which providers exist, how each is connected from its config table,
//! and how each resource kind appears in the object graph. Adding a provider touches this file,
//! the config and the provider's own folder — not the pipeline.

use std::collections::BTreeMap;

use crate::config::{Config, Resource, ResourceSpec};
use crate::graph::{ObjectGraph, ObjectKey};
use crate::provider::cloudscale::CloudscaleProvider;
use crate::provider::cloudstack::provider::CloudstackProvider;
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

/// Adds the resource's objects to the graph, and an edge from each resource it depends on.
pub fn add_to_graph(graph: &mut ObjectGraph, resource: &Resource) {
    let address = &resource.address;
    match &resource.spec {
        ResourceSpec::LoadBalancer(spec) => {
            crate::provider::cloudscale::order::add_to_graph(graph, address, spec)
        }
        ResourceSpec::CloudstackCluster(_) | ResourceSpec::CloudstackLoadBalancer(_) => graph.add(
            ObjectKey::new(address.clone(), address.kind.as_str(), &address.name),
            None,
        ),
    }
}
