//! The CCM's firewall rules on an isolated network (research §1.7): one per public port and IP
//! protocol with `loadBalancerSourceRanges`; a rule with other CIDRs is deleted, then the wanted
//! one created. Network ACLs of VPC tiers are not modelled: the simulated cloud has no VPC.

use serde_json::Value;

use super::balancer::LoadBalancer;
use super::spec::{same_multiset, Protocol};

/// Does the network offer the `Firewall` service?
pub fn has_firewall(network: &Value) -> bool {
    network["service"]
        .as_array()
        .is_some_and(|services| services.iter().any(|s| s["name"] == "Firewall"))
}

/// The firewall rules on the IP for this port and protocol.
async fn matching(
    lb: &LoadBalancer<'_>,
    ip_id: &str,
    port: u16,
    protocol: Protocol,
) -> Result<Vec<Value>, String> {
    let rules = lb
        .api
        .list(
            "listFirewallRules",
            "firewallrule",
            &[
                ("ipaddressid", ip_id.to_owned()),
                ("listall", "true".into()),
            ],
        )
        .await
        .map_err(|e| format!("error fetching firewall rules for public IP {ip_id}: {e}"))?;
    Ok(rules
        .into_iter()
        .filter(|r| {
            r["protocol"] == protocol.ip()
                && r["startport"].as_u64() == Some(u64::from(port))
                && r["endport"].as_u64() == Some(u64::from(port))
        })
        .collect())
}

/// `updateFirewallRule`: keeps a rule with exactly these CIDRs, deletes the others (failures
/// only logged, as the CCM does), creates the rule when none was kept.
pub async fn update_firewall_rule(
    lb: &mut LoadBalancer<'_>,
    ip_id: &str,
    port: u16,
    protocol: Protocol,
    cidrs: &[String],
) -> Result<(), String> {
    let mut kept = false;
    for rule in matching(lb, ip_id, port, protocol).await? {
        let theirs: Vec<String> = rule["cidrlist"]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .map(str::to_owned)
            .collect();
        if !kept && same_multiset(&theirs, cidrs) {
            kept = true;
        } else {
            delete(lb, &rule, port, protocol).await;
        }
    }
    if kept {
        return Ok(());
    }
    let params = [
        ("ipaddressid", ip_id.to_owned()),
        ("protocol", protocol.ip().to_owned()),
        ("cidrlist", cidrs.join(",")),
        ("startport", port.to_string()),
        ("endport", port.to_string()),
    ];
    lb.api
        .run("createFirewallRule", &params)
        .await
        .map_err(|e| format!("error creating firewall rule for port {port}: {e}"))?;
    lb.log.push(format!(
        "create firewall rule {}/{port} {}",
        protocol.ip(),
        cidrs.join(",")
    ));
    Ok(())
}

/// `deleteFirewallRule`: every matching rule; failures only logged.
pub async fn delete_firewall_rules(
    lb: &mut LoadBalancer<'_>,
    ip_id: &str,
    port: u16,
    protocol: Protocol,
) -> Result<(), String> {
    for rule in matching(lb, ip_id, port, protocol).await? {
        delete(lb, &rule, port, protocol).await;
    }
    Ok(())
}

async fn delete(lb: &mut LoadBalancer<'_>, rule: &Value, port: u16, protocol: Protocol) {
    let id = rule["id"].as_str().unwrap_or_default().to_owned();
    match lb.api.run("deleteFirewallRule", &[("id", id)]).await {
        Ok(_) => lb.log.push(format!(
            "delete firewall rule {}/{port} {}",
            protocol.ip(),
            rule["cidrlist"].as_str().unwrap_or_default()
        )),
        Err(e) => tracing::debug!(error = %e, "firewall rule not deleted"),
    }
}
