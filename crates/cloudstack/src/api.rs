//! CloudStack API objects as the list commands return them, with the fields skyplan reads.
//! Numbers sometimes arrive as strings (LB rule ports), so they are read leniently; unknown
//! fields are ignored. Only additive changes here: both resource kinds read these types.

use serde::{Deserialize, Deserializer, Serialize};

/// A number the API may send as a JSON number or as a string.
fn lenient_u32<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumberOrText {
        Number(u64),
        Text(String),
    }
    match Option::<NumberOrText>::deserialize(deserializer)? {
        None => Ok(0),
        Some(NumberOrText::Number(n)) => u32::try_from(n).map_err(serde::de::Error::custom),
        Some(NumberOrText::Text(t)) => t.trim().parse().map_err(serde::de::Error::custom),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Zone {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub networktype: String,
    #[serde(default)]
    pub allocationstate: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ServiceOffering {
    pub id: String,
    pub name: String,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub cpunumber: u32,
    /// MHz per vCPU.
    #[serde(default, deserialize_with = "lenient_u32")]
    pub cpuspeed: u32,
    /// MB.
    #[serde(default, deserialize_with = "lenient_u32")]
    pub memory: u32,
    #[serde(default)]
    pub iscustomized: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct KubernetesVersion {
    pub id: String,
    #[serde(default)]
    pub name: String,
    pub semanticversion: String,
    /// `Enabled` or `Disabled`.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub isostate: String,
    #[serde(default)]
    pub zoneid: Option<String>,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub mincpunumber: u32,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub minmemory: u32,
    #[serde(default)]
    pub supportsha: bool,
    #[serde(default)]
    pub supportsautoscaling: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ClusterVm {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct KubernetesCluster {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub zoneid: String,
    #[serde(default)]
    pub zonename: String,
    pub kubernetesversionid: String,
    #[serde(default)]
    pub kubernetesversionname: String,
    pub serviceofferingid: String,
    #[serde(default)]
    pub serviceofferingname: String,
    #[serde(default)]
    pub workerofferingid: Option<String>,
    #[serde(default)]
    pub controlofferingid: Option<String>,
    #[serde(default)]
    pub etcdofferingid: Option<String>,
    #[serde(default)]
    pub networkid: Option<String>,
    #[serde(default)]
    pub associatednetworkname: Option<String>,
    #[serde(default)]
    pub keypair: Option<String>,
    /// Worker count.
    #[serde(default, deserialize_with = "lenient_u32")]
    pub size: u32,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub controlnodes: u32,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub etcdnodes: u32,
    pub state: String,
    #[serde(default)]
    pub autoscalingenabled: bool,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub minsize: u32,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub maxsize: u32,
    #[serde(default)]
    pub virtualmachines: Vec<ClusterVm>,
    #[serde(default)]
    pub tags: Vec<Tag>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Nic {
    #[serde(default)]
    pub id: String,
    pub networkid: String,
    #[serde(default)]
    pub ipaddress: Option<String>,
    #[serde(default)]
    pub isdefault: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct VirtualMachine {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub displayname: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub zoneid: String,
    #[serde(default)]
    pub serviceofferingid: String,
    #[serde(default)]
    pub serviceofferingname: String,
    #[serde(default)]
    pub hypervisor: String,
    #[serde(default)]
    pub nic: Vec<Nic>,
    /// The host the VM runs on (the CloudStack CCM reports it as the node's Hostname).
    #[serde(default)]
    pub hostname: Option<String>,
    /// The static-NAT public address, if any (the CCM's ExternalIP).
    #[serde(default)]
    pub publicip: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct NetworkService {
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Network {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub zoneid: String,
    /// Isolated, Shared, L2.
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub vpcid: Option<String>,
    /// The network's services (`Lb`, `Firewall`, `SourceNat`, …).
    #[serde(default)]
    pub service: Vec<NetworkService>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct PublicIpAddress {
    pub id: String,
    pub ipaddress: String,
    /// When the address was associated (e.g. `2024-05-01T10:00:00+0000`).
    #[serde(default)]
    pub allocated: Option<String>,
    #[serde(default)]
    pub associatednetworkid: Option<String>,
    #[serde(default)]
    pub issourcenat: bool,
    /// Allocated, Allocating, Free, Releasing.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub zoneid: String,
    #[serde(default)]
    pub vpcid: Option<String>,
    #[serde(default)]
    pub tags: Vec<Tag>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct LoadBalancerRule {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub publicipid: String,
    #[serde(default)]
    pub publicip: String,
    #[serde(deserialize_with = "lenient_u32")]
    pub publicport: u32,
    #[serde(deserialize_with = "lenient_u32")]
    pub privateport: u32,
    pub algorithm: String,
    #[serde(default)]
    pub protocol: String,
    /// Space-separated after create, comma-separated after an update: compare as sets.
    #[serde(default)]
    pub cidrlist: Option<String>,
    #[serde(default)]
    pub networkid: Option<String>,
    #[serde(default)]
    pub zoneid: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub tags: Vec<Tag>,
}

impl LoadBalancerRule {
    /// The rule's source CIDRs, whichever separator the server used.
    pub fn cidrs(&self) -> Vec<String> {
        split_cidrs(self.cidrlist.as_deref().unwrap_or(""))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct FirewallRule {
    pub id: String,
    pub protocol: String,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub startport: u32,
    #[serde(default, deserialize_with = "lenient_u32")]
    pub endport: u32,
    pub ipaddressid: String,
    #[serde(default)]
    pub ipaddress: String,
    #[serde(default)]
    pub cidrlist: Option<String>,
    #[serde(default)]
    pub state: String,
}

impl FirewallRule {
    pub fn cidrs(&self) -> Vec<String> {
        split_cidrs(self.cidrlist.as_deref().unwrap_or(""))
    }
}

/// A resource tag (createTags / listTags); objects also carry theirs in `tags`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Tag {
    pub key: String,
    pub value: String,
    #[serde(default)]
    pub resourcetype: String,
    #[serde(default)]
    pub resourceid: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct SshKeyPair {
    pub name: String,
    #[serde(default)]
    pub fingerprint: String,
}

/// `listCapabilities` → `capability`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Capabilities {
    pub cloudstackversion: String,
    #[serde(default)]
    pub kubernetesserviceenabled: bool,
}

/// CIDR lists arrive space- or comma-separated; sorted so that they compare as sets.
pub fn split_cidrs(text: &str) -> Vec<String> {
    let mut cidrs: Vec<String> = text
        .split([' ', ','])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    cidrs.sort();
    cidrs.dedup();
    cidrs
}

/// The server's version (`cloudstackversion`, e.g. `4.22.0.0`) as (major, minor, patch).
pub fn parse_server_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split('.').map(|p| {
        p.chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .parse::<u32>()
    });
    let major = parts.next()?.ok()?;
    let minor = parts.next()?.ok()?;
    let patch = parts.next().and_then(Result::ok).unwrap_or(0);
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rule_ports_may_arrive_as_strings_and_cidrs_with_either_separator() {
        let rule: LoadBalancerRule = serde_json::from_value(json!({
            "id": "r1", "name": "edge-tcp-80", "publicipid": "ip1", "publicport": "80",
            "privateport": 30080, "algorithm": "roundrobin", "protocol": "tcp",
            "cidrlist": "10.0.0.0/8,192.168.0.0/16"
        }))
        .unwrap();
        assert_eq!((rule.publicport, rule.privateport), (80, 30080));
        assert_eq!(rule.cidrs(), ["10.0.0.0/8", "192.168.0.0/16"]);
        assert_eq!(split_cidrs("192.168.0.0/16 10.0.0.0/8"), rule.cidrs());
    }

    #[test]
    fn server_versions_parse_with_four_parts_or_a_suffix() {
        assert_eq!(parse_server_version("4.22.0.0"), Some((4, 22, 0)));
        assert_eq!(parse_server_version("4.20.1.0-SNAPSHOT"), Some((4, 20, 1)));
        assert_eq!(parse_server_version("bogus"), None);
    }
}
