//! The shared state behind every route: the world under a lock, the server's base URL (for
//! requests that name no host, see `origin`), the settle time, the request counters, the
//! fault injector, and the signal that tells the writer the world changed.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp, Unit};
use tokio::sync::Notify;
use uuid::Uuid;

use super::api::ApiResult;
use super::faults::{Faults, Injector, Recreate};
use super::origin::Origin;
use super::persist;
use super::stats::RequestStats;
use super::world::World;
use crate::unhealthy::UnhealthyDraw;

#[derive(Clone)]
pub struct Sim(Arc<Inner>);

struct Inner {
    /// Reads (every list of a refresh) run side by side; changes one at a time.
    world: RwLock<World>,
    base: String,
    settle: SignedDuration,
    token: String,
    stats: RequestStats,
    injector: Injector,
    recreate_on_patch: Option<Recreate>,
    unhealthy: Option<Arc<UnhealthyDraw>>,
    dirty: Notify,
}

/// What rendering and mutating need besides the world: where the client reached the server
/// and what time the request is handled at.
pub struct Ctx {
    pub base: String,
    pub now: Timestamp,
    settle: SignedDuration,
    /// The fault mode in which an in-place PATCH recreates an object.
    pub recreate_on_patch: Option<Recreate>,
    unhealthy: Option<Arc<UnhealthyDraw>>,
}

impl Ctx {
    /// Absolute URL of `path` (relative to `/v1`).
    pub fn href(&self, path: impl std::fmt::Display) -> String {
        format!("{}/{path}", self.base)
    }

    /// When a change made now has been applied.
    pub fn settled_at(&self) -> Timestamp {
        self.now.saturating_add(self.settle).unwrap_or(self.now)
    }

    /// How long a change takes to settle (what monitor seconds are scaled by, see `health`).
    pub fn settle(&self) -> SignedDuration {
        self.settle
    }

    /// Records that `pool` (of load balancer `lb`) changed: the `unhealthy-after-change` fault,
    /// when on, decides anew whether its members stay `down`.
    pub fn pool_changed(&self, world: &mut World, pool: Uuid, lb: Uuid) {
        let name = world.load_balancer(lb).map(|lb| lb.name.as_str());
        let kept_down = match (&self.unhealthy, name) {
            (Some(draw), Some(name)) => draw.picks(name),
            _ => false,
        };
        world.pool_changed(pool, kept_down);
    }
}

impl Sim {
    pub fn new(
        world: World,
        base: String,
        settle: Duration,
        token: String,
        faults: Faults,
    ) -> Self {
        Sim(Arc::new(Inner {
            world: RwLock::new(world),
            base,
            settle: SignedDuration::try_from(settle).unwrap_or(SignedDuration::MAX),
            token,
            stats: RequestStats::default(),
            recreate_on_patch: faults.recreate_on_patch,
            unhealthy: faults
                .unhealthy_after_change
                .clone()
                .map(|picks| Arc::new(UnhealthyDraw::new(picks, faults.seed))),
            injector: Injector::new(faults),
            dirty: Notify::new(),
        }))
    }

    pub fn read<T>(&self, origin: &Origin, f: impl FnOnce(&World, &Ctx) -> T) -> T {
        f(&self.reading(), &self.ctx(origin))
    }

    /// A read that looks up many objects by UUID (a list): the world's index is built first,
    /// unless the world has not changed since it last was.
    pub fn read_indexed<T>(&self, origin: &Origin, f: impl FnOnce(&World, &Ctx) -> T) -> T {
        f(self.reading().indexed(), &self.ctx(origin))
    }

    /// Runs a mutation; a successful one wakes the writer. A failing one must not have changed
    /// the world (handlers validate before they mutate). The index is dropped first, so the
    /// mutation's own lookups search the world as it is.
    pub fn write<T>(
        &self,
        origin: &Origin,
        f: impl FnOnce(&mut World, &Ctx) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let mut world = self.writing();
        world.unindex();
        let result = f(&mut world, &self.ctx(origin));
        drop(world);
        if result.is_ok() {
            self.0.dirty.notify_one();
        }
        result
    }

    /// The world file's content.
    pub fn world_json(&self) -> String {
        persist::world_text(&*self.reading())
    }

    /// Resolves once the world changed since the last call.
    pub async fn changed(&self) {
        self.0.dirty.notified().await
    }

    pub fn stats(&self) -> &RequestStats {
        &self.0.stats
    }

    pub fn injector(&self) -> &Injector {
        &self.0.injector
    }

    pub fn token(&self) -> &str {
        &self.0.token
    }

    // A handler that panicked mid-change leaves at worst one half-made object: keep serving.
    fn reading(&self) -> RwLockReadGuard<'_, World> {
        self.0
            .world
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn writing(&self) -> RwLockWriteGuard<'_, World> {
        self.0
            .world
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn ctx(&self, origin: &Origin) -> Ctx {
        let now = Timestamp::now();
        Ctx {
            base: origin.base_or(&self.0.base),
            now: now.round(Unit::Microsecond).unwrap_or(now),
            settle: self.0.settle,
            recreate_on_patch: self.0.recreate_on_patch,
            unhealthy: self.0.unhealthy.clone(),
        }
    }
}
