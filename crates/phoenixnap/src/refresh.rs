//! One refresh for every PhoenixNAP target: three collection GETs (tag names, the blocks with
//! the CCM's usage tag, the public networks), concurrently; one GET per block a state names
//! that lost the usage tag; and per cluster its kube-system UID and each Service. A survey
//! (discovery) reads the blocks unfiltered and lists every connected cluster's Services.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;

use super::api::IpBlock;
use super::ccm::{USAGE_TAG, USAGE_VALUE};
use super::client::{Error, PnapClient};
use super::live::{ClusterFacts, Inventory, ServiceFacts, SurveyedCluster};
use skyplan_core::model::Address;

use crate::spec::PhoenixnapLoadBalancerSpec;
use skyplan_core::provider::ProviderError;
use skyplan_kubernetes::connection::Clusters;

pub async fn inventory(client: &PnapClient, state_blocks: &[String]) -> Result<Inventory, Error> {
    let (tags, blocks, networks) = tokio::try_join!(
        client.tags(),
        client.ip_blocks(&[(USAGE_TAG, USAGE_VALUE)]),
        client.public_networks(),
    )?;
    let mut blocks: Vec<IpBlock> = blocks;
    for id in state_blocks {
        if blocks.iter().any(|b| &b.id == id) {
            continue;
        }
        match client.ip_block(id).await {
            Ok(block) => blocks.push(block),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Inventory {
        tag_names: tags.into_iter().map(|t| t.name).collect(),
        blocks,
        networks,
    })
}

/// A survey's reads (discovery): the same three collection GETs, the blocks unfiltered — every
/// block of the account, whoever made it — so no block a state names needs a read of its own.
pub async fn whole_inventory(client: &PnapClient) -> Result<Inventory, Error> {
    let (tags, blocks, networks) = tokio::try_join!(
        client.tags(),
        client.ip_blocks(&[]),
        client.public_networks()
    )?;
    Ok(Inventory {
        tag_names: tags.into_iter().map(|t| t.name).collect(),
        blocks,
        networks,
    })
}

/// Every connected cluster's kube-system UID and Services (each listed once per run, shared
/// with the other providers through the connection).
pub async fn surveyed_clusters(
    clusters: Option<&Clusters>,
) -> Result<Vec<SurveyedCluster>, ProviderError> {
    let connected = clusters.map(Clusters::all).unwrap_or_default();
    let reads = connected.iter().map(|(address, connection)| async move {
        let uid = connection.cluster_uid().await?.to_owned();
        let services = connection.services().await?.to_vec();
        Ok::<_, ProviderError>(SurveyedCluster {
            address: address.clone(),
            uid,
            services,
        })
    });
    futures::future::try_join_all(reads).await
}

/// Each load balancer's cluster identity and Service, read through the attached clusters; a
/// cluster that is not connected is left out (plan says so).
pub async fn clusters(
    clusters: Option<&Clusters>,
    specs: &[(&Address, &PhoenixnapLoadBalancerSpec)],
) -> Result<(BTreeMap<Address, ClusterFacts>, BTreeMap<Address, Service>), ProviderError> {
    let mut facts = BTreeMap::new();
    let mut services = BTreeMap::new();
    let Some(clusters) = clusters else {
        return Ok((facts, services));
    };
    for (address, spec) in specs {
        let Some(connection) = clusters.get(&spec.cluster) else {
            continue;
        };
        let uid = connection.cluster_uid().await?.to_owned();
        let service = connection.service(&spec.namespace, &spec.name).await?;
        let missing_namespace = connection
            .missing_namespace(&spec.namespace, service.as_ref())
            .await?;
        facts.insert(
            (*address).clone(),
            ClusterFacts {
                uid,
                service: service.as_ref().map(service_facts),
                missing_namespace,
            },
        );
        if let Some(service) = service {
            services.insert((*address).clone(), service);
        }
    }
    Ok((facts, services))
}

pub fn service_facts(service: &Service) -> ServiceFacts {
    let spec = service.spec.as_ref();
    ServiceFacts {
        service_type: spec
            .and_then(|s| s.type_.clone())
            .unwrap_or_else(|| "ClusterIP".into()),
        load_balancer_ip: spec
            .and_then(|s| s.load_balancer_ip.clone())
            .filter(|ip| !ip.is_empty()),
        load_balancer_class: spec.and_then(|s| s.load_balancer_class.clone()),
        resource_version: service.metadata.resource_version.clone(),
    }
}
