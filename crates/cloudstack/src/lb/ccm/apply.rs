//! Applying a controller-mode change: write the Service (merge patch with the resourceVersion
//! read at refresh, field manager skyplan; a 409 means "plan again"), then wait — with
//! progress and a timeout, `SKYPLAN_CCM_WAIT_S` (default 300 s) — until the cloud shows the
//! predicted rules, and compare which rule IDs were kept or recreated with the prediction.

use super::predict::{ccm_cidrs, WantedRule};
use crate::api::{split_cidrs, LoadBalancerRule};
use crate::spec::CsProtocol;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;

use super::predict::{lb_candidate, live_rules, node_vms, service_base, wanted_rules};
use crate::client::CloudstackClient;
use crate::live::Inventory;
use crate::refresh;
use crate::spec::CloudstackLoadBalancerSpec;
use skyplan_core::model::Address;
use skyplan_kubernetes::connection::ClusterConnection;

/// Rule IDs by rule name, as the wait found them once the cloud matched.
pub type RuleIds = BTreeMap<String, String>;

/// Polls the Service, the Nodes and the cloud until the CCM's rules match the Service as
/// written and have the VMs of every balanced Node as members; `expected_nodes`, after a
/// scale in the same apply, is how many balanced Nodes to wait for first.
pub async fn wait_for_controller(
    address: &Address,
    client: &CloudstackClient,
    connection: &ClusterConnection,
    spec: &CloudstackLoadBalancerSpec,
    expected_nodes: Option<usize>,
) -> Result<RuleIds, String> {
    let binding = spec.binding.as_ref().expect("bound");
    let (started, limit) = (Instant::now(), skyplan_kubernetes::controller_wait_limit());
    let mut reported = Instant::now();
    let mut last = String::from("the Service was not read yet");
    loop {
        if started.elapsed() > limit {
            return Err(format!(
                "the CloudStack CCM did not converge within {} s (SKYPLAN_CCM_WAIT_S): {last}",
                limit.as_secs()
            ));
        }
        if reported.elapsed() > Duration::from_secs(5) {
            tracing::info!(%address, "waiting for the cloud controller: {last}");
            reported = Instant::now();
        }
        // Read fresh each time: a cluster scaled in this apply changes its Nodes meanwhile.
        let nodes = connection.fresh_nodes().await.map_err(|e| e.to_string())?;
        let balanced_now = nodes.iter().filter(|n| lb_candidate(n)).count();
        if let Some(expected) = expected_nodes.filter(|e| *e != balanced_now) {
            last = format!("{balanced_now} Ready nodes, waiting for {expected} after the scale");
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        let service = connection
            .service(&binding.namespace, &binding.name)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("Service {} disappeared", binding.service_ref()))?;
        let base = service_base(Some(&service)).ok_or("the Service has no UID")?;
        let prefix = format!("{base}-");
        let live = refresh::inventory(client, |inventory| {
            inventory
                .rules
                .iter()
                .filter(|r| r.name.starts_with(&prefix))
                .map(|r| r.publicipid.clone())
                .collect()
        })
        .await
        .map_err(|e| e.to_string())?;
        match difference(spec, &service, &nodes, &live, &base) {
            None => {
                let rules = live_rules(&live, &base);
                return Ok(rules.into_iter().map(|(n, r)| (n, r.id.clone())).collect());
            }
            Some(why) => last = why,
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The first way the live rules differ from what the CCM should have made of the Service as
/// written (its node ports now known); `None` once they match.
pub fn difference(
    spec: &CloudstackLoadBalancerSpec,
    service: &k8s_openapi::api::core::v1::Service,
    nodes: &[Node],
    live: &Inventory,
    base: &str,
) -> Option<String> {
    let wanted = wanted_rules(spec, base, Some(service));
    let found = live_rules(live, base);
    let names: BTreeSet<&String> = wanted.iter().map(|w| &w.name).collect();
    let have: BTreeSet<&String> = found.keys().collect();
    if names != have {
        return Some(format!("rules are {have:?}, expected {names:?}"));
    }
    let vms: BTreeSet<String> = node_vms(nodes, live).into_keys().collect();
    for rule in &wanted {
        let live_rule = found[&rule.name];
        let Some(node_port) = rule.node_port else {
            return Some(format!("port {} has no node port yet", rule.port));
        };
        if live_rule.privateport != u32::from(node_port) {
            return Some(format!(
                "rule {} has private port {}, expected {node_port}",
                rule.name, live_rule.privateport
            ));
        }
        let cidrs = split_cidrs(live_rule.cidrlist.as_deref().unwrap_or(""));
        if cidrs != ccm_cidrs(&spec.allowed_cidrs) {
            return Some(format!("rule {} allows {cidrs:?}", rule.name));
        }
        if let Some(difference) = firewall_difference(spec, rule, live_rule, live) {
            return Some(difference);
        }
        if live_rule.algorithm != spec.algorithm.to_string() {
            return Some(format!(
                "rule {} has algorithm {}",
                rule.name, live_rule.algorithm
            ));
        }
        let members: BTreeSet<String> = live
            .rule_members
            .get(&live_rule.id)
            .map(|m| m.iter().cloned().collect())
            .unwrap_or_default();
        if !nodes.is_empty() && members != vms {
            return Some(format!(
                "rule {} has members {members:?}, expected {vms:?}",
                rule.name
            ));
        }
    }
    None
}

/// Whether the port's firewall rules on the public IP are not yet the one rule the CCM makes
/// from loadBalancerSourceRanges (a VPC tier has network ACLs instead: nothing to wait for).
fn firewall_difference(
    spec: &CloudstackLoadBalancerSpec,
    rule: &WantedRule,
    live_rule: &LoadBalancerRule,
    live: &Inventory,
) -> Option<String> {
    let on_vpc = live_rule
        .networkid
        .as_deref()
        .and_then(|id| live.network(id))
        .is_some_and(|n| n.vpcid.as_deref().is_some_and(|v| !v.is_empty()));
    if on_vpc {
        return None;
    }
    let protocol = match rule.protocol {
        CsProtocol::Udp => "udp",
        _ => "tcp",
    };
    let port = u32::from(rule.port);
    let has: Vec<Vec<String>> = live
        .firewall_rules_on(&live_rule.publicipid)
        .filter(|f| f.protocol == protocol && f.startport == port && f.endport == port)
        .map(|f| f.cidrs())
        .collect();
    let wanted = ccm_cidrs(&spec.firewall_cidrs);
    match has.len() == 1 && has[0] == wanted {
        true => None,
        false => Some(format!(
            "the firewall of rule {} allows {has:?}, expected {wanted:?}",
            rule.name
        )),
    }
}

/// Rules the plan said the CCM would delete and create again (or keep), against what
/// happened to their IDs; every difference described.
pub fn compare_rule_ids(before: &RuleIds, after: &RuleIds, actions: &[String]) -> Vec<String> {
    let mut differences = Vec::new();
    for (name, old_id) in before {
        let Some(new_id) = after.get(name) else {
            continue;
        };
        let predicted = actions
            .iter()
            .any(|a| a == &format!("delete LB rule {name}"));
        let recreated = old_id != new_id;
        if predicted && !recreated {
            differences.push(format!(
                "rule {name} was predicted to be recreated but kept its ID"
            ));
        }
        if recreated && !predicted {
            differences.push(format!(
                "rule {name} was recreated by the controller (the plan predicted it kept)"
            ));
        }
    }
    differences
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(pairs: &[(&str, &str)]) -> RuleIds {
        pairs
            .iter()
            .map(|(n, i)| (n.to_string(), i.to_string()))
            .collect()
    }

    #[test]
    fn rule_ids_are_compared_with_the_prediction() {
        let before = ids(&[("a-tcp-80", "1"), ("a-tcp-443", "2")]);
        let recreate = vec!["delete LB rule a-tcp-80".to_string()];
        let as_predicted = ids(&[("a-tcp-80", "3"), ("a-tcp-443", "2")]);
        assert!(compare_rule_ids(&before, &as_predicted, &recreate).is_empty());
        let kept = compare_rule_ids(&before, &before, &recreate);
        assert_eq!(kept.len(), 1, "{kept:?}");
        let surprise = compare_rule_ids(&before, &as_predicted, &[]);
        assert!(surprise[0].contains("predicted it kept"), "{surprise:?}");
    }
}
