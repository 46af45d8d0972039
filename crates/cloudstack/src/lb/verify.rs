//! Apply holds a direct-mode load balancer's rules to the plan: once its operations are done,
//! the rules on its public IP (one `listLoadBalancerRules`) are compared with the IDs apply
//! kept and created. A rule under another ID was recreated behind the plan's back; a rule
//! missing is gone. Other rules on the IP (CKS's API rule on a source-NAT IP, another load
//! balancer's) are none of this one's business.

use std::collections::BTreeMap;

use super::execute::Api;
use super::found::LbIds;
use super::impact::{rule, Change};
use super::request::{params, text};
use skyplan_core::model::Impact;
use skyplan_core::plan::{ResourceChange, Verification};
use skyplan_core::state::ResourceState;

/// Reads the rules on the IP of `entry` (the state apply wrote) and compares them.
pub(crate) async fn verify<A: Api>(
    client: &A,
    change: &ResourceChange,
    entry: &ResourceState,
) -> Verification {
    let address = change.address.to_string();
    let predicted = change.impact();
    let expected: LbIds = serde_json::from_value(entry.ids.clone()).unwrap_or_default();
    let Some(ip) = expected.public_ip.as_deref() else {
        return unverified(&address, predicted, "the public IP is unknown".into());
    };
    let listed = client
        .list(
            "listLoadBalancerRules",
            &params(&[("publicipid", ip)]),
            "loadbalancerrule",
        )
        .await;
    match listed {
        Ok(rules) => {
            let observed = rules
                .iter()
                .map(|r| (text(r, "name"), text(r, "id")))
                .collect();
            compare(&address, predicted, &expected.rules, &observed)
        }
        Err(e) => unverified(&address, predicted, e.to_string()),
    }
}

fn unverified(address: &str, predicted: Impact, why: String) -> Verification {
    Verification {
        address: address.to_string(),
        predicted,
        observed: predicted,
        differences: vec![format!("could not be verified: {why}")],
    }
}

/// The rules apply expects (name → ID) against the rules on the IP.
pub fn compare(
    address: &str,
    predicted: Impact,
    expected: &BTreeMap<String, String>,
    observed: &BTreeMap<String, String>,
) -> Verification {
    let mut found: Vec<(Impact, String)> = Vec::new();
    for (name, id) in expected {
        match observed.get(name) {
            Some(seen) if seen == id => {}
            Some(_) => found.push((
                rule(Change::NodePort).impact,
                format!("rule {name} was recreated"),
            )),
            None => found.push((
                rule(Change::PortRemoved).impact,
                format!("rule {name} is gone"),
            )),
        }
    }
    Verification {
        address: address.to_string(),
        predicted,
        observed: found.iter().map(|(i, _)| *i).fold(predicted, Impact::max),
        differences: found.into_iter().map(|(_, text)| text).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(n, i)| (n.to_string(), i.to_string()))
            .collect()
    }

    #[test]
    fn rules_under_their_ids_are_as_predicted_and_others_on_the_ip_ignored() {
        let expected = rules(&[("web-tcp-80", "r1")]);
        let observed = rules(&[("web-tcp-80", "r1"), ("cks-api", "r9")]);
        let verified = compare("load-balancer.web", Impact::Minimal, &expected, &observed);
        assert_eq!(verified.summary(), "as predicted");
    }

    #[test]
    fn a_recreated_or_missing_rule_is_an_under_prediction() {
        let expected = rules(&[("web-tcp-80", "r1"), ("web-tcp-443", "r2")]);
        let observed = rules(&[("web-tcp-80", "r7")]);
        let verified = compare("load-balancer.web", Impact::Minimal, &expected, &observed);
        assert_eq!(
            verified.summary(),
            "predicted minimal, but rule web-tcp-443 is gone; rule web-tcp-80 was recreated"
        );
        assert!(verified.under_predicted());
        assert_eq!(verified.observed, Impact::PoolRecreate);
    }
}
