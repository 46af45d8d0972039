//! A refreshed snapshot with its load balancers looked up by UUID and by owner tag. A plan
//! finds each target's live load balancer this way; searching the list instead made a plan
//! of 5,000 load balancers quadratic.

use std::collections::HashMap;
use std::ops::Deref;

use super::objects::{LbObjects, Snapshot, OWNER_TAG};

#[derive(Debug, Default)]
pub struct IndexedSnapshot {
    snapshot: Snapshot,
    by_uuid: HashMap<String, usize>,
    /// Positions in the snapshot's order, so a tag carried twice is reported in that order.
    by_owner: HashMap<String, Vec<usize>>,
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
        }
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
}
