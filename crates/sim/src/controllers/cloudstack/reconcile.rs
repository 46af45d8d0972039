//! The CCM's three entry points (`cloudstack_loadbalancer.go`): `EnsureLoadBalancer` (the
//! Service changed), `UpdateLoadBalancer` (the node set changed) and
//! `EnsureLoadBalancerDeleted`. Each returns the calls it made, also when it failed.

use serde_json::{json, Value};

use super::balancer::{LoadBalancer, Rule};
use super::client::CsApi;
use super::firewall::{delete_firewall_rules, has_firewall, update_firewall_rule};
use super::hosts::{verify_hosts, Hosts};
use super::spec::{
    algorithm, firewall_cidrs, load_balancer_name, port_protocol, rule_cidrs, rule_name,
    same_multiset, CsPort, CsService, Protocol, IP_ASSOCIATED,
};

/// What an Ensure leaves for the service controller to write back.
#[derive(Debug, Clone, PartialEq)]
pub struct Ensured {
    /// `status.loadBalancer.ingress`.
    pub ingress: Vec<Value>,
    /// The requested `loadBalancerIP` was associated by this controller: annotate it so.
    pub ip_associated: bool,
}

/// The server version as the CCM uses it: does `updateLoadBalancerRule` take `cidrlist`?
#[derive(Debug, Clone, Copy)]
pub struct Cloud<'a> {
    pub api: &'a CsApi,
    pub at_least_422: bool,
}

pub async fn ensure(
    cloud: Cloud<'_>,
    service: &CsService,
    nodes: &[String],
) -> (Vec<String>, Result<Ensured, String>) {
    let mut lb =
        match LoadBalancer::find(cloud.api, load_balancer_name(&service.metadata.uid)).await {
            Ok(lb) => lb,
            Err(e) => return (Vec::new(), Err(e.to_string())),
        };
    let acquired_here = !lb.has_ip();
    let result = ensure_with(cloud, &mut lb, service, nodes).await;
    // The deferred release: an address this Ensure took for itself goes back on failure.
    if result.is_err()
        && acquired_here
        && lb.has_ip()
        && Some(lb.ip_addr.as_str()) != service.requested_ip()
    {
        if let Err(e) = lb.release_ip().await {
            tracing::debug!(error = %e, "address not released");
        }
    }
    (lb.log, result)
}

async fn ensure_with(
    cloud: Cloud<'_>,
    lb: &mut LoadBalancer<'_>,
    service: &CsService,
    nodes: &[String],
) -> Result<Ensured, String> {
    lb.algorithm = algorithm(service)?.to_owned();
    let hosts = verify_hosts(lb.api, nodes).await?;
    lb.network_id = hosts.network_id.clone();
    if !lb.has_ip() {
        lb.acquire_ip(service.requested_ip()).await?;
    }
    let cidrs = rule_cidrs(service)?;
    let network = lb.network().await?;
    for port in &service.spec.ports {
        let protocol = port_protocol(port, service)?;
        let name = rule_name(&lb.name, protocol, port.port);
        let rule = match check_rule(cloud, lb, &name, port, protocol, &cidrs).await? {
            Some(rule) => rule,
            None => {
                let node_port = port.node_port.unwrap_or(0);
                let rule = lb
                    .create_rule(&name, port.port, node_port, protocol, &cidrs)
                    .await?;
                lb.set_members(&rule, &hosts.ids(), true).await?;
                rule
            }
        };
        if has_firewall(&network) {
            let ranges = firewall_cidrs(service);
            update_firewall_rule(lb, &rule.public_ip_id, port.port, protocol, &ranges).await?;
        }
    }
    // What no port claimed is obsolete: its firewall rule first, then the rule.
    let obsolete: Vec<Rule> = lb.rules.values().cloned().collect();
    for rule in obsolete {
        delete_rule_and_firewall(lb, &rule, &network).await?;
    }
    let ingress = match service.hostname() {
        Some(hostname) => json!({"hostname": hostname}),
        None => json!({"ip": lb.ip_addr}),
    };
    Ok(Ensured {
        ingress: vec![ingress],
        ip_associated: lb.ip_associated_by_controller
            && Some(lb.ip_addr.as_str()) == service.requested_ip(),
    })
}

/// `checkLoadBalancerRule`: `None` when the rule must be created (absent, or deleted here
/// because its IP or ports differ, or its CIDRs do below 4.22); an existing rule is taken
/// out of the map and updated in place when its algorithm, protocol or CIDRs differ.
async fn check_rule(
    cloud: Cloud<'_>,
    lb: &mut LoadBalancer<'_>,
    name: &str,
    port: &CsPort,
    protocol: Protocol,
    cidrs: &[String],
) -> Result<Option<Rule>, String> {
    let Some(rule) = lb.rules.get(name).cloned() else {
        return Ok(None);
    };
    // The rule's list split on a space as the CCM splits it (after an update it holds commas).
    let theirs: Vec<String> = rule.cidrlist.split(' ').map(str::to_owned).collect();
    let cidrs_changed = !same_multiset(cidrs, &theirs);
    let basic_match = rule.public_ip == lb.ip_addr
        && rule.private_port == port.node_port.unwrap_or(0)
        && rule.public_port == port.port;
    if !basic_match || (cidrs_changed && !cloud.at_least_422) {
        lb.delete_rule(&rule).await?;
        return Ok(None);
    }
    lb.rules.remove(name);
    if rule.algorithm != lb.algorithm || rule.protocol != protocol.cs() || cidrs_changed {
        let cidrs = cloud.at_least_422.then_some(cidrs);
        lb.update_rule(&rule, protocol, cidrs).await?;
    }
    Ok(Some(rule))
}

async fn delete_rule_and_firewall(
    lb: &mut LoadBalancer<'_>,
    rule: &Rule,
    network: &Value,
) -> Result<(), String> {
    if let Some(protocol) = Protocol::from_cs(&rule.protocol) {
        if has_firewall(network) {
            delete_firewall_rules(lb, &rule.public_ip_id, rule.public_port, protocol).await?;
        }
    }
    lb.delete_rule(rule).await
}

/// `UpdateLoadBalancer`: every rule's members made the matched hosts (symmetric difference).
pub async fn update(
    cloud: Cloud<'_>,
    service: &CsService,
    nodes: &[String],
) -> (Vec<String>, Result<(), String>) {
    let mut lb =
        match LoadBalancer::find(cloud.api, load_balancer_name(&service.metadata.uid)).await {
            Ok(lb) => lb,
            Err(e) => return (Vec::new(), Err(e.to_string())),
        };
    let result = update_with(&mut lb, nodes).await;
    (lb.log, result)
}

async fn update_with(lb: &mut LoadBalancer<'_>, nodes: &[String]) -> Result<(), String> {
    let hosts: Hosts = verify_hosts(lb.api, nodes).await?;
    let wanted = hosts.ids();
    let rules: Vec<Rule> = lb.rules.values().cloned().collect();
    for rule in rules {
        let current = lb.members(&rule).await?;
        let assign = wanted.difference(&current).cloned().collect();
        let remove = current.difference(&wanted).cloned().collect();
        lb.set_members(&rule, &assign, true).await?;
        lb.set_members(&rule, &remove, false).await?;
    }
    Ok(())
}

/// `EnsureLoadBalancerDeleted`: every rule with its firewall rule, then the address when
/// this controller chose it (or associated the requested one and nothing else uses it).
pub async fn delete(cloud: Cloud<'_>, service: &CsService) -> (Vec<String>, Result<(), String>) {
    let mut lb =
        match LoadBalancer::find(cloud.api, load_balancer_name(&service.metadata.uid)).await {
            Ok(lb) => lb,
            Err(e) => return (Vec::new(), Err(e.to_string())),
        };
    let result = delete_with(&mut lb, service).await;
    (lb.log, result)
}

async fn delete_with(lb: &mut LoadBalancer<'_>, service: &CsService) -> Result<(), String> {
    let rules: Vec<Rule> = lb.rules.values().cloned().collect();
    for rule in &rules {
        lb.network_id = rule.network_id.clone();
        let network = lb.network().await?;
        delete_rule_and_firewall(lb, rule, &network).await?;
    }
    if lb.ip_addr.is_empty() {
        // No rules, no address known: nothing is released (the leak of CCM PR #95).
        return Ok(());
    }
    if Some(lb.ip_addr.as_str()) != service.requested_ip() {
        return lb.release_ip().await;
    }
    if service.bool_annotation(IP_ASSOCIATED, false) && unused(lb).await? {
        return lb.release_ip().await;
    }
    Ok(())
}

/// `listLoadBalancerRules publicipid=<ip>` counts nothing.
async fn unused(lb: &LoadBalancer<'_>) -> Result<bool, String> {
    let rules = lb
        .api
        .list(
            "listLoadBalancerRules",
            "loadbalancerrule",
            &[
                ("publicipid", lb.ip_addr_id.clone()),
                ("listall", "true".into()),
            ],
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(rules.is_empty())
}
