//! Refresh: one paged list per collection, all at once, plus the members of the LB rules on the
//! public IPs of the load balancers asked about (CloudStack has no bulk call for rule
//! membership: one `listLoadBalancerRuleInstances` per such rule, a bounded number at a time).

use std::collections::BTreeSet;

use futures::{StreamExt, TryFutureExt};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::api::{Capabilities, VirtualMachine};
use super::client::{CloudstackClient, Params};
use super::live::{Inventory, DEFAULT_MAX_CLUSTER_SIZE};
use super::PROVIDER;
use skyplan_core::provider::{ErrorKind, ProviderError};

/// How many rule-membership reads run at once.
const MEMBER_READS_AT_ONCE: usize = 16;

/// The account setting that caps control nodes + workers.
const MAX_SIZE_SETTING: &str = "cloud.kubernetes.cluster.max.size";

async fn list<T: DeserializeOwned>(
    client: &CloudstackClient,
    command: &str,
    item_key: &str,
) -> Result<Vec<T>, ProviderError> {
    list_with(client, command, Vec::new(), item_key).await
}

async fn list_with<T: DeserializeOwned>(
    client: &CloudstackClient,
    command: &str,
    params: Params,
    item_key: &str,
) -> Result<Vec<T>, ProviderError> {
    let items = client
        .list(command, &params, item_key)
        .await
        .map_err(|e| e.for_address(PROVIDER))?;
    items
        .into_iter()
        .map(|item| {
            serde_json::from_value(item).map_err(|e| {
                let message = format!("{command}: unexpected answer: {e}");
                ProviderError::new(PROVIDER, message)
                    .kind(ErrorKind::Api)
                    .caused_by(e)
            })
        })
        .collect()
}

/// Reads the whole account; `rule_ips` are the public IPs whose rules' members are read.
pub async fn inventory(
    client: &CloudstackClient,
    rule_ips: impl Fn(&Inventory) -> BTreeSet<String>,
) -> Result<Inventory, ProviderError> {
    let (capabilities, max_cluster_size) =
        futures::try_join!(capabilities(client), max_cluster_size(client))?;
    let (zones, offerings, versions, networks, keypairs, clusters) = futures::try_join!(
        list(client, "listZones", "zone"),
        list(client, "listServiceOfferings", "serviceoffering"),
        list(
            client,
            "listKubernetesSupportedVersions",
            "kubernetessupportedversion"
        ),
        list(client, "listNetworks", "network"),
        list(client, "listSSHKeyPairs", "sshkeypair"),
        list(client, "listKubernetesClusters", "kubernetescluster"),
    )?;
    let (vms, public_ips, rules, firewall_rules) = futures::try_join!(
        list(client, "listVirtualMachines", "virtualmachine"),
        list(client, "listPublicIpAddresses", "publicipaddress"),
        list(client, "listLoadBalancerRules", "loadbalancerrule"),
        list(client, "listFirewallRules", "firewallrule"),
    )?;
    let mut inventory = Inventory {
        capabilities,
        max_cluster_size,
        zones,
        offerings,
        versions,
        networks,
        keypairs,
        clusters,
        vms,
        public_ips,
        rules,
        firewall_rules,
        ..Inventory::default()
    };
    let ips = rule_ips(&inventory);
    let rule_ids: Vec<String> = inventory
        .rules
        .iter()
        .filter(|rule| ips.contains(&rule.publicipid))
        .map(|rule| rule.id.clone())
        .collect();
    inventory.rule_members = futures::stream::iter(rule_ids)
        .map(|id| rule_members(client, id))
        .buffer_unordered(MEMBER_READS_AT_ONCE)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    Ok(inventory)
}

async fn rule_members(
    client: &CloudstackClient,
    id: String,
) -> Result<(String, Vec<String>), ProviderError> {
    let params = vec![("id".to_string(), id.clone())];
    let vms: Vec<VirtualMachine> = list_with(
        client,
        "listLoadBalancerRuleInstances",
        params,
        "loadbalancerruleinstance",
    )
    .await?;
    Ok((id, vms.into_iter().map(|vm| vm.id).collect()))
}

/// The server version (`listCapabilities`, which any account may call).
async fn capabilities(client: &CloudstackClient) -> Result<Option<Capabilities>, ProviderError> {
    let answer = client
        .call("listCapabilities", &Vec::new())
        .await
        .map_err(|e| e.for_address(PROVIDER))?;
    Ok(answer
        .get("capability")
        .cloned()
        .and_then(|c| serde_json::from_value(c).ok()))
}

/// `cloud.kubernetes.cluster.max.size` for the account. Only some accounts may read settings;
/// the others get the server's default, which the plan's reasons then name.
async fn max_cluster_size(client: &CloudstackClient) -> Result<u32, ProviderError> {
    let params = vec![("name".to_string(), MAX_SIZE_SETTING.to_string())];
    let settings = client
        .list("listConfigurations", &params, "configuration")
        .or_else(|e| async move {
            match e.code() {
                Some(401) | Some(432) | Some(531) => Ok(Vec::new()),
                _ => Err(e),
            }
        })
        .await
        .map_err(|e| e.for_address(PROVIDER))?;
    Ok(settings
        .iter()
        .find(|s| s.get("name").and_then(Value::as_str) == Some(MAX_SIZE_SETTING))
        .and_then(|s| s.get("value"))
        .and_then(|v| {
            v.as_str()
                .and_then(|t| t.parse().ok())
                .or(v.as_u64().map(|n| n as u32))
        })
        .unwrap_or(DEFAULT_MAX_CLUSTER_SIZE))
}
