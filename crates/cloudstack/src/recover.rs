//! What an interrupted apply may have left untagged. CloudStack cannot tag a public IP in the
//! call that associates it (`associateIpAddress` takes no tags): an apply killed between that
//! call and `createTags` leaves an address nobody knows is skyplan's, and the next apply would
//! associate another. The journal says when that association was attempted; the address it
//! made is the one allocated from then on that carries no tag, no rule and no firewall rule.

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::api::PublicIpAddress;
use super::lb::ops::{LbOp, ASSOCIATE_TEXT};
use super::live::Inventory;
use skyplan_core::model::ResourceKind;
use skyplan_core::state::journal::{Interrupted, Phase};

/// How much earlier than the journal's intent the cloud's clock may date the allocation.
const CLOCK_SKEW: jiff::SignedDuration = jiff::SignedDuration::from_secs(120);

/// Per load-balancer address, when an interrupted apply started associating a public IP that
/// it did not get to tag.
pub fn untagged_associations(interrupted: &Interrupted) -> BTreeMap<String, Timestamp> {
    let tag = LbOp::TagIp.to_string();
    let mut started: BTreeMap<String, Timestamp> = BTreeMap::new();
    for entry in &interrupted.entries {
        if entry.address.kind != ResourceKind::LoadBalancer {
            continue;
        }
        let address = entry.address.to_string();
        if entry.phase == Phase::Intent && entry.operation.starts_with(ASSOCIATE_TEXT) {
            if let Ok(time) = entry.time.parse::<Timestamp>() {
                started.entry(address).or_insert(time);
            }
        } else if entry.phase == Phase::Done && entry.operation == tag {
            started.remove(&address);
        }
    }
    started
}

/// The allocation time of an address, in either format CloudStack and its simulators use.
fn allocated(ip: &PublicIpAddress) -> Option<Timestamp> {
    let text = ip.allocated.as_deref()?;
    text.parse::<Timestamp>().ok().or_else(|| {
        jiff::fmt::strtime::parse("%Y-%m-%dT%H:%M:%S%z", text)
            .and_then(|t| t.to_timestamp())
            .ok()
    })
}

/// An address nothing refers to: no tags, no LB rule, no firewall rule, not source NAT.
fn unclaimed(ip: &PublicIpAddress, live: &Inventory) -> bool {
    !ip.issourcenat
        && ip.state.eq_ignore_ascii_case("allocated")
        && ip.tags.is_empty()
        && live.rules_on(&ip.id).next().is_none()
        && live.firewall_rules_on(&ip.id).next().is_none()
}

/// For each load balancer whose association was interrupted, the earliest unclaimed address
/// allocated since; each address goes to one load balancer at most.
pub fn associated_by_interrupted_apply(
    started: &BTreeMap<String, Timestamp>,
    live: &Inventory,
) -> BTreeMap<String, String> {
    let mut candidates: Vec<(Timestamp, &PublicIpAddress)> = live
        .public_ips
        .iter()
        .filter(|ip| unclaimed(ip, live))
        .filter_map(|ip| allocated(ip).map(|t| (t, ip)))
        .collect();
    candidates.sort_by_key(|(time, ip)| (*time, ip.id.clone()));
    let mut by_start: Vec<(&Timestamp, &String)> = started.iter().map(|(a, t)| (t, a)).collect();
    by_start.sort();
    let mut found = BTreeMap::new();
    for (since, address) in by_start {
        let earliest = since.checked_sub(CLOCK_SKEW).unwrap_or(*since);
        let pick = candidates.iter().position(|(time, _)| *time >= earliest);
        if let Some(index) = pick {
            let (_, ip) = candidates.remove(index);
            found.insert(address.clone(), ip.id.clone());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use skyplan_core::model::Address;
    use skyplan_core::state::journal::Entry;

    fn entry(seq: u64, phase: Phase, operation: &str, time: &str) -> Entry {
        Entry {
            seq,
            time: time.into(),
            address: Address::new(ResourceKind::LoadBalancer, "edge"),
            phase,
            operation: operation.into(),
            ids: None,
            error: None,
        }
    }

    fn ip(id: &str, allocated: &str) -> PublicIpAddress {
        serde_json::from_value(serde_json::json!({
            "id": id, "ipaddress": format!("198.51.100.{}", id.len()),
            "state": "Allocated", "allocated": allocated, "issourcenat": false
        }))
        .unwrap()
    }

    const T: &str = "2026-11-23T10:00:00Z";

    #[test]
    fn an_association_not_followed_by_its_tag_is_remembered() {
        let associate = "associate a new public IP with network k8s-net";
        let killed = Interrupted {
            entries: vec![entry(0, Phase::Intent, associate, T)],
        };
        let started = untagged_associations(&killed);
        assert_eq!(started.len(), 1);
        let tagged = Interrupted {
            entries: vec![
                entry(0, Phase::Intent, associate, T),
                entry(1, Phase::Done, associate, T),
                entry(2, Phase::Intent, "tag the public IP", T),
                entry(3, Phase::Done, "tag the public IP", T),
            ],
        };
        assert!(untagged_associations(&tagged).is_empty());
    }

    #[test]
    fn the_first_unclaimed_address_allocated_since_is_taken_and_older_ones_are_not() {
        let started = BTreeMap::from([("load-balancer.edge".to_string(), T.parse().unwrap())]);
        let mut live = Inventory {
            public_ips: vec![
                ip("old", "2026-11-23T09:00:00Z"),
                ip("new", "2026-11-23T10:00:01+0000"),
                ip("newer", "2026-11-23T10:00:05Z"),
            ],
            ..Inventory::default()
        };
        let found = associated_by_interrupted_apply(&started, &live);
        assert_eq!(found["load-balancer.edge"], "new");
        live.public_ips[1].tags.push(
            serde_json::from_value(serde_json::json!(
            {"key": "owner", "value": "someone"}))
            .unwrap(),
        );
        let found = associated_by_interrupted_apply(&started, &live);
        assert_eq!(
            found["load-balancer.edge"], "newer",
            "a tagged address is someone's"
        );
    }
}
