//! `verifyHosts`: the nodes matched to the account's VMs by name (research §1.8).

use std::collections::BTreeSet;

use serde_json::Value;

use super::client::CsApi;

/// A VM backing a node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Host {
    pub id: String,
    pub name: String,
}

/// The matched VMs and the network they share (`nic[0].networkid`).
#[derive(Debug, Clone)]
pub struct Hosts {
    pub vms: Vec<Host>,
    pub network_id: String,
}

impl Hosts {
    pub fn ids(&self) -> BTreeSet<String> {
        self.vms.iter().map(|h| h.id.clone()).collect()
    }
}

/// A node name as the CCM compares it: lower case, without its domain.
pub fn short_name(node: &str) -> String {
    node.split('.').next().unwrap_or(node).to_lowercase()
}

/// `listVirtualMachines listall=true details=min,nics` (unpaged), matched by lower-cased name.
pub async fn verify_hosts(api: &CsApi, node_names: &[String]) -> Result<Hosts, String> {
    let wanted: BTreeSet<String> = node_names.iter().map(|n| short_name(n)).collect();
    let vms = api
        .list(
            "listVirtualMachines",
            "virtualmachine",
            &[("listall", "true".into()), ("details", "min,nics".into())],
        )
        .await
        .map_err(|e| format!("error retrieving list of hosts: {e}"))?;
    match_hosts(&vms, &wanted)
}

fn match_hosts(vms: &[Value], wanted: &BTreeSet<String>) -> Result<Hosts, String> {
    let mut hosts = Vec::new();
    let mut network_id: Option<String> = None;
    for vm in vms {
        let name = vm["name"].as_str().unwrap_or_default().to_lowercase();
        if !wanted.contains(&name) {
            continue;
        }
        let network = vm["nic"][0]["networkid"].as_str().unwrap_or_default();
        match &network_id {
            Some(first) if first != network => {
                return Err("found hosts that belong to different networks".into())
            }
            Some(_) => {}
            None => network_id = Some(network.to_owned()),
        }
        hosts.push(Host {
            id: vm["id"].as_str().unwrap_or_default().to_owned(),
            name: vm["name"].as_str().unwrap_or_default().to_owned(),
        });
    }
    match network_id {
        Some(network_id) => Ok(Hosts {
            vms: hosts,
            network_id,
        }),
        None => Err("none of the hosts matched the list of VMs retrieved from CS API".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vm(id: &str, name: &str, network: &str) -> Value {
        json!({"id": id, "name": name, "nic": [{"networkid": network}]})
    }

    #[test]
    fn nodes_match_vms_by_lower_cased_short_name() {
        let vms = [
            vm("1", "Web-1", "n"),
            vm("2", "web-2", "n"),
            vm("3", "db", "n"),
        ];
        let wanted = ["web-1.example.org", "WEB-2"]
            .iter()
            .map(|n| short_name(n))
            .collect();
        let hosts = match_hosts(&vms, &wanted).unwrap();
        assert_eq!(hosts.ids(), ["1".to_string(), "2".into()].into());
        assert_eq!(hosts.network_id, "n");
    }

    #[test]
    fn hosts_in_two_networks_or_none_at_all_are_errors() {
        let vms = [vm("1", "a", "n1"), vm("2", "b", "n2")];
        let both = ["a".to_string(), "b".into()].into();
        assert!(match_hosts(&vms, &both)
            .unwrap_err()
            .contains("different networks"));
        let none = ["c".to_string()].into();
        assert!(match_hosts(&vms, &none)
            .unwrap_err()
            .contains("none of the hosts"));
    }
}
