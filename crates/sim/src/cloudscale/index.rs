//! Lookups by UUID for the list endpoints. A plan of thousands of load balancers lists every
//! pool's members, and each member renders references to its pool, load balancer and monitor:
//! with linear searches that is quadratic in the size of the account. The index is built once,
//! on the first list after a change (`World::indexed`), and dropped by every change, so it
//! never describes an older world; reads of one object between changes do without it.

use std::collections::HashMap;

use uuid::Uuid;

use super::world::World;

/// Positions in the world's collections, valid until the world next changes.
#[derive(Debug, Default)]
pub struct Index {
    load_balancers: HashMap<Uuid, usize>,
    pools: HashMap<Uuid, usize>,
    /// Members of each pool, in creation order.
    members_by_pool: HashMap<Uuid, Vec<usize>>,
    /// The first monitor of each pool, as a linear search finds it.
    monitor_by_pool: HashMap<Uuid, usize>,
}

impl Index {
    pub fn of(world: &World) -> Index {
        let mut index = Index {
            load_balancers: positions(world.load_balancers.iter().map(|lb| lb.uuid)),
            pools: positions(world.pools.iter().map(|pool| pool.uuid)),
            ..Index::default()
        };
        for (position, member) in world.members.iter().enumerate() {
            let pool = index.members_by_pool.entry(member.pool).or_default();
            pool.push(position);
        }
        for (position, monitor) in world.health_monitors.iter().enumerate() {
            index
                .monitor_by_pool
                .entry(monitor.pool)
                .or_insert(position);
        }
        index
    }

    pub fn load_balancer(&self, uuid: Uuid) -> Option<usize> {
        self.load_balancers.get(&uuid).copied()
    }

    pub fn pool(&self, uuid: Uuid) -> Option<usize> {
        self.pools.get(&uuid).copied()
    }

    pub fn members_of(&self, pool: Uuid) -> &[usize] {
        self.members_by_pool.get(&pool).map_or(&[], Vec::as_slice)
    }

    pub fn monitor_of(&self, pool: Uuid) -> Option<usize> {
        self.monitor_by_pool.get(&pool).copied()
    }
}

/// The first position of each UUID (a UUID is unique, but a hand-written world may repeat one:
/// the first wins, as with a linear search).
fn positions(uuids: impl Iterator<Item = Uuid>) -> HashMap<Uuid, usize> {
    let mut positions = HashMap::new();
    for (position, uuid) in uuids.enumerate() {
        positions.entry(uuid).or_insert(position);
    }
    positions
}
