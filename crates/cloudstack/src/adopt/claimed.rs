//! What the targets manage, found the way their plans find it: a cluster by the state's ID or
//! its name; a direct-mode load balancer's public IP and rules by the state's IDs, the address
//! the config names, the ownership tag and its rule names (`lb::found::find`); a
//! controller-mode load balancer's rules by the base name of the Service it is bound to, and
//! those the state recorded. Objects to adopt (targets without a resource) claim nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::is_adopting;
use crate::cluster::find_live;
use crate::lb::ccm::predict::live_rules;
use crate::lb::ccm::views::is_ccm;
use crate::lb::found::{self, LbIds};
use crate::live::Live;
use crate::spec::{CloudstackClusterSpec, CloudstackLoadBalancerSpec};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::ServiceRef;
use skyplan_core::provider::Target;

#[derive(Debug, Default)]
pub struct Claimed {
    /// Live cluster IDs, with the address of the target that manages each.
    pub clusters: BTreeMap<String, Address>,
    /// Public IP IDs.
    pub ips: BTreeSet<String>,
    /// LB rule IDs.
    pub rules: BTreeSet<String>,
    /// The Services controller-mode load balancers are bound to.
    pub bound: Vec<ServiceRef>,
    /// Every address a target has: a `skyplan.address` tag naming one of them is not a lost
    /// object's.
    pub addresses: BTreeSet<String>,
}

fn parsed<T: serde::de::DeserializeOwned>(target: &Target) -> Option<T> {
    let prior = target.prior?;
    serde_json::from_value(prior.attributes.clone()).ok()
}

pub fn claimed(targets: &[Target], live: &Live) -> Claimed {
    let mut claimed = Claimed::default();
    for target in targets.iter().filter(|t| !is_adopting(t)) {
        claimed.addresses.insert(target.address.to_string());
        match target.address.kind {
            ResourceKind::Cluster => cluster(target, live, &mut claimed),
            ResourceKind::LoadBalancer => load_balancer(target, live, &mut claimed),
            ResourceKind::Nodes => {}
        }
    }
    claimed
}

fn cluster(target: &Target, live: &Live, claimed: &mut Claimed) {
    let desired = target
        .resource
        .and_then(|r| r.spec.get::<CloudstackClusterSpec>());
    let applied: Option<CloudstackClusterSpec> = parsed(target);
    let name = desired
        .map(|s| s.name.clone())
        .or(applied.map(|s| s.name))
        .unwrap_or_else(|| target.address.name.clone());
    let id = target.prior.map(|p| p.id.as_str());
    if let Some(found) = find_live(&live.inventory, id, Some(&name)) {
        claimed
            .clusters
            .insert(found.id.clone(), target.address.clone());
    }
}

fn load_balancer(target: &Target, live: &Live, claimed: &mut Claimed) {
    let desired = target
        .resource
        .and_then(|r| r.spec.get::<CloudstackLoadBalancerSpec>());
    let applied: Option<CloudstackLoadBalancerSpec> = parsed(target);
    let inventory = &live.inventory;
    let ccm = desired.or(applied.as_ref()).filter(|s| is_ccm(s));
    if let Some(spec) = ccm {
        if let Some(binding) = &spec.binding {
            claimed.bound.push(ServiceRef {
                cluster: binding.cluster.clone(),
                service: binding.service_ref(),
            });
        }
        let mut rules: Vec<&crate::api::LoadBalancerRule> = vec![];
        if let Some(base) = live.views.base_of(target.address) {
            rules.extend(live_rules(inventory, &base).into_values());
        }
        // What the last apply recorded: `{"rules": {name: id}}`.
        let recorded = target
            .prior
            .and_then(|p| p.ids.get("rules"))
            .and_then(|r| r.as_object())
            .map(|r| r.values().filter_map(|id| id.as_str()).collect::<Vec<_>>())
            .unwrap_or_default();
        rules.extend(
            inventory
                .rules
                .iter()
                .filter(|r| recorded.contains(&r.id.as_str())),
        );
        for rule in rules {
            claimed.rules.insert(rule.id.clone());
            claimed.ips.insert(rule.publicipid.clone());
        }
        return;
    }
    let owner = target.address.to_string();
    let ids = target.prior.map(LbIds::from_state);
    let bases: Vec<&str> = desired
        .into_iter()
        .chain(applied.as_ref())
        .map(|s| s.name.as_str())
        .collect();
    let wanted = desired.map(|s| &s.public_ip);
    match found::find(inventory, &owner, &bases, wanted, ids.as_ref()) {
        Ok(found) => {
            if let Some(ip) = found.ip {
                claimed.ips.insert(ip.id.clone());
            }
            claimed
                .rules
                .extend(found.rules.iter().map(|r| r.id.clone()));
        }
        // Several IPs carry its tag (a plan error of its own): each is its.
        Err(_) => {
            let tagged = inventory
                .public_ips
                .iter()
                .filter(|ip| found::owned_by(&ip.tags, &owner));
            claimed.ips.extend(tagged.map(|ip| ip.id.clone()));
        }
    }
}
