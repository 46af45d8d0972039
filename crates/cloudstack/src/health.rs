//! The health a CloudStack resource reports once a change to it is done, for the rollout's
//! health gate: one read, a few requests, no waiting (the gate polls).
//!
//! - A load balancer: each of its LB rules (the IDs its state entry recorded: apply's in direct
//!   mode, the ones the CCM made as apply found them in controller mode) `Active`, with every
//!   VM `listLoadBalancerRuleInstances` shows for it `Running`. The rules are read in one
//!   `listLoadBalancerRules` by public IP when the entry knows it, else one by rule ID each.
//! - A CKS cluster: one `listKubernetesClusters` by ID; the cluster in the state its spec asks
//!   for and, when that is `Running`, each of its VMs `Running` (CKS lists them with the
//!   cluster, so they cost nothing more).
//!
//! Each problem is written the way the console shows it, e.g. `rule web-tcp-80
//! (203.0.113.10:80): state Add` or `VM node-2 of rule web-tcp-80: Stopped`. A resource the
//! change deleted (no entry) is healthy.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::api::{KubernetesCluster, LoadBalancerRule, VirtualMachine};
use super::client::{Error, Params};
use super::lb::execute::Api;
use super::lb::found::LbIds;
use crate::spec::{CloudstackClusterSpec, ClusterRunState};
use skyplan_core::model::ResourceKind;
use skyplan_core::plan::ResourceChange;
use skyplan_core::provider::{ErrorKind, Health, ProviderError};
use skyplan_core::state::ResourceState;

const RUNNING: &str = "Running";
const ACTIVE: &str = "Active";

/// The list commands read, each with the key its items come under.
type Listing = (&'static str, &'static str);
const RULES: Listing = ("listLoadBalancerRules", "loadbalancerrule");
const RULE_VMS: Listing = ("listLoadBalancerRuleInstances", "loadbalancerruleinstance");
const CLUSTERS: Listing = ("listKubernetesClusters", "kubernetescluster");

/// One health read of the resource `change` changed, as `entry` (apply's) names it.
pub(crate) async fn health<A: Api>(
    client: &A,
    change: &ResourceChange,
    entry: Option<&ResourceState>,
) -> Result<Health, ProviderError> {
    let Some(entry) = entry else {
        return Ok(Health::Healthy);
    };
    let address = change.address.to_string();
    let problems = match change.address.kind {
        ResourceKind::LoadBalancer => load_balancer(client, &address, entry).await?,
        ResourceKind::Cluster => cluster(client, &address, entry).await?,
        ResourceKind::Nodes => {
            let message = "node policies are not a CloudStack resource";
            return Err(ProviderError::new(address, message));
        }
    };
    Ok(Health::from_problems(problems))
}

async fn load_balancer<A: Api>(
    client: &A,
    address: &str,
    entry: &ResourceState,
) -> Result<Vec<String>, ProviderError> {
    // Not `LbIds::from_state`: a controller-mode entry's `id` is a rule's, not an IP's.
    let ids: LbIds = serde_json::from_value(entry.ids.clone()).unwrap_or_default();
    let listed = read_rules(client, address, &ids).await?;
    let by_id: BTreeMap<&str, &LoadBalancerRule> =
        listed.iter().map(|rule| (rule.id.as_str(), rule)).collect();
    // Only this load balancer's rules: others on the same IP are none of its business.
    let found: Vec<&LoadBalancerRule> = (ids.rules.values())
        .filter_map(|id| by_id.get(id.as_str()).copied())
        .collect();
    let members = read_members(client, address, &found).await?;
    let mut problems = Vec::new();
    for (name, id) in &ids.rules {
        let rule = by_id.get(id.as_str()).copied();
        let vms = members.get(id.as_str()).map_or(&[][..], Vec::as_slice);
        problems.extend(rule_problems(name, rule, vms));
    }
    Ok(problems)
}

/// The rules on the load balancer's public IP in one read when the entry knows it (others'
/// rules on it included), else each rule the entry names by its ID.
async fn read_rules<A: Api>(
    client: &A,
    address: &str,
    ids: &LbIds,
) -> Result<Vec<LoadBalancerRule>, ProviderError> {
    if let Some(ip) = &ids.public_ip {
        return list(client, address, RULES, param("publicipid", ip)).await;
    }
    let reads = (ids.rules.values())
        .map(|id| list::<_, LoadBalancerRule>(client, address, RULES, param("id", id)));
    let found = futures::future::try_join_all(reads).await?;
    Ok(found.into_iter().flatten().collect())
}

/// The VMs of each rule, by rule ID: one `listLoadBalancerRuleInstances` each, at once.
async fn read_members<'r, A: Api>(
    client: &A,
    address: &str,
    rules: &[&'r LoadBalancerRule],
) -> Result<BTreeMap<&'r str, Vec<VirtualMachine>>, ProviderError> {
    let reads = rules.iter().map(|rule| async move {
        let vms: Vec<VirtualMachine> =
            list(client, address, RULE_VMS, param("id", &rule.id)).await?;
        Ok::<_, ProviderError>((rule.id.as_str(), vms))
    });
    Ok(futures::future::try_join_all(reads)
        .await?
        .into_iter()
        .collect())
}

/// What is wrong with the rule `name` (`None`: not found) and its member VMs.
pub(crate) fn rule_problems(
    name: &str,
    rule: Option<&LoadBalancerRule>,
    vms: &[VirtualMachine],
) -> Vec<String> {
    let Some(rule) = rule else {
        return vec![format!("rule {name}: not found")];
    };
    let mut problems = Vec::new();
    if rule.state != ACTIVE {
        let (ip, port) = (&rule.publicip, rule.publicport);
        problems.push(format!("rule {name} ({ip}:{port}): state {}", rule.state));
    }
    for vm in vms.iter().filter(|vm| vm.state != RUNNING) {
        problems.push(format!("VM {} of rule {name}: {}", vm.name, vm.state));
    }
    problems
}

async fn cluster<A: Api>(
    client: &A,
    address: &str,
    entry: &ResourceState,
) -> Result<Vec<String>, ProviderError> {
    let params = param("id", &entry.id);
    let found: Vec<KubernetesCluster> = list(client, address, CLUSTERS, params).await?;
    let live = found.iter().find(|c| c.id == entry.id);
    // The spec apply wrote; an unreadable one (an older format) is taken to want it running.
    let wanted = serde_json::from_value::<CloudstackClusterSpec>(entry.attributes.clone())
        .map_or(ClusterRunState::Running, |spec| spec.state);
    Ok(cluster_problems(&entry.id, live, wanted))
}

/// What is wrong with the cluster (`None`: not found) given the state its spec asks for.
pub(crate) fn cluster_problems(
    id: &str,
    live: Option<&KubernetesCluster>,
    wanted: ClusterRunState,
) -> Vec<String> {
    let Some(live) = live.filter(|c| c.state != "Destroyed") else {
        return vec![format!("cluster {id}: not found")];
    };
    let wanted_state = match wanted {
        ClusterRunState::Running => RUNNING,
        ClusterRunState::Stopped => "Stopped",
    };
    let name = &live.name;
    let mut problems = Vec::new();
    if live.state != wanted_state {
        problems.push(format!("cluster {name}: state {}", live.state));
    }
    // A cluster asked to be stopped has its VMs stopped: only a running one's are checked.
    if wanted == ClusterRunState::Running {
        let down = live.virtualmachines.iter().filter(|vm| vm.state != RUNNING);
        problems.extend(down.map(|vm| format!("VM {} of cluster {name}: {}", vm.name, vm.state)));
    }
    problems
}

fn param(key: &str, value: &str) -> Params {
    vec![(key.to_owned(), value.to_owned())]
}

/// A list call whose items are read as `T`; a failure is reported about `address`.
async fn list<A: Api, T: DeserializeOwned>(
    client: &A,
    address: &str,
    (command, key): Listing,
    params: Params,
) -> Result<Vec<T>, ProviderError> {
    let items: Vec<Value> = client
        .list(command, &params, key)
        .await
        .map_err(|e: Error| e.for_address(address))?;
    items
        .into_iter()
        .map(|item| {
            serde_json::from_value(item).map_err(|e| {
                ProviderError::new(address, format!("{command}: unexpected answer: {e}"))
                    .kind(ErrorKind::Api)
                    .caused_by(e)
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "health_tests.rs"]
mod tests;
