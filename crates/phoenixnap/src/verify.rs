//! Apply holds the cloud to the plan: once a load balancer's operations are done, the block
//! that carries the Service's tags and the Service's address are compared with what the plan
//! said — the block it kept is still the one, attached to the network, and the Service carries
//! its third address. Costs the one block read apply makes anyway plus one Service read.

use super::api::IpBlock;
use super::ccm;
use super::impact::{rule, Change};
use super::ops::Op;
use skyplan_core::model::Impact;
use skyplan_core::plan::{ResourceChange, Verification};

/// What the cloud and the cluster show after apply.
pub struct Observed<'a> {
    /// The active block with the Service's four tags.
    pub block: Option<&'a IpBlock>,
    /// The network the plan attaches to.
    pub network: &'a str,
    /// The Service's `spec.loadBalancerIP`.
    pub service_address: Option<&'a str>,
}

/// The block the plan keeps: the prior one, unless the change makes a new one.
pub fn kept_block<'a>(change: &ResourceChange, prior_block: Option<&'a str>) -> Option<&'a str> {
    let creates = change
        .operations
        .iter()
        .any(|op| matches!(Op::of(op), Some(Op::CreateBlock { .. })));
    prior_block.filter(|_| !creates)
}

pub fn compare(change: &ResourceChange, kept: Option<&str>, observed: &Observed) -> Verification {
    let predicted = change.impact();
    let mut differences: Vec<(Change, String)> = Vec::new();
    match observed.block {
        None => differences.push((
            Change::BlockDeleted,
            "no block carries the Service's tags".into(),
        )),
        Some(block) => {
            if let Some(kept) = kept.filter(|k| *k != block.id) {
                differences.push((
                    Change::ReleasedByController,
                    format!("block {kept} was replaced by {} ({})", block.id, block.cidr),
                ));
            }
            if block.public_network() != Some(observed.network) || block.status != "assigned" {
                differences.push((
                    Change::BlockDetached,
                    format!(
                        "block {} is `{}`, not assigned to network {}",
                        block.id, block.status, observed.network
                    ),
                ));
            }
            let third = ccm::service_address(&block.cidr).map(|a| a.to_string());
            if observed.service_address != third.as_deref() {
                differences.push((
                    Change::AddressSetByHand,
                    format!(
                        "the Service carries {}, not the block's third address {}",
                        observed.service_address.unwrap_or("no address"),
                        third.unwrap_or_default()
                    ),
                ));
            }
        }
    }
    let observed_class = differences
        .iter()
        .map(|(c, _)| rule(*c).impact)
        .fold(predicted, Impact::max);
    Verification {
        address: change.address.to_string(),
        predicted,
        observed: observed_class,
        differences: differences.into_iter().map(|(_, d)| d).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skyplan_core::model::{Address, ResourceKind};
    use skyplan_core::plan::Action;

    fn block(id: &str, status: &str) -> IpBlock {
        IpBlock {
            id: id.into(),
            location: "PHX".into(),
            cidr_block_size: "/29".into(),
            cidr: "198.19.0.8/29".into(),
            status: status.into(),
            assigned_resource_id: Some("net".into()),
            assigned_resource_type: Some("public network".into()),
            description: None,
            tags: vec![],
        }
    }

    fn change() -> ResourceChange {
        let mut change = ResourceChange::no_op(
            Address::new(ResourceKind::LoadBalancer, "api"),
            "phoenixnap",
            None,
        );
        change.action = Action::Update;
        change
    }

    #[test]
    fn the_kept_block_attached_with_the_third_address_is_as_predicted() {
        let b = block("b1", "assigned");
        let observed = Observed {
            block: Some(&b),
            network: "net",
            service_address: Some("198.19.0.10"),
        };
        assert!(compare(&change(), Some("b1"), &observed).as_predicted());
    }

    #[test]
    fn a_replaced_block_is_an_under_prediction() {
        let b = block("b2", "assigned");
        let observed = Observed {
            block: Some(&b),
            network: "net",
            service_address: Some("198.19.0.10"),
        };
        let verification = compare(&change(), Some("b1"), &observed);
        assert!(verification.under_predicted());
        assert_eq!(verification.observed, Impact::PoolRecreate);
        assert!(verification
            .summary()
            .contains("block b1 was replaced by b2"));
    }

    #[test]
    fn a_wrong_address_or_an_unsettled_block_is_reported() {
        let b = block("b1", "assigning");
        let observed = Observed {
            block: Some(&b),
            network: "net",
            service_address: Some("198.19.0.11"),
        };
        let verification = compare(&change(), Some("b1"), &observed);
        assert_eq!(verification.differences.len(), 2, "{verification:?}");
        assert_eq!(verification.observed, Impact::Forbidden);
    }
}
