//! A refreshed snapshot with its load balancers looked up by UUID and by owner tag. A plan
//! finds each target's live load balancer this way; searching the list instead made a plan
//! of 5,000 load balancers quadratic.

use std::collections::{HashMap, HashSet};
use std::ops::Deref;

use super::objects::{LbObjects, Snapshot, OWNER_TAG};

#[derive(Debug, Default)]
pub struct IndexedSnapshot {
    snapshot: Snapshot,
    by_uuid: HashMap<String, usize>,
    /// Positions in the snapshot's order, so a tag carried twice is reported in that order.
    by_owner: HashMap<String, Vec<usize>>,
    /// The UUIDs the refreshed targets' state entries name: a load balancer one entry manages
    /// is never another address's by its tag (a tag left behind by a move or an import).
    claimed: HashSet<String>,
}

impl IndexedSnapshot {
    pub fn new(snapshot: Snapshot) -> IndexedSnapshot {
        let mut by_uuid = HashMap::new();
        let mut by_owner: HashMap<String, Vec<usize>> = HashMap::new();
        for (position, lb) in snapshot.load_balancers.iter().enumerate() {
            if let Some(uuid) = &lb.lb.uuid {
                by_uuid.entry(uuid.clone()).or_insert(position);
            }
            if let Some(owner) = lb.lb.tags.get(OWNER_TAG) {
                by_owner.entry(owner.clone()).or_default().push(position);
            }
        }
        IndexedSnapshot {
            snapshot,
            by_uuid,
            by_owner,
            claimed: HashSet::new(),
        }
    }

    /// Records the UUIDs the state's entries name (see [`IndexedSnapshot::owned_by`]).
    pub fn claimed_by_the_state(mut self, uuids: HashSet<String>) -> IndexedSnapshot {
        self.claimed = uuids;
        self
    }

    /// Same answer as [`Snapshot::load_balancer`], in constant time.
    pub fn load_balancer(&self, uuid: &str) -> Option<&LbObjects> {
        let position = *self.by_uuid.get(uuid)?;
        Some(&self.snapshot.load_balancers[position])
    }

    /// Same answer as [`Snapshot::owned_by`], without reading every load balancer.
    pub fn owned_by<'a>(&'a self, address: &str) -> impl Iterator<Item = &'a LbObjects> + 'a {
        let positions = self.by_owner.get(address).map_or(&[][..], Vec::as_slice);
        positions
            .iter()
            .map(|&position| &self.snapshot.load_balancers[position])
    }

    /// The load balancers tagged with `address` that no state entry names: what an address
    /// new to the state adopts by its tag.
    pub fn unclaimed_owned_by<'a>(
        &'a self,
        address: &str,
    ) -> impl Iterator<Item = &'a LbObjects> + 'a {
        self.owned_by(address).filter(|lb| {
            !lb.lb
                .uuid
                .as_ref()
                .is_some_and(|u| self.claimed.contains(u))
        })
    }
}

impl Deref for IndexedSnapshot {
    type Target = Snapshot;

    fn deref(&self) -> &Snapshot {
        &self.snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::LbObject;

    fn lb(uuid: &str, owner: Option<&str>) -> LbObjects {
        let mut tags = crate::objects::Tags::new();
        if let Some(owner) = owner {
            tags.insert(OWNER_TAG.to_string(), owner.to_string());
        }
        LbObjects {
            lb: LbObject {
                uuid: Some(uuid.into()),
                name: uuid.into(),
                flavor: "lb-standard".into(),
                zone: "lpg1".into(),
                vip_addresses: vec![],
                tags,
                status: None,
            },
            pools: Default::default(),
            floating_ips: Default::default(),
        }
    }

    #[test]
    fn answers_as_the_linear_searches_do() {
        let snapshot = Snapshot {
            load_balancers: vec![
                lb("a", Some("load-balancer.x")),
                lb("b", None),
                lb("c", Some("load-balancer.x")),
                lb("d", Some("load-balancer.y")),
            ],
            ..Snapshot::default()
        };
        let indexed = IndexedSnapshot::new(snapshot.clone());
        for uuid in ["a", "b", "c", "d", "e"] {
            assert_eq!(indexed.load_balancer(uuid), snapshot.load_balancer(uuid));
        }
        for owner in ["load-balancer.x", "load-balancer.y", "load-balancer.z"] {
            let fast: Vec<_> = indexed.owned_by(owner).collect();
            let slow: Vec<_> = snapshot.owned_by(owner).collect();
            assert_eq!(fast, slow, "{owner}");
        }
        assert_eq!(indexed.load_balancers.len(), 4);
    }

    #[test]
    fn a_load_balancer_a_state_entry_names_is_no_other_addresss_by_its_tag() {
        let snapshot = Snapshot {
            load_balancers: vec![
                lb("moved", Some("load-balancer.old")),
                lb("lost", Some("load-balancer.old")),
            ],
            ..Snapshot::default()
        };
        let indexed = IndexedSnapshot::new(snapshot)
            .claimed_by_the_state(HashSet::from(["moved".to_string()]));
        let adoptable: Vec<_> = indexed.unclaimed_owned_by("load-balancer.old").collect();
        assert_eq!(adoptable.len(), 1);
        assert_eq!(adoptable[0].lb.uuid.as_deref(), Some("lost"));
        assert_eq!(indexed.owned_by("load-balancer.old").count(), 2);
    }
}
