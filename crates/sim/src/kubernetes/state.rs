//! The shared state behind every route: the world under a lock, the version `/version`
//! reports, the request counters, and the signal that tells the writer the world changed.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use super::stats::RequestStats;
use super::status::ApiResult;
use super::world::World;

#[derive(Clone)]
pub struct KubeSim(Arc<Inner>);

struct Inner {
    world: Mutex<World>,
    version: (u32, u32),
    stats: RequestStats,
    dirty: Notify,
}

impl KubeSim {
    pub fn new(world: World, version: (u32, u32)) -> Self {
        KubeSim(Arc::new(Inner {
            world: Mutex::new(world),
            version,
            stats: RequestStats::default(),
            dirty: Notify::new(),
        }))
    }

    pub fn read<T>(&self, f: impl FnOnce(&World) -> T) -> T {
        f(&self.lock())
    }

    /// Runs a change; a successful one wakes the writer. The store validates before it
    /// mutates, so a failing change leaves the world as it was.
    pub fn write<T>(&self, f: impl FnOnce(&mut World) -> ApiResult<T>) -> ApiResult<T> {
        let result = f(&mut self.lock());
        if result.is_ok() {
            self.0.dirty.notify_one();
        }
        result
    }

    pub fn world_json(&self) -> String {
        crate::persist::world_text(&*self.lock())
    }

    /// Resolves once the world changed since the last call.
    pub async fn changed(&self) {
        self.0.dirty.notified().await
    }

    pub fn version(&self) -> (u32, u32) {
        self.0.version
    }

    pub fn stats(&self) -> &RequestStats {
        &self.0.stats
    }

    fn lock(&self) -> MutexGuard<'_, World> {
        // A handler that panicked mid-change leaves at worst one half-made object: keep serving.
        self.0
            .world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
