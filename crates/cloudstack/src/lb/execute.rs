//! Performing a load balancer's operations: one mutating API call per `LbOp` (all of them are
//! async commands, run with `run_job`), each recorded in the journal before and after. Rules
//! are named in the ops and resolved to IDs here; a create whose answer was lost is not
//! repeated blindly: what it may have created is looked for first (a rule by name on the IP, a
//! firewall rule by port on the IP, an IP by address or as the one new IP of the network) and
//! adopted.

use std::collections::BTreeSet;
use std::future::Future;

use serde_json::Value;

use super::super::client::{CloudstackClient, Error, Params};
use super::super::live::ApplyContext;
use super::super::{OWNER_TAG, PROVIDER};
use super::found::LbIds;
use super::ops::{LbOp, NetworkRef, NewRule};
use super::request::{
    create_rule_params, created_object, params, port_of, tag_params, text, update_rule_params,
    vm_ids,
};
use crate::ops::Op;
use crate::spec::{CloudstackLoadBalancerSpec, PublicIp};
use skyplan_core::plan::{Record, ResourceChange};
use skyplan_core::provider::ProviderError;
use skyplan_core::state::journal::{Journal, Phase};
use skyplan_core::state::ResourceState;

/// The client calls the executor makes, so that a fake cloud can stand in for it in tests.
pub(crate) trait Api: Sync {
    fn list(
        &self,
        command: &str,
        params: &Params,
        item_key: &str,
    ) -> impl Future<Output = Result<Vec<Value>, Error>> + Send;

    fn run_job(
        &self,
        command: &str,
        params: &Params,
    ) -> impl Future<Output = Result<Value, Error>> + Send;
}

impl Api for CloudstackClient {
    fn list(
        &self,
        command: &str,
        params: &Params,
        item_key: &str,
    ) -> impl Future<Output = Result<Vec<Value>, Error>> + Send {
        CloudstackClient::list(self, command, params, item_key)
    }

    fn run_job(
        &self,
        command: &str,
        params: &Params,
    ) -> impl Future<Output = Result<Value, Error>> + Send {
        CloudstackClient::run_job(self, command, params)
    }
}

/// An object kind skyplan tags, with the list command that shows its tags.
struct Taggable {
    resource_type: &'static str,
    list: &'static str,
    item_key: &'static str,
}

const TAG_IP: &Taggable = &Taggable {
    resource_type: "PublicIpAddress",
    list: "listPublicIpAddresses",
    item_key: "publicipaddress",
};

const TAG_RULE: &Taggable = &Taggable {
    resource_type: "LoadBalancer",
    list: "listLoadBalancerRules",
    item_key: "loadbalancerrule",
};

/// How often a create whose answer was lost is looked for and, when absent, sent again.
const CREATE_ATTEMPTS: u32 = 3;

/// Runs the change's operations in order and returns the new state entry.
pub async fn apply(
    ctx: &ApplyContext<'_>,
    change: &ResourceChange,
    prior: Option<&ResourceState>,
) -> Result<Option<ResourceState>, ProviderError> {
    apply_with(ctx.client, ctx.journal, change, prior).await
}

pub(super) async fn apply_with<A: Api>(
    client: &A,
    journal: &Journal,
    change: &ResourceChange,
    prior: Option<&ResourceState>,
) -> Result<Option<ResourceState>, ProviderError> {
    let address = &change.address;
    let fail = |message: String| ProviderError::new(address, message);
    let spec: Option<CloudstackLoadBalancerSpec> = change
        .record
        .as_ref()
        .and_then(|record| record.parse().ok());
    let owned: Vec<LbOp> = change
        .operations
        .iter()
        .map(|operation| match Op::of(operation) {
            Some(Op::Lb(op)) => Ok(op),
            _ => Err(fail(
                "a CloudStack load balancer with another kind's operation".into(),
            )),
        })
        .collect::<Result<_, _>>()?;
    let mut run = Run {
        client,
        owner: address.to_string(),
        ids: prior.map(LbIds::from_state).unwrap_or_default(),
    };
    let ops: Vec<&LbOp> = owned.iter().collect();
    run.locate(spec.as_ref(), &ops).await.map_err(fail)?;
    let journal_error = |e: skyplan_core::state::StateError| ProviderError::new(address, e);
    for op in ops {
        let text = op.to_string();
        tracing::info!(%address, "{text}");
        journal
            .record(address, Phase::Intent, &text, None, None)
            .map_err(journal_error)?;
        let result = run.execute(op).await;
        journal.checkpoint("call");
        if let Err(e) = result {
            journal
                .record(address, Phase::Failed, &text, None, Some(e.clone()))
                .map_err(journal_error)?;
            return Err(fail(format!("{text}: {e}")));
        }
        let recorded = serde_json::to_value(&run.ids).expect("ids serialize");
        journal
            .record(address, Phase::Done, &text, Some(recorded), None)
            .map_err(journal_error)?;
    }
    state_entry(change, spec.as_ref(), run.ids).map_err(fail)
}

/// The new state entry: the public IP's ID, the IDs of the config's rules, the applied spec.
fn state_entry(
    change: &ResourceChange,
    spec: Option<&CloudstackLoadBalancerSpec>,
    mut ids: LbIds,
) -> Result<Option<ResourceState>, String> {
    let (Some(record), Some(spec)) = (change.record.as_ref().map(Record::to_value), spec) else {
        return Ok(None);
    };
    let names: BTreeSet<String> = spec.ports.iter().map(|p| spec.rule_name(p)).collect();
    ids.rules.retain(|name, _| names.contains(name));
    let id = ids
        .public_ip
        .clone()
        .ok_or("no public IP after apply: the load balancer has nowhere to live")?;
    Ok(Some(ResourceState {
        provider: PROVIDER.to_string(),
        id,
        ids: serde_json::to_value(&ids).expect("ids serialize"),
        attributes: record,
        depends_on: vec![],
    }))
}

struct Run<'a, A> {
    client: &'a A,
    owner: String,
    ids: LbIds,
}

impl<A: Api> Run<'_, A> {
    /// Finds the public IP when the state does not name it (the state was lost), and the IDs
    /// of the existing rules the ops name.
    async fn locate(
        &mut self,
        spec: Option<&CloudstackLoadBalancerSpec>,
        ops: &[&LbOp],
    ) -> Result<(), String> {
        if self.ids.public_ip.is_none() {
            self.find_ip(spec).await.map_err(|e| e.to_string())?;
        }
        let Some(ip) = self.ids.public_ip.clone() else {
            return Ok(());
        };
        let named = existing_rules(ops);
        if named.is_empty() {
            // Nothing to resolve (a create: the recorded IP may even be gone).
            return Ok(());
        }
        let rules = self
            .client
            .list(
                "listLoadBalancerRules",
                &params(&[("publicipid", &ip)]),
                "loadbalancerrule",
            )
            .await
            .map_err(|e| format!("listing the rules on the public IP: {e}"))?;
        // The live IDs win over the recorded ones: a rule recreated by hand has a new ID, and
        // one deleted by hand has none.
        for name in &named {
            self.ids.rules.remove(*name);
        }
        for rule in rules {
            let name = text(&rule, "name");
            if named.contains(name.as_str()) {
                self.ids.rules.insert(name, text(&rule, "id"));
            }
        }
        Ok(())
    }

    async fn find_ip(&mut self, spec: Option<&CloudstackLoadBalancerSpec>) -> Result<(), Error> {
        let by_address = match spec.map(|s| &s.public_ip) {
            Some(PublicIp::Address(address)) => {
                self.list_ips(&[("ipaddress", address.as_str()), ("allocatedonly", "false")])
                    .await?
            }
            _ => vec![],
        };
        let ip = match by_address.into_iter().next() {
            Some(ip) => Some(ip),
            None => {
                let tagged = self
                    .list_ips(&[
                        ("tags[0].key", OWNER_TAG),
                        ("tags[0].value", self.owner.as_str()),
                    ])
                    .await?;
                self.ids.ip_associated_by_skyplan |= !tagged.is_empty();
                tagged.into_iter().next()
            }
        };
        if let Some(ip) = ip {
            let owner = &self.owner;
            let tagged = ip["tags"].as_array().is_some_and(|tags| {
                tags.iter()
                    .any(|t| text(t, "key") == OWNER_TAG && text(t, "value") == *owner)
            });
            self.ids.ip_associated_by_skyplan |= tagged;
            self.ids.public_ip = Some(text(&ip, "id"));
            self.ids.address = Some(text(&ip, "ipaddress"));
        }
        Ok(())
    }

    async fn list_ips(&self, filter: &[(&str, &str)]) -> Result<Vec<Value>, Error> {
        self.client
            .list("listPublicIpAddresses", &params(filter), "publicipaddress")
            .await
    }

    fn public_ip(&self) -> Result<String, String> {
        self.ids
            .public_ip
            .clone()
            .ok_or_else(|| "the load balancer has no public IP yet".to_string())
    }

    fn rule_id(&self, rule: &str) -> Result<String, String> {
        self.ids
            .rules
            .get(rule)
            .cloned()
            .ok_or_else(|| format!("LB rule {rule} is not on the public IP"))
    }

    async fn network_id(&mut self, network: &NetworkRef) -> Result<String, String> {
        let id = match network {
            NetworkRef::Known { id, .. } => id.clone(),
            NetworkRef::OfCluster { cluster } => {
                let found = self.cluster(cluster).await?;
                let id = text(&found, "networkid");
                if id.is_empty() {
                    return Err(format!("cluster {cluster} has no network"));
                }
                id
            }
        };
        self.ids.network = Some(id.clone());
        Ok(id)
    }

    async fn cluster(&self, name: &str) -> Result<Value, String> {
        let clusters = self
            .client
            .list(
                "listKubernetesClusters",
                &params(&[("name", name)]),
                "kubernetescluster",
            )
            .await
            .map_err(|e| format!("listing cluster {name}: {e}"))?;
        clusters
            .into_iter()
            .find(|c| text(c, "name") == name)
            .ok_or_else(|| format!("cluster {name} does not exist (was it applied?)"))
    }

    async fn job(&self, command: &str, params: &Params) -> Result<Value, String> {
        self.client
            .run_job(command, params)
            .await
            .map_err(|e| format!("{command}: {e}"))
    }

    async fn execute(&mut self, op: &LbOp) -> Result<(), String> {
        match op {
            LbOp::AssociateIp { address, network } => {
                self.associate(address.as_deref(), network).await
            }
            LbOp::TagIp => self.tag(TAG_IP, &self.public_ip()?).await,
            LbOp::AdoptIp { id, address } => {
                // No call: the address exists; the TagIp after it makes it skyplan's.
                self.ids.public_ip = Some(id.clone());
                self.ids.address = Some(address.clone());
                self.ids.ip_associated_by_skyplan = true;
                Ok(())
            }
            LbOp::CreateRule { rule } => self.create_rule(rule).await,
            LbOp::TagRule { rule } => self.tag(TAG_RULE, &self.rule_id(rule)?).await,
            LbOp::UpdateRule { rule, update } => {
                let id = self.rule_id(rule)?;
                self.job("updateLoadBalancerRule", &update_rule_params(&id, update))
                    .await?;
                if let Some(name) = &update.name {
                    self.ids.rules.remove(rule);
                    self.ids.rules.insert(name.clone(), id);
                }
                Ok(())
            }
            LbOp::DeleteRule { rule } => {
                let Some(id) = self.ids.rules.remove(rule) else {
                    tracing::info!(rule, "LB rule already gone");
                    return Ok(());
                };
                self.delete("deleteLoadBalancerRule", &id).await
            }
            LbOp::AssignMembers { rule, vms } => {
                self.members("assignToLoadBalancerRule", rule, &vm_ids(vms))
                    .await
            }
            LbOp::RemoveMembers { rule, vms } => {
                self.members("removeFromLoadBalancerRule", rule, &vm_ids(vms))
                    .await
            }
            LbOp::SyncClusterMembers { rule, cluster } => {
                self.sync_cluster_members(rule, cluster).await
            }
            LbOp::CreateFirewallRule {
                port,
                protocol,
                cidrs,
            } => self.create_firewall_rule(*port, protocol, cidrs).await,
            LbOp::DeleteFirewallRule { id, .. } => self.delete_firewall_rule(id).await,
            LbOp::ReleaseIp { .. } => {
                let id = self.public_ip()?;
                self.delete("disassociateIpAddress", &id).await?;
                self.ids.public_ip = None;
                self.ids.ip_associated_by_skyplan = false;
                Ok(())
            }
        }
    }

    /// Tags the object as the load balancer's. When the answer is lost, the tag is looked for
    /// first and the call repeated only when it is not there.
    async fn tag(&self, kind: &Taggable, id: &str) -> Result<(), String> {
        let p = tag_params(kind.resource_type, id, &self.owner);
        let mut attempt = 1;
        loop {
            let error = match self.client.run_job("createTags", &p).await {
                Ok(_) => return Ok(()),
                Err(error) => error,
            };
            if !error.is_uncertain() {
                return Err(format!("createTags: {error}"));
            }
            if self
                .tagged(kind, id)
                .await
                .map_err(|e| format!("createTags: {error}; then looking for the tag: {e}"))?
            {
                return Ok(());
            }
            if attempt >= CREATE_ATTEMPTS {
                return Err(format!("createTags: {error} (tried {attempt} times)"));
            }
            attempt += 1;
        }
    }

    /// Whether the object carries the ownership tag.
    async fn tagged(&self, kind: &Taggable, id: &str) -> Result<bool, Error> {
        let objects = self
            .client
            .list(kind.list, &params(&[("id", id)]), kind.item_key)
            .await?;
        Ok(objects
            .iter()
            .filter(|o| text(o, "id") == id)
            .flat_map(|o| o["tags"].as_array().cloned().unwrap_or_default())
            .any(|t| text(&t, "key") == OWNER_TAG && text(&t, "value") == self.owner))
    }

    async fn members(&self, command: &str, rule: &str, vms: &str) -> Result<(), String> {
        let id = self.rule_id(rule)?;
        let p = params(&[("id", &id), ("virtualmachineids", vms)]);
        self.job(command, &p).await.map(drop)
    }

    async fn associate(
        &mut self,
        address: Option<&str>,
        network: &NetworkRef,
    ) -> Result<(), String> {
        let network = self.network_id(network).await?;
        let in_network = [("associatednetworkid", network.as_str())];
        let before: BTreeSet<String> = match address {
            // An address that is asked for is found by itself; a new one is told apart from
            // the IPs the network had before.
            Some(_) => BTreeSet::new(),
            None => self
                .list_ips(&in_network)
                .await
                .map_err(|e| e.to_string())?
                .iter()
                .map(|ip| text(ip, "id"))
                .collect(),
        };
        let mut p = params(&[("networkid", &network)]);
        if let Some(address) = address {
            p.push(("ipaddress".into(), address.to_string()));
        }
        let find = || async {
            let candidates = match address {
                Some(address) => self.list_ips(&[("ipaddress", address)]).await?,
                None => self.list_ips(&in_network).await?,
            };
            let fresh: Vec<&Value> = candidates
                .iter()
                .filter(|ip| !before.contains(&text(ip, "id")))
                .filter(|ip| ip.get("issourcenat") != Some(&Value::Bool(true)))
                .collect();
            Ok(match fresh.as_slice() {
                [one] => Some((*one).clone()),
                _ => None,
            })
        };
        let ip = create(self.client, "associateIpAddress", &p, "ipaddress", find).await?;
        self.ids.public_ip = Some(text(&ip, "id"));
        self.ids.address = Some(text(&ip, "ipaddress")).filter(|a| !a.is_empty());
        self.ids.ip_associated_by_skyplan = true;
        Ok(())
    }

    async fn create_rule(&mut self, rule: &NewRule) -> Result<(), String> {
        let ip = self.public_ip()?;
        let network = self.network_id(&rule.network).await?;
        let p = create_rule_params(rule, &ip, &network);
        let client = self.client;
        let find = || async {
            let rules = client
                .list(
                    "listLoadBalancerRules",
                    &params(&[("publicipid", &ip), ("name", &rule.name)]),
                    "loadbalancerrule",
                )
                .await?;
            Ok(rules.into_iter().find(|r| text(r, "name") == rule.name))
        };
        let created = create(client, "createLoadBalancerRule", &p, "loadbalancer", find).await?;
        self.ids
            .rules
            .insert(rule.name.clone(), text(&created, "id"));
        Ok(())
    }

    async fn create_firewall_rule(
        &mut self,
        port: u16,
        protocol: &str,
        cidrs: &[String],
    ) -> Result<(), String> {
        let ip = self.public_ip()?;
        let port_text = port.to_string();
        let cidrlist = cidrs.join(",");
        let p = params(&[
            ("ipaddressid", &ip),
            ("protocol", protocol),
            ("startport", &port_text),
            ("endport", &port_text),
            ("cidrlist", &cidrlist),
        ]);
        let client = self.client;
        let find = || async {
            let rules = client
                .list(
                    "listFirewallRules",
                    &params(&[("ipaddressid", &ip)]),
                    "firewallrule",
                )
                .await?;
            let wanted = super::super::api::split_cidrs(&cidrlist);
            Ok(rules.into_iter().find(|r| {
                text(r, "protocol").eq_ignore_ascii_case(protocol)
                    && port_of(r, "startport") == Some(u32::from(port))
                    && port_of(r, "endport") == Some(u32::from(port))
                    && super::super::api::split_cidrs(&text(r, "cidrlist")) == wanted
            }))
        };
        create(client, "createFirewallRule", &p, "firewallrule", find)
            .await
            .map(drop)
    }

    /// A delete; an object that is already gone counts as deleted.
    async fn delete(&self, command: &str, id: &str) -> Result<(), String> {
        match self.client.run_job(command, &params(&[("id", id)])).await {
            Ok(_) => Ok(()),
            Err(error) if error.is_not_found() => {
                tracing::info!(command, id, "already gone");
                Ok(())
            }
            Err(error) => Err(format!("{command}: {error}")),
        }
    }

    /// Deletes a firewall rule; one that is already gone counts as deleted.
    async fn delete_firewall_rule(&self, id: &str) -> Result<(), String> {
        let result = self.delete("deleteFirewallRule", id).await;
        let Err(error) = result else {
            return Ok(());
        };
        let ip = self.public_ip()?;
        let still_there = self
            .client
            .list(
                "listFirewallRules",
                &params(&[("ipaddressid", &ip)]),
                "firewallrule",
            )
            .await
            .map_err(|e| format!("{error}; then listing firewall rules: {e}"))?
            .iter()
            .any(|r| text(r, "id") == id);
        if still_there {
            Err(error)
        } else {
            Ok(())
        }
    }

    /// The cluster's workers become the rule's members: missing ones are assigned, members that
    /// are no worker removed.
    async fn sync_cluster_members(&self, rule: &str, cluster: &str) -> Result<(), String> {
        let id = self.rule_id(rule)?;
        let found = self.cluster(cluster).await?;
        let workers: BTreeSet<String> = found
            .get("virtualmachines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|vm| text(vm, "name").contains("-node-"))
            .map(|vm| text(vm, "id"))
            .collect();
        let members: BTreeSet<String> = self
            .client
            .list(
                "listLoadBalancerRuleInstances",
                &params(&[("id", &id)]),
                "loadbalancerruleinstance",
            )
            .await
            .map_err(|e| format!("listing the members of {rule}: {e}"))?
            .iter()
            .map(|vm| text(vm, "id"))
            .collect();
        let join = |ids: Vec<&String>| ids.into_iter().cloned().collect::<Vec<_>>().join(",");
        let missing = join(workers.difference(&members).collect());
        let extra = join(members.difference(&workers).collect());
        if !missing.is_empty() {
            self.members("assignToLoadBalancerRule", rule, &missing)
                .await?;
        }
        if !extra.is_empty() {
            self.members("removeFromLoadBalancerRule", rule, &extra)
                .await?;
        }
        Ok(())
    }
}

/// The rules the ops refer to before creating them: those that exist already, whose IDs are
/// to be learnt (a rule created by the ops gets its ID from the create).
fn existing_rules<'a>(ops: &[&'a LbOp]) -> BTreeSet<&'a str> {
    let mut created = BTreeSet::new();
    let mut existing = BTreeSet::new();
    for op in ops {
        if let LbOp::CreateRule { rule } = op {
            created.insert(rule.name.as_str());
        } else if let Some(name) = rule_of(op).filter(|name| !created.contains(name)) {
            existing.insert(name);
        }
    }
    existing
}

/// The rule an op refers to by name.
fn rule_of(op: &LbOp) -> Option<&str> {
    match op {
        LbOp::UpdateRule { rule, .. }
        | LbOp::DeleteRule { rule }
        | LbOp::TagRule { rule }
        | LbOp::AssignMembers { rule, .. }
        | LbOp::RemoveMembers { rule, .. }
        | LbOp::SyncClusterMembers { rule, .. } => Some(rule),
        _ => None,
    }
}

/// Runs a create job; when its answer is lost (`is_uncertain`), first looks for what it may
/// have created and adopts it, and sends it again only when nothing is there.
async fn create<A: Api, F, Fut>(
    client: &A,
    command: &str,
    params: &Params,
    key: &str,
    find: F,
) -> Result<Value, String>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Option<Value>, Error>>,
{
    let mut attempt = 1;
    loop {
        match client.run_job(command, params).await {
            Ok(result) => {
                return created_object(&result, key)
                    .ok_or_else(|| format!("{command}: the answer names no {key}"))
            }
            Err(error) if error.is_uncertain() => {
                let found = find()
                    .await
                    .map_err(|e| format!("{command}: {error}; then looking for it: {e}"))?;
                if let Some(object) = found {
                    let id = text(&object, "id");
                    tracing::info!(
                        command,
                        "the create went through despite {error}; adopting {id}"
                    );
                    return Ok(object);
                }
                if attempt >= CREATE_ATTEMPTS {
                    return Err(format!("{command}: {error} (tried {attempt} times)"));
                }
                tracing::debug!(
                    command,
                    "create failed and created nothing ({error}); trying again"
                );
                attempt += 1;
            }
            Err(error) => return Err(format!("{command}: {error}")),
        }
    }
}

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;
