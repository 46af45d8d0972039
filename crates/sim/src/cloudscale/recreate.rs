//! The `recreate-on-patch=pool` fault: a cloud that, asked to change a pool's listener or
//! health monitor in place, recreates the pool instead — what skyplan's plan would have called
//! `pool-recreate`. The pool, its members and its monitor get new UUIDs and creation times;
//! the listener keeps its own and follows the pool. Clients see exactly what a real recreate
//! leaves behind, so apply's verification can be tested against it.

use jiff::Timestamp;
use uuid::Uuid;

use super::world::{find_mut, World};

impl World {
    /// Recreates pool `old` under a new UUID with everything under it; the load balancer is
    /// `changing` until `settled`. Nothing happens to a pool that does not exist; the new
    /// UUID and the load balancer's are returned.
    pub fn recreate_pool(
        &mut self,
        old: Uuid,
        now: Timestamp,
        settled: Timestamp,
    ) -> Option<(Uuid, Uuid)> {
        let new = Uuid::new_v4();
        let pool = find_mut(&mut self.pools, old)?;
        pool.uuid = new;
        pool.created_at = now;
        let lb = pool.load_balancer;
        for member in self.members.iter_mut().filter(|m| m.pool == old) {
            member.uuid = Uuid::new_v4();
            member.pool = new;
            member.created_at = now;
        }
        for monitor in self.health_monitors.iter_mut().filter(|m| m.pool == old) {
            monitor.uuid = Uuid::new_v4();
            monitor.pool = new;
            monitor.created_at = now;
        }
        for listener in self.listeners.iter_mut().filter(|l| l.pool == Some(old)) {
            listener.pool = Some(new);
        }
        self.mark_changing(lb, settled);
        self.unhealthy_pools.remove(&old);
        Some((new, lb))
    }
}
