//! Where a CloudStack resource is, for a rollout grouped by cluster or zone
//! (`[rollout] max-disrupted-per`): a CKS cluster is its own cluster, in its zone; a load
//! balancer serves the cluster it takes its members from (or whose Service it is bound to),
//! and is in that cluster's zone, else in its public IP's.

use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::Placement;
use skyplan_core::provider::Target;
use skyplan_core::state::ResourceState;

use super::lb::found::LbIds;
use super::live::Live;
use crate::spec::{CloudstackClusterSpec, CloudstackLoadBalancerSpec, CsMembers, PublicIp};

/// The placement of `target`, from its config, else what was last applied; `None` when
/// neither says anything.
pub(crate) fn placement(target: &Target<'_>, live: &Live) -> Option<Placement> {
    let placement = match target.address.kind {
        ResourceKind::Cluster => cluster(target, live),
        ResourceKind::LoadBalancer => load_balancer(target, live),
        ResourceKind::Nodes => return None,
    };
    (placement != Placement::default()).then_some(placement)
}

fn cluster(target: &Target<'_>, live: &Live) -> Placement {
    let spec: Option<CloudstackClusterSpec> = (target.resource)
        .and_then(|r| r.spec.get::<CloudstackClusterSpec>().cloned())
        .or_else(|| target.prior.and_then(applied));
    Placement {
        cluster: Some(target.address.to_string()),
        zone: spec.map(|s| zone_name(live, &s.zone)),
    }
}

fn load_balancer(target: &Target<'_>, live: &Live) -> Placement {
    let spec: Option<CloudstackLoadBalancerSpec> = (target.resource)
        .and_then(|r| r.spec.get::<CloudstackLoadBalancerSpec>().cloned())
        .or_else(|| target.prior.and_then(applied));
    let served = spec.as_ref().and_then(served_cluster);
    let zone = (served.as_ref())
        .and_then(|address| cluster_zone(live, address))
        .or_else(|| ip_zone(live, spec.as_ref(), target.prior));
    Placement {
        cluster: served.map(|address| address.to_string()),
        zone,
    }
}

/// The cluster whose Service the load balancer is bound to, else whose workers it balances.
fn served_cluster(spec: &CloudstackLoadBalancerSpec) -> Option<Address> {
    match (&spec.binding, &spec.members) {
        (Some(binding), _) => Some(binding.cluster.clone()),
        (None, CsMembers::Cluster(key)) => Some(Address::new(ResourceKind::Cluster, key)),
        (None, CsMembers::Vms(_)) => None,
    }
}

/// The zone of the cluster at `address`: as its config names it, else as the cloud shows it.
fn cluster_zone(live: &Live, address: &Address) -> Option<String> {
    let known = live.clusters.get(address)?;
    if let Some(spec) = &known.spec {
        return Some(zone_name(live, &spec.zone));
    }
    let id = known.prior_id.as_deref()?;
    let found = live.inventory.cluster_by_id(id)?;
    Some(zone_name(live, &found.zoneid))
}

/// The zone of the load balancer's public IP: the one its state names, else its config's.
fn ip_zone(
    live: &Live,
    spec: Option<&CloudstackLoadBalancerSpec>,
    prior: Option<&ResourceState>,
) -> Option<String> {
    let inventory = &live.inventory;
    let by_state = prior
        .and_then(|p| LbIds::from_state(p).public_ip)
        .and_then(|id| inventory.public_ip(&id));
    let by_config = spec.and_then(|s| match &s.public_ip {
        PublicIp::Address(address) => inventory.public_ip_by_address(address),
        PublicIp::Auto => None,
    });
    let ip = by_state.or(by_config)?;
    Some(zone_name(live, &ip.zoneid))
}

/// A zone as the config or the cloud names it (name or ID), by its name when the cloud
/// knows it.
fn zone_name(live: &Live, zone: &str) -> String {
    live.inventory
        .zone(zone)
        .map_or_else(|| zone.to_owned(), |z| z.name.clone())
}

fn applied<T: serde::de::DeserializeOwned>(prior: &ResourceState) -> Option<T> {
    serde_json::from_value(prior.attributes.clone()).ok()
}

#[cfg(test)]
#[path = "placement_tests.rs"]
mod tests;
