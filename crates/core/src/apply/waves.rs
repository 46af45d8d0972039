//! The order of resources in an apply: what a resource depends on (a load balancer's cluster)
//! is created and updated before it, and deleted after it. Resources of one wave have no
//! dependency between them and run side by side.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::Address;
use crate::plan::{Action, ResourceChange};

/// Splits `work` into waves, each to run after the one before. `depends_on` gives what a
/// resource needs (from the config, or the state once it is gone from the config).
/// Dependencies outside `work` are ignored: they are not being changed.
pub fn waves<'a>(
    work: &[&'a ResourceChange],
    depends_on: impl Fn(&Address) -> Vec<Address>,
) -> Vec<Vec<&'a ResourceChange>> {
    layer(work, &precedence(work, depends_on))
}

/// What must finish before each change of `work` starts: what it depends on, for a create or
/// update; for a delete the other way round, its dependents (a cluster goes only once its load
/// balancers are gone). Apply orders by it, and holds back by it: what comes after a change
/// held back cannot run.
pub fn precedence(
    work: &[&ResourceChange],
    depends_on: impl Fn(&Address) -> Vec<Address>,
) -> BTreeMap<Address, Vec<Address>> {
    let planned: BTreeSet<&Address> = work.iter().map(|c| &c.address).collect();
    let deleted: BTreeSet<&Address> = work
        .iter()
        .filter(|c| c.action == Action::Delete)
        .map(|c| &c.address)
        .collect();
    let mut before: BTreeMap<Address, Vec<Address>> = BTreeMap::new();
    for change in work {
        for dependency in depends_on(&change.address) {
            if !planned.contains(&dependency) {
                continue;
            }
            if deleted.contains(&change.address) {
                before
                    .entry(dependency)
                    .or_default()
                    .push(change.address.clone());
            } else {
                before
                    .entry(change.address.clone())
                    .or_default()
                    .push(dependency);
            }
        }
    }
    before
}

/// Kahn's algorithm by levels; a cycle (which config validation prevents) ends up in one last
/// wave rather than being dropped.
fn layer<'a>(
    work: &[&'a ResourceChange],
    before: &BTreeMap<Address, Vec<Address>>,
) -> Vec<Vec<&'a ResourceChange>> {
    let mut done: BTreeSet<&Address> = BTreeSet::new();
    let mut left: Vec<&'a ResourceChange> = work.to_vec();
    let mut waves = Vec::new();
    while !left.is_empty() {
        let ready = |c: &&ResourceChange| {
            before
                .get(&c.address)
                .is_none_or(|needs| needs.iter().all(|n| done.contains(n)))
        };
        let (wave, rest): (Vec<_>, Vec<_>) = left.into_iter().partition(ready);
        if wave.is_empty() {
            waves.push(rest);
            break;
        }
        done.extend(wave.iter().map(|c| &c.address));
        waves.push(wave);
        left = rest;
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;

    fn change(address: &Address, action: Action) -> ResourceChange {
        let mut change = ResourceChange::no_op(address.clone(), "cloudstack", None);
        change.action = action;
        change
    }

    fn names(waves: &[Vec<&ResourceChange>]) -> Vec<Vec<String>> {
        waves
            .iter()
            .map(|w| w.iter().map(|c| c.address.to_string()).collect())
            .collect()
    }

    fn lab() -> Address {
        Address::new(ResourceKind::Cluster, "lab")
    }

    fn edge() -> Address {
        Address::new(ResourceKind::LoadBalancer, "edge")
    }

    fn edge_needs_lab(address: &Address) -> Vec<Address> {
        if *address == edge() {
            vec![lab()]
        } else {
            vec![]
        }
    }

    #[test]
    fn a_cluster_is_created_before_its_load_balancer() {
        let (lb, cluster) = (
            change(&edge(), Action::Create),
            change(&lab(), Action::Create),
        );
        let waves = waves(&[&lb, &cluster], edge_needs_lab);
        assert_eq!(names(&waves), [["cluster.lab"], ["load-balancer.edge"]]);
    }

    #[test]
    fn a_load_balancer_is_deleted_before_its_cluster() {
        let (lb, cluster) = (
            change(&edge(), Action::Delete),
            change(&lab(), Action::Delete),
        );
        let waves = waves(&[&cluster, &lb], edge_needs_lab);
        assert_eq!(names(&waves), [["load-balancer.edge"], ["cluster.lab"]]);
    }

    #[test]
    fn independent_resources_share_a_wave_and_unplanned_dependencies_are_ignored() {
        let other = Address::new(ResourceKind::LoadBalancer, "other");
        let (lb, other) = (
            change(&edge(), Action::Update),
            change(&other, Action::Update),
        );
        let waves = waves(&[&lb, &other], edge_needs_lab);
        assert_eq!(
            names(&waves),
            [["load-balancer.edge", "load-balancer.other"]]
        );
    }
}
