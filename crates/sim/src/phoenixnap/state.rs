//! The shared state behind every route: the world under a lock, the transition time, the
//! client credentials and the tokens handed out, the request counters, the fault injector,
//! and the signal that tells the writer the world changed.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp, Unit};
use tokio::sync::Notify;

use super::api::ApiResult;
use super::auth::{Credentials, TokenStore};
use super::faults::{Faults, Injector};
use super::stats::RequestStats;
use super::world::World;

#[derive(Clone)]
pub struct Sim(Arc<Inner>);

struct Inner {
    world: RwLock<World>,
    transition: SignedDuration,
    credentials: Credentials,
    tokens: TokenStore,
    stats: RequestStats,
    injector: Injector,
    dirty: Notify,
}

/// The moment a request is handled at, and when a transition it starts finishes.
pub struct Ctx {
    pub now: Timestamp,
    transition: SignedDuration,
}

impl Ctx {
    pub fn done_at(&self) -> Timestamp {
        self.now.saturating_add(self.transition).unwrap_or(self.now)
    }
}

pub struct SimConfig {
    pub transition: Duration,
    pub credentials: Credentials,
    pub token_ttl: Duration,
    pub faults: Faults,
}

impl Sim {
    pub fn new(world: World, config: SimConfig) -> Self {
        Sim(Arc::new(Inner {
            world: RwLock::new(world),
            transition: SignedDuration::try_from(config.transition).unwrap_or(SignedDuration::MAX),
            credentials: config.credentials,
            tokens: TokenStore::new(config.token_ttl),
            stats: RequestStats::default(),
            injector: Injector::new(config.faults),
            dirty: Notify::new(),
        }))
    }

    /// A read; transitions are evaluated at `ctx.now` by whoever renders.
    pub fn read<T>(&self, f: impl FnOnce(&World, &Ctx) -> T) -> T {
        f(&self.reading(), &self.ctx())
    }

    /// Runs a mutation on the world with its finished transitions settled; a successful one
    /// wakes the writer. A failing one must not have changed the world (handlers validate
    /// before they mutate).
    pub fn write<T>(&self, f: impl FnOnce(&mut World, &Ctx) -> ApiResult<T>) -> ApiResult<T> {
        let ctx = self.ctx();
        let mut world = self.writing();
        world.settle(ctx.now);
        let result = f(&mut world, &ctx);
        drop(world);
        if result.is_ok() {
            self.0.dirty.notify_one();
        }
        result
    }

    /// The world file's content.
    pub fn world_json(&self) -> String {
        crate::persist::world_text(&*self.reading())
    }

    pub async fn changed(&self) {
        self.0.dirty.notified().await
    }

    pub fn stats(&self) -> &RequestStats {
        &self.0.stats
    }

    pub fn injector(&self) -> &Injector {
        &self.0.injector
    }

    pub fn credentials(&self) -> &Credentials {
        &self.0.credentials
    }

    pub fn tokens(&self) -> &TokenStore {
        &self.0.tokens
    }

    // A handler that panicked mid-change leaves at worst one half-made object: keep serving.
    fn reading(&self) -> RwLockReadGuard<'_, World> {
        self.0.world.read().unwrap_or_else(|p| p.into_inner())
    }

    fn writing(&self) -> RwLockWriteGuard<'_, World> {
        self.0.world.write().unwrap_or_else(|p| p.into_inner())
    }

    fn ctx(&self) -> Ctx {
        let now = Timestamp::now();
        Ctx {
            now: now.round(Unit::Millisecond).unwrap_or(now),
            transition: self.0.transition,
        }
    }
}
