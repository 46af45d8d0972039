//! The account's objects no target claims: each CKS cluster, and each public IP carrying LB
//! rules (one load balancer per IP, as the config models it; CKS's own API rule left out).
//! Who made one: skyplan when it carries `skyplan.address` naming an address no target has
//! (on the IP, a rule, or the Service the CCM serves), the CloudStack CCM when every rule is
//! named from a Service UID (and the Service is found in a cluster read), else unknown. Pure.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;

use super::claimed::{claimed, Claimed};
use super::survey::{proposed, SurveyedCluster};
use super::{alive, ccm_base, is_cks_api_rule, split_rule_name, CCM};
use crate::api::{KubernetesCluster, LoadBalancerRule, Tag};
use crate::live::{Inventory, Live};
use crate::{OWNER_TAG, PROVIDER};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::{address_name, Discovered, Maker, ServiceRef, Unmanaged};
use skyplan_core::provider::Target;
use skyplan_kubernetes::service_write::OWNER_ANNOTATION;

pub fn discover(targets: &[Target], live: &Live) -> Discovered {
    let claimed = claimed(targets, live);
    let inventory = &live.inventory;
    let mut unmanaged: Vec<Unmanaged> = inventory
        .clusters
        .iter()
        .filter(|c| alive(c) && !claimed.clusters.contains_key(&c.id))
        .map(|c| cluster_object(c, inventory, &claimed))
        .collect();
    let mut by_ip: BTreeMap<&str, Vec<&LoadBalancerRule>> = BTreeMap::new();
    for rule in &inventory.rules {
        let taken = claimed.rules.contains(&rule.id) || claimed.ips.contains(&rule.publicipid);
        if !taken && !is_cks_api_rule(rule, inventory) {
            by_ip.entry(&rule.publicipid).or_default().push(rule);
        }
    }
    for (ip, mut rules) in by_ip {
        rules.sort_by_key(|r| (r.publicport, r.name.clone()));
        unmanaged.push(rules_object(ip, &rules, live, &claimed));
    }
    Discovered {
        unmanaged,
        bound: claimed.bound,
    }
}

/// The address a `skyplan.address` tag names, when no target has it.
fn lost_owner<'a>(
    tags: impl IntoIterator<Item = (&'a str, &'a str)>,
    claimed: &Claimed,
) -> Option<Address> {
    tags.into_iter()
        .filter(|(key, _)| *key == OWNER_TAG)
        .filter(|(_, value)| !claimed.addresses.contains(*value))
        .find_map(|(_, value)| value.parse().ok())
}

fn tag_pairs(tags: &[Tag]) -> impl Iterator<Item = (&str, &str)> {
    tags.iter().map(|t| (t.key.as_str(), t.value.as_str()))
}

fn cluster_object(
    cluster: &KubernetesCluster,
    inventory: &Inventory,
    claimed: &Claimed,
) -> Unmanaged {
    let owner = lost_owner(tag_pairs(&cluster.tags), claimed);
    let address = cluster_address(None, claimed, cluster);
    let version = inventory
        .version_by_id(&cluster.kubernetesversionid)
        .map_or(cluster.kubernetesversionname.as_str(), |v| {
            v.semanticversion.as_str()
        });
    let offering = inventory
        .offering_by_id(&cluster.serviceofferingid)
        .map_or(cluster.serviceofferingname.as_str(), |o| o.name.as_str());
    let zone = inventory
        .zone(&cluster.zoneid)
        .map_or(cluster.zonename.as_str(), |z| z.name.as_str());
    let mut summary = format!(
        "{}, zone {zone}, Kubernetes {version}, {} control + {} workers ({offering})",
        cluster.state, cluster.controlnodes, cluster.size
    );
    if let Some(network) = network_name(inventory, cluster.networkid.as_deref()) {
        summary.push_str(&format!(", network {network}"));
    }
    Unmanaged {
        provider: PROVIDER.to_string(),
        kind: ResourceKind::Cluster,
        id: cluster.id.clone(),
        name: cluster.name.clone(),
        made_by: owner.map_or(Maker::Unknown, Maker::Skyplan),
        // Not in a cluster: it is one.
        cluster: None,
        service: None,
        address,
        summary,
        importable: true,
        why_not_importable: None,
    }
}

fn network_name(inventory: &Inventory, id: Option<&str>) -> Option<String> {
    let id = id?;
    Some(
        inventory
            .network(id)
            .map_or(id, |n| n.name.as_str())
            .to_string(),
    )
}

/// The address of a live CKS cluster: the target's that manages it, else the one a survey
/// found it under (`live`), else the one its lost `skyplan.address` names, else its name.
pub fn cluster_address(
    live: Option<&Live>,
    claimed: &Claimed,
    cluster: &KubernetesCluster,
) -> Address {
    let surveyed = || live?.surveyed.cks(&cluster.id).map(|c| c.address.clone());
    let lost = || {
        let owner = lost_owner(tag_pairs(&cluster.tags), claimed)?;
        Some(Address::new(ResourceKind::Cluster, owner.name))
    };
    claimed
        .clusters
        .get(&cluster.id)
        .cloned()
        .or_else(surveyed)
        .or_else(lost)
        .unwrap_or_else(|| proposed(cluster))
}

/// The CKS clusters whose network holds the rules.
fn clusters_of<'a>(
    inventory: &'a Inventory,
    rules: &[&LoadBalancerRule],
) -> Vec<&'a KubernetesCluster> {
    inventory
        .clusters
        .iter()
        .filter(|c| alive(c) && c.networkid.is_some())
        .filter(|c| rules.iter().any(|r| r.networkid == c.networkid))
        .collect()
}

/// The CKS cluster the rules serve, as far as the listings tell without reading their
/// members: the one cluster whose VMs are all the VMs of the rules' network (a network CKS
/// made for it, or one it has to itself).
fn serving<'a>(
    inventory: &'a Inventory,
    rules: &[&LoadBalancerRule],
) -> Option<&'a KubernetesCluster> {
    let clusters = clusters_of(inventory, rules);
    let [cluster] = clusters.as_slice() else {
        return None;
    };
    let network = cluster.networkid.as_deref()?;
    let own = |id: &str| cluster.virtualmachines.iter().any(|vm| vm.id == id);
    let alone = inventory
        .vms
        .iter()
        .filter(|vm| vm.nic.iter().any(|nic| nic.networkid == network))
        .all(|vm| own(&vm.id));
    alone.then_some(*cluster)
}

/// The rules' Service, when the CCM made every one of them for the same Service: its CCM base
/// name, and the Service with its cluster if a survey found it.
pub fn ccm_service<'a>(
    live: &'a Live,
    rules: &[&LoadBalancerRule],
) -> Option<(String, Option<(&'a SurveyedCluster, &'a Service)>)> {
    let mut bases: Vec<&str> = rules
        .iter()
        .map(|r| ccm_base(&r.name))
        .collect::<Option<_>>()?;
    bases.dedup();
    let [base] = bases.as_slice() else {
        return None;
    };
    Some((base.to_string(), live.surveyed.service(base)))
}

fn service_ref(cluster: &SurveyedCluster, service: &Service) -> ServiceRef {
    let meta = &service.metadata;
    ServiceRef {
        cluster: cluster.address.clone(),
        service: format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or("default"),
            meta.name.as_deref().unwrap_or_default()
        ),
    }
}

fn rules_object(
    ip_id: &str,
    rules: &[&LoadBalancerRule],
    live: &Live,
    claimed: &Claimed,
) -> Unmanaged {
    let inventory = &live.inventory;
    let ip = inventory.public_ip(ip_id);
    let ip_address = ip.map_or(rules[0].publicip.as_str(), |ip| ip.ipaddress.as_str());
    let ccm = ccm_service(live, rules);
    let served = ccm.as_ref().and_then(|(_, found)| *found);
    let mut tags: Vec<(&str, &str)> = ip
        .map(|ip| tag_pairs(&ip.tags).collect())
        .unwrap_or_default();
    tags.extend(rules.iter().flat_map(|r| tag_pairs(&r.tags)));
    if let Some((_, service)) = served {
        let annotations = service.metadata.annotations.iter().flatten();
        tags.extend(annotations.map(|(k, v)| {
            let key = if k == OWNER_ANNOTATION {
                OWNER_TAG
            } else {
                k.as_str()
            };
            (key, v.as_str())
        }));
    }
    let owner = lost_owner(tags, claimed);
    let made_by = match (&owner, &ccm) {
        (Some(owner), _) => Maker::Skyplan(owner.clone()),
        (None, Some(_)) => Maker::Controller(CCM.to_string()),
        (None, None) => Maker::Unknown,
    };
    let mut bases: Vec<&str> = rules
        .iter()
        .filter_map(|r| split_rule_name(&r.name).map(|(base, _, _)| base))
        .collect();
    bases.dedup();
    let common_base = match bases.as_slice() {
        [one] if rules.iter().all(|r| split_rule_name(&r.name).is_some()) => Some(*one),
        _ => None,
    };
    let service = served.map(|(cluster, service)| service_ref(cluster, service));
    let proposed_name = match (&owner, served, common_base) {
        (Some(owner), _, _) => owner.name.clone(),
        (None, Some((_, service)), _) => service.metadata.name.clone().unwrap_or_default(),
        (None, None, Some(base)) if ccm.is_none() => base.to_string(),
        _ => ip_address.to_string(),
    };
    let cluster = match served {
        Some((cluster, _)) => Some(cluster.address.clone()),
        None => serving(inventory, rules).map(|c| cluster_address(Some(live), claimed, c)),
    };
    let mut summary = format!("{ip_address}: {}", ports(rules));
    if let Some(network) = network_name(inventory, rules[0].networkid.as_deref()) {
        summary.push_str(&format!(", network {network}"));
    }
    // The cluster and the Service are shown beside the summary.
    let mut why_not = None;
    if ccm.is_some() && service.is_none() {
        match unread(live, rules) {
            Some(why) => {
                let why = format!(
                    "made for a Service skyplan cannot read ({why}): connect its cluster to adopt it"
                );
                summary.push_str(&format!("; {why}"));
                why_not = Some(why);
            }
            None => summary.push_str("; its Service no longer exists"),
        }
    }
    Unmanaged {
        provider: PROVIDER.to_string(),
        kind: ResourceKind::LoadBalancer,
        id: ip.map_or(ip_id, |ip| ip.id.as_str()).to_string(),
        name: common_base.unwrap_or(ip_address).to_string(),
        made_by,
        cluster,
        service,
        address: Address::new(ResourceKind::LoadBalancer, address_name(&proposed_name)),
        summary,
        importable: why_not.is_none(),
        why_not_importable: why_not,
    }
}

/// Why the Service the CCM made `rules` for may exist unseen: a cluster that could hold it
/// (a CKS cluster in the rules' network) was not read, or there is none skyplan reaches.
/// `None` when every such cluster was read: the Service is gone and the rules are left over,
/// with nothing to fight skyplan for them.
pub fn unread(live: &Live, rules: &[&LoadBalancerRule]) -> Option<String> {
    let clusters = clusters_of(&live.inventory, rules);
    let unread: Vec<String> = clusters
        .iter()
        .filter_map(|c| match live.surveyed.cks(&c.id).map(|s| &s.services) {
            Some(Ok(_)) => None,
            Some(Err(why)) => Some(why.clone()),
            None => Some(format!("CKS cluster {} was not read", c.name)),
        })
        .collect();
    match (clusters.is_empty(), unread.is_empty()) {
        (true, _) => Some("no cluster skyplan reaches holds it".to_string()),
        (false, false) => Some(unread.join("; ")),
        (false, true) => None,
    }
}

/// "tcp 80→30080, udp 53→30053".
fn ports(rules: &[&LoadBalancerRule]) -> String {
    rules
        .iter()
        .map(|r| format!("{} {}→{}", r.protocol, r.publicport, r.privateport))
        .collect::<Vec<_>>()
        .join(", ")
}
