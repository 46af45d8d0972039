//! A CKS cluster as `[cluster.NAME]`: its catalog objects by the names the config resolves
//! (zone, Kubernetes version, offerings, network — an ID where a name would find another),
//! its counts, autoscaling and run state. A network CKS made for the cluster
//! (`<name>-network`) is left out, as the config that made it would have; one it was given is
//! written. Refused: a state the config cannot ask for (Alert, Error, Destroying), a
//! catalog object gone from the catalog.

use std::collections::BTreeMap;

use super::{catalog_name, claimed_entry, plans_nothing, refuse, Outcome, Refusal};
use crate::api::KubernetesCluster;
use crate::live::{Inventory, PlanInput};
use crate::spec::{Autoscaling, CloudstackClusterSpec, ClusterRunState, NodeType};
use skyplan_core::model::Address;
use skyplan_core::provider::ProviderError;

/// CKS states the config's `state = "running"` plans nothing for.
const RUNNING: &[&str] = &[
    "Running",
    "Starting",
    "Scaling",
    "Upgrading",
    "Importing",
    "RemovingNodes",
    "Recovering",
];
/// CKS states `state = "stopped"` plans nothing for.
const STOPPED: &[&str] = &["Stopped", "Stopping", "ScalingStoppedCluster", "Created"];

pub(super) fn generate(
    address: &Address,
    id: &str,
    live: &crate::live::Live,
) -> Result<Outcome, ProviderError> {
    let inventory = &live.inventory;
    let cluster = inventory
        .cluster_by_id(id)
        .filter(|c| super::super::alive(c))
        .ok_or_else(|| {
            ProviderError::new(
                address,
                format!("no Kubernetes cluster with ID {id} in the account"),
            )
        })?;
    Ok(adoptable(address, cluster, inventory).map(|spec| super::cluster_toml(address, &spec)))
}

/// The spec a cluster adopted as `address` gets, checked to plan nothing: what a load balancer
/// adopted with it may name.
pub(super) fn adoptable(
    address: &Address,
    cluster: &KubernetesCluster,
    inventory: &Inventory,
) -> Result<CloudstackClusterSpec, Refusal> {
    let spec = spec_of(cluster, inventory)?;
    check(address, &spec, &cluster.id, inventory)?;
    Ok(spec)
}

/// The config's spec of a live cluster.
pub(super) fn spec_of(
    cluster: &KubernetesCluster,
    inventory: &Inventory,
) -> Result<CloudstackClusterSpec, Refusal> {
    let zone = inventory
        .zones
        .iter()
        .find(|z| z.id == cluster.zoneid)
        .ok_or_else(|| {
            refuse(
                "zone",
                format!("zone {} is not in the catalog", cluster.zoneid),
            )
        })?;
    let zone_name = catalog_name(&zone.id, Some(&zone.name), |name| {
        inventory.zone(name).map(|z| z.id.as_str())
    });
    let version = inventory
        .version_by_id(&cluster.kubernetesversionid)
        .ok_or_else(|| {
            refuse(
                "kubernetes-version",
                format!(
                    "the cluster runs {} ({}), which is no longer a supported version in the catalog: the config names versions of the catalog",
                    cluster.kubernetesversionname, cluster.kubernetesversionid
                ),
            )
        })?;
    let semantic = semver::Version::parse(&version.semanticversion)
        .ok()
        .filter(|v| v.pre.is_empty() && v.build.is_empty());
    if semantic.is_none() {
        return Err(refuse(
            "kubernetes-version",
            format!(
                "the catalog calls the cluster's version `{}`, and the config takes MAJOR.MINOR.PATCH",
                version.semanticversion
            ),
        ));
    }
    let offering = |id: &str, attribute: &str| {
        let found = inventory.offering_by_id(id).ok_or_else(|| {
            refuse(
                attribute,
                format!("service offering {id} is not in the catalog"),
            )
        })?;
        Ok::<_, Refusal>(
            catalog_name(&found.id, Some(&found.name), |name| {
                inventory.offering(name).map(|o| o.id.as_str())
            })
            .to_string(),
        )
    };
    let service_offering = offering(&cluster.serviceofferingid, "service-offering")?;
    let mut node_offerings = BTreeMap::new();
    for node in crate::cluster::node_types(cluster.etcdnodes) {
        let own = own_offering(cluster, node);
        if let Some(own) = own.filter(|own| *own != cluster.serviceofferingid) {
            let attribute = format!("node-offerings.{node}");
            node_offerings.insert(node, offering(own, &attribute)?);
        }
    }
    let network = network(cluster, inventory)?;
    let state = if RUNNING.contains(&cluster.state.as_str()) {
        ClusterRunState::Running
    } else if STOPPED.contains(&cluster.state.as_str()) {
        ClusterRunState::Stopped
    } else {
        return Err(refuse(
            "state",
            format!(
                "the cluster is {}: the config asks for running or stopped, and skyplan would start it; adopt it once CloudStack has it Running or Stopped",
                cluster.state
            ),
        ));
    };
    Ok(CloudstackClusterSpec {
        name: cluster.name.clone(),
        description: cluster.description.clone().filter(|d| !d.is_empty()),
        zone: zone_name.to_string(),
        kubernetes_version: version.semanticversion.clone(),
        control_nodes: cluster.controlnodes,
        etcd_nodes: cluster.etcdnodes,
        workers: cluster.size,
        service_offering,
        node_offerings,
        network,
        keypair: cluster.keypair.clone().filter(|k| !k.is_empty()),
        autoscaling: cluster.autoscalingenabled.then_some(Autoscaling {
            min: cluster.minsize,
            max: cluster.maxsize,
        }),
        state,
    })
}

/// The offering a node type has of its own (CloudStack ≥ 4.21), if any.
fn own_offering(cluster: &KubernetesCluster, node: NodeType) -> Option<&str> {
    let own = match node {
        NodeType::Control => cluster.controlofferingid.as_deref(),
        NodeType::Worker => cluster.workerofferingid.as_deref(),
        NodeType::Etcd => cluster.etcdofferingid.as_deref(),
    };
    own.filter(|id| !id.is_empty())
}

/// The network the cluster was given; `None` for the one CKS made for it (named
/// `<cluster>-network`, destroyed with it), which the config leaves out.
fn network(cluster: &KubernetesCluster, inventory: &Inventory) -> Result<Option<String>, Refusal> {
    let Some(id) = cluster.networkid.as_deref().filter(|id| !id.is_empty()) else {
        return Ok(None);
    };
    let made_by_cks = format!("{}-network", cluster.name);
    let listed = inventory.networks.iter().find(|n| n.id == id);
    let name = listed
        .map(|n| n.name.as_str())
        .or(cluster.associatednetworkname.as_deref());
    if name == Some(made_by_cks.as_str()) {
        return Ok(None);
    }
    let Some(listed) = listed else {
        return Err(refuse(
            "network",
            format!("the cluster's network {id} is not among the account's networks"),
        ));
    };
    let written = catalog_name(&listed.id, Some(&listed.name), |name| {
        inventory.network(name).map(|n| n.id.as_str())
    });
    Ok(Some(written.to_string()))
}

/// Imported and planned against the same account, the cluster plans nothing.
fn check(
    address: &Address,
    spec: &CloudstackClusterSpec,
    id: &str,
    inventory: &Inventory,
) -> Result<(), Refusal> {
    let entry = claimed_entry(id);
    let imported = crate::provider::import_cluster(address, spec, Some(&entry), inventory)
        .map_err(|e| refuse("(resource)", e.message))?;
    plans_nothing(crate::cluster::plan(&PlanInput {
        address,
        desired: Some(spec),
        prior: Some(&imported),
        live: inventory,
        replace: false,
        allow_delete: false,
    }))
}
