//! What the cloud holds of one load balancer: its public IP and its LB rules on that IP, found
//! the way a lost state can still find them — by the IDs the state recorded, else by the
//! address the config names, else by skyplan's ownership tag — and the IDs recorded in the
//! state entry.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::super::api::{LoadBalancerRule, PublicIpAddress, Tag};
use super::super::live::Inventory;
use super::super::OWNER_TAG;
use crate::spec::{CsProtocol, PublicIp};
use skyplan_core::state::ResourceState;

/// The IDs of a load balancer's objects (the state entry's `ids`; its `id` is the public IP's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LbIds {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_ip: Option<String>,
    /// The address itself, for messages and for `ReleaseIp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// skyplan associated the IP, so deleting the load balancer releases it.
    #[serde(default)]
    pub ip_associated_by_skyplan: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// LB rule IDs by rule name.
    #[serde(default)]
    pub rules: BTreeMap<String, String>,
}

impl LbIds {
    /// The IDs a state entry recorded; unreadable (an older format) counts as none.
    pub fn from_state(state: &ResourceState) -> LbIds {
        let mut ids: LbIds = serde_json::from_value(state.ids.clone()).unwrap_or_default();
        if ids.public_ip.is_none() && !state.id.is_empty() {
            ids.public_ip = Some(state.id.clone());
        }
        ids
    }
}

/// The live objects of one load balancer.
#[derive(Debug, Clone, Default)]
pub struct Found<'a> {
    pub ip: Option<&'a PublicIpAddress>,
    /// skyplan associated the IP: the state says so, or it carries the ownership tag (skyplan
    /// tags only the IPs it associates).
    pub ip_ours: bool,
    /// The IP is one an interrupted apply associated for this load balancer but did not get to
    /// tag (`Inventory::recovered_ips`): the plan adopts it instead of associating another.
    pub ip_recovered: bool,
    /// This load balancer's rules on the IP; rules of others on the same IP are left out.
    pub rules: Vec<&'a LoadBalancerRule>,
}

impl Found<'_> {
    /// Whether anything of the load balancer exists in the cloud.
    pub fn exists(&self) -> bool {
        self.ip_ours || !self.rules.is_empty()
    }
}

/// Whether `tags` carry skyplan's ownership tag for `address`.
pub fn owned_by(tags: &[Tag], address: &str) -> bool {
    tags.iter()
        .any(|t| t.key == OWNER_TAG && t.value == address)
}

/// Whether a rule name is `<base>-<tcp|udp|tcp-proxy>-<port>` for one of the bases.
fn named_for(rule: &str, bases: &[&str]) -> bool {
    bases.iter().any(|base| {
        rule.strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|rest| rest.rsplit_once('-'))
            .is_some_and(|(protocol, port)| {
                CsProtocol::parse(protocol).is_some() && port.parse::<u16>().is_ok()
            })
    })
}

/// Finds the load balancer's objects. `bases` are the rule-name bases it may use (the config's
/// and the last applied one's name); `wanted` the public IP the config asks for.
pub fn find<'a>(
    live: &'a Inventory,
    address: &str,
    bases: &[&str],
    wanted: Option<&PublicIp>,
    prior: Option<&LbIds>,
) -> Result<Found<'a>, String> {
    let ip = find_ip(live, address, wanted, prior)?;
    let Some(ip) = ip else {
        let recovered = match wanted {
            None | Some(PublicIp::Auto) => live.recovered_ips.get(address),
            Some(PublicIp::Address(_)) => None,
        };
        return Ok(Found {
            ip: recovered.and_then(|id| live.public_ip(id)),
            ip_recovered: recovered.is_some(),
            ..Found::default()
        });
    };
    let ip_ours = prior
        .is_some_and(|p| p.ip_associated_by_skyplan && p.public_ip.as_deref() == Some(&ip.id))
        || owned_by(&ip.tags, address);
    let known: Vec<&str> = prior
        .map(|p| p.rules.values().map(String::as_str).collect())
        .unwrap_or_default();
    let rules = live
        .rules_on(&ip.id)
        .filter(|r| {
            known.contains(&r.id.as_str())
                || owned_by(&r.tags, address)
                || named_for(&r.name, bases)
        })
        .collect();
    Ok(Found {
        ip: Some(ip),
        ip_ours,
        ip_recovered: false,
        rules,
    })
}

fn find_ip<'a>(
    live: &'a Inventory,
    address: &str,
    wanted: Option<&PublicIp>,
    prior: Option<&LbIds>,
) -> Result<Option<&'a PublicIpAddress>, String> {
    if let Some(ip) = prior
        .and_then(|p| p.public_ip.as_deref())
        .and_then(|id| live.public_ip(id))
    {
        return Ok(Some(ip));
    }
    if let Some(PublicIp::Address(wanted)) = wanted {
        if let Some(ip) = live.public_ip_by_address(wanted) {
            return Ok(Some(ip));
        }
    }
    let tagged: Vec<&PublicIpAddress> = live
        .public_ips
        .iter()
        .filter(|ip| owned_by(&ip.tags, address) && !live.claimed_ips.contains(&ip.id))
        .collect();
    match tagged.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(format!(
            "{} public IPs carry the tag {OWNER_TAG}={address} ({}): release the extra ones or import the right one",
            many.len(),
            many.iter().map(|ip| ip.ipaddress.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_of_a_base_are_recognised_and_others_not() {
        assert!(named_for("edge-tcp-80", &["edge"]));
        assert!(named_for("edge-tcp-proxy-443", &["edge"]));
        assert!(!named_for("edge2-tcp-80", &["edge"]));
        assert!(!named_for("edge-http-80", &["edge"]));
        assert!(!named_for("api-lb", &["edge"]));
    }
}
