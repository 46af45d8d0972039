//! The CCM's `loadBalancer`: the rules found under the Service's name, the public IP they sit
//! on, and the calls on them (`cloudstack_loadbalancer.go`). Every call that changes the cloud
//! is logged as one line in `log`, in order.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::client::{CsApi, CsResult};
use super::spec::Protocol;

/// An LB rule as `listLoadBalancerRules` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub id: String,
    pub name: String,
    pub public_ip: String,
    pub public_ip_id: String,
    pub public_port: u16,
    pub private_port: u16,
    pub algorithm: String,
    pub protocol: String,
    /// The stored string, space-separated after create, comma-separated after update.
    pub cidrlist: String,
    pub network_id: String,
}

impl Rule {
    /// The server sends ports as strings; cloudstack-go reads them as such.
    pub fn from_json(raw: &Value) -> Rule {
        let text = |key: &str| raw[key].as_str().unwrap_or_default().to_owned();
        let port = |key: &str| {
            raw[key]
                .as_str()
                .and_then(|p| p.parse().ok())
                .or_else(|| raw[key].as_u64().and_then(|p| u16::try_from(p).ok()))
                .unwrap_or(0)
        };
        Rule {
            id: text("id"),
            name: text("name"),
            public_ip: text("publicip"),
            public_ip_id: text("publicipid"),
            public_port: port("publicport"),
            private_port: port("privateport"),
            algorithm: text("algorithm"),
            protocol: text("protocol"),
            cidrlist: text("cidrlist"),
            network_id: text("networkid"),
        }
    }
}

pub struct LoadBalancer<'a> {
    pub api: &'a CsApi,
    pub name: String,
    pub algorithm: String,
    /// By rule name; what is left after Ensure's ports is obsolete.
    pub rules: BTreeMap<String, Rule>,
    pub ip_addr: String,
    pub ip_addr_id: String,
    pub network_id: String,
    pub ip_associated_by_controller: bool,
    pub log: Vec<String>,
}

impl<'a> LoadBalancer<'a> {
    /// `getLoadBalancer`: `listLoadBalancerRules keyword=<name> listall=true`; the IP is the
    /// last rule's.
    pub async fn find(api: &'a CsApi, name: String) -> CsResult<LoadBalancer<'a>> {
        let found = api
            .list(
                "listLoadBalancerRules",
                "loadbalancerrule",
                &[("keyword", name.clone()), ("listall", "true".into())],
            )
            .await?;
        let mut lb = LoadBalancer {
            api,
            name,
            algorithm: String::new(),
            rules: BTreeMap::new(),
            ip_addr: String::new(),
            ip_addr_id: String::new(),
            network_id: String::new(),
            ip_associated_by_controller: false,
            log: Vec::new(),
        };
        for raw in &found {
            let rule = Rule::from_json(raw);
            lb.ip_addr = rule.public_ip.clone();
            lb.ip_addr_id = rule.public_ip_id.clone();
            lb.rules.insert(rule.name.clone(), rule);
        }
        Ok(lb)
    }

    pub fn has_ip(&self) -> bool {
        !self.ip_addr.is_empty() && !self.ip_addr_id.is_empty()
    }

    /// `getLoadBalancerIP`: the requested address looked up (and associated when free), or a
    /// new one associated in the hosts' network.
    pub async fn acquire_ip(&mut self, requested: Option<&str>) -> Result<(), String> {
        match requested {
            Some(ip) => self.requested_ip(ip).await,
            None => self.associate(None).await,
        }
    }

    /// `getPublicIPAddress`.
    async fn requested_ip(&mut self, ip: &str) -> Result<(), String> {
        let found = self
            .api
            .list(
                "listPublicIpAddresses",
                "publicipaddress",
                &[
                    ("ipaddress", ip.to_owned()),
                    ("allocatedonly", "false".into()),
                    ("listall", "true".into()),
                ],
            )
            .await
            .map_err(|e| format!("error retrieving IP address: {e}"))?;
        if found.len() != 1 {
            return Err(format!(
                "could not find IP address {ip}. Found {} addresses",
                found.len()
            ));
        }
        let address = &found[0];
        self.ip_addr = address["ipaddress"].as_str().unwrap_or(ip).to_owned();
        self.ip_addr_id = address["id"].as_str().unwrap_or_default().to_owned();
        // New in v1.2.0: a requested address not yet allocated is associated.
        if address["allocated"].as_str().unwrap_or_default().is_empty() {
            return self.associate(Some(ip)).await;
        }
        Ok(())
    }

    /// `associatePublicIPAddress`: in the VPC when the hosts' network is a tier, else in it.
    async fn associate(&mut self, ip: Option<&str>) -> Result<(), String> {
        let network = self.network().await?;
        let mut params = match network["vpcid"].as_str().filter(|v| !v.is_empty()) {
            Some(vpc) => vec![("vpcid", vpc.to_owned())],
            None => vec![("networkid", self.network_id.clone())],
        };
        if let Some(ip) = ip {
            params.push(("ipaddress", ip.to_owned()));
        }
        let result = self
            .api
            .run("associateIpAddress", &params)
            .await
            .map_err(|e| format!("error associating new IP address: {e}"))?;
        let address = &result["ipaddress"];
        self.ip_addr = address["ipaddress"].as_str().unwrap_or_default().to_owned();
        self.ip_addr_id = address["id"].as_str().unwrap_or_default().to_owned();
        self.ip_associated_by_controller = true;
        self.log.push(format!("associate ip {}", self.ip_addr));
        Ok(())
    }

    /// `releaseLoadBalancerIP`.
    pub async fn release_ip(&mut self) -> Result<(), String> {
        self.api
            .run("disassociateIpAddress", &[("id", self.ip_addr_id.clone())])
            .await
            .map_err(|e| format!("error releasing load balancer IP {}: {e}", self.ip_addr))?;
        self.log.push(format!("disassociate ip {}", self.ip_addr));
        Ok(())
    }

    /// `GetNetworkByID` of the hosts' network.
    pub async fn network(&self) -> Result<Value, String> {
        let found = self
            .api
            .list(
                "listNetworks",
                "network",
                &[("id", self.network_id.clone()), ("listall", "true".into())],
            )
            .await
            .map_err(|e| format!("error retrieving network {}: {e}", self.network_id))?;
        found
            .into_iter()
            .next()
            .ok_or_else(|| format!("could not find network {}", self.network_id))
    }

    /// `createLoadBalancerRule`, always with `openfirewall=false` (the CCM manages the
    /// firewall rule itself).
    pub async fn create_rule(
        &mut self,
        name: &str,
        port: u16,
        node_port: u16,
        protocol: Protocol,
        cidrs: &[String],
    ) -> Result<Rule, String> {
        let params = [
            ("algorithm", self.algorithm.clone()),
            ("name", name.to_owned()),
            ("privateport", node_port.to_string()),
            ("publicport", port.to_string()),
            ("networkid", self.network_id.clone()),
            ("publicipid", self.ip_addr_id.clone()),
            ("protocol", protocol.cs().to_owned()),
            ("cidrlist", cidrs.join(",")),
            ("openfirewall", "false".into()),
        ];
        let result = self
            .api
            .run("createLoadBalancerRule", &params)
            .await
            .map_err(|e| format!("error creating load balancer rule {name}: {e}"))?;
        let rule = Rule::from_json(&result["loadbalancer"]);
        self.log.push(format!(
            "create rule {name} {port}->{node_port} {} {}",
            protocol.cs(),
            self.algorithm
        ));
        Ok(rule)
    }

    /// `updateLoadBalancerRule id algorithm protocol [cidrlist]`, the rule kept.
    pub async fn update_rule(
        &mut self,
        rule: &Rule,
        protocol: Protocol,
        cidrs: Option<&[String]>,
    ) -> Result<(), String> {
        let mut params = vec![
            ("id", rule.id.clone()),
            ("algorithm", self.algorithm.clone()),
            ("protocol", protocol.cs().to_owned()),
        ];
        if let Some(cidrs) = cidrs {
            params.push(("cidrlist", cidrs.join(",")));
        }
        self.api
            .run("updateLoadBalancerRule", &params)
            .await
            .map_err(|e| format!("error updating load balancer rule {}: {e}", rule.name))?;
        let cidr_note = cidrs.map_or(String::new(), |c| format!(" cidrlist={}", c.join(",")));
        self.log.push(format!(
            "update rule {} algorithm={} protocol={}{cidr_note}",
            rule.name,
            self.algorithm,
            protocol.cs()
        ));
        Ok(())
    }

    /// `deleteLoadBalancerRule`, and the rule is forgotten.
    pub async fn delete_rule(&mut self, rule: &Rule) -> Result<(), String> {
        self.api
            .run("deleteLoadBalancerRule", &[("id", rule.id.clone())])
            .await
            .map_err(|e| format!("error deleting load balancer rule {}: {e}", rule.name))?;
        self.rules.remove(&rule.name);
        self.log.push(format!("delete rule {}", rule.name));
        Ok(())
    }

    /// `assignToLoadBalancerRule` (`assign`) or `removeFromLoadBalancerRule` of these VMs.
    pub async fn set_members(
        &mut self,
        rule: &Rule,
        vms: &BTreeSet<String>,
        assign: bool,
    ) -> Result<(), String> {
        if vms.is_empty() {
            return Ok(());
        }
        let ids = vms.iter().cloned().collect::<Vec<_>>().join(",");
        let (command, verb) = if assign {
            ("assignToLoadBalancerRule", "assign")
        } else {
            ("removeFromLoadBalancerRule", "remove")
        };
        self.api
            .run(
                command,
                &[("id", rule.id.clone()), ("virtualmachineids", ids.clone())],
            )
            .await
            .map_err(|e| format!("error {verb}ing hosts of rule {}: {e}", rule.name))?;
        self.log.push(format!("{verb} {ids} on rule {}", rule.name));
        Ok(())
    }

    /// `listLoadBalancerRuleInstances`: the VM ids the rule balances to.
    pub async fn members(&self, rule: &Rule) -> Result<BTreeSet<String>, String> {
        let found = self
            .api
            .list(
                "listLoadBalancerRuleInstances",
                "loadbalancerruleinstance",
                &[("id", rule.id.clone()), ("listall", "true".into())],
            )
            .await
            .map_err(|e| format!("error retrieving hosts of rule {}: {e}", rule.name))?;
        Ok(found
            .iter()
            .filter_map(|vm| vm["id"].as_str().map(str::to_owned))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_read_ports_as_the_server_sends_them() {
        let rule = Rule::from_json(&json!({
            "id": "r", "name": "a-tcp-80", "publicip": "198.51.100.2", "publicipid": "ip",
            "publicport": "80", "privateport": "30080", "algorithm": "roundrobin",
            "protocol": "tcp", "cidrlist": "0.0.0.0/0",
        }));
        assert_eq!((rule.public_port, rule.private_port), (80, 30080));
        assert_eq!(rule.cidrlist, "0.0.0.0/0");
    }
}
