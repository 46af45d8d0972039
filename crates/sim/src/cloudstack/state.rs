//! The shared state behind every request: the world under a lock, the keys, the settings a
//! command needs ([`Ctx`]), the request counters, the fault injector, and the signal that tells
//! the writer the world changed.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use jiff::{Timestamp, Unit};
use tokio::sync::Notify;

use super::faults::{Faults, Injector};
use super::jobs;
use super::persist;
use super::signing::Keys;
use super::stats::RequestStats;
use super::world::World;
use crate::unhealthy::UnhealthyDraw;

/// The server version when neither the options nor the world name one.
pub const DEFAULT_VERSION: &str = "4.22.0.0";
pub const DEFAULT_HYPERVISOR: &str = "KVM";
pub const DEFAULT_MAX_CLUSTER_SIZE: u32 = 10;

#[derive(Clone)]
pub struct Sim(Arc<Inner>);

struct Inner {
    world: Mutex<World>,
    keys: Keys,
    job_time: Duration,
    page_size: usize,
    stats: RequestStats,
    injector: Injector,
    dirty: Notify,
    /// The URLs of the CKS clusters' Kubernetes APIs (`cks`).
    cluster_apis: super::cks::ApiUrls,
    unhealthy: Option<Arc<UnhealthyDraw>>,
}

/// What a command needs besides the world and its parameters.
pub struct Ctx {
    pub now: Timestamp,
    pub job_time: Duration,
    /// `default.page.size`.
    pub page_size: usize,
    /// `cloudstackversion`, e.g. "4.22.0.0".
    pub version: String,
    pub hypervisor: String,
    /// `cloud.kubernetes.cluster.max.size`.
    pub max_cluster_size: u32,
    /// The URL of each CKS cluster's Kubernetes API, by cluster id.
    pub cluster_apis: std::collections::BTreeMap<String, String>,
    /// The `unhealthy-after-change` fault, when on (see `health`).
    pub unhealthy: Option<Arc<UnhealthyDraw>>,
}

impl Ctx {
    /// True when the server is at least `major.minor`.
    pub fn version_at_least(&self, major: u64, minor: u64) -> bool {
        let mut parts = self
            .version
            .split('.')
            .map(|p| p.parse::<u64>().unwrap_or(0));
        let have = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        have >= (major, minor)
    }
}

impl Sim {
    pub fn new(
        world: World,
        keys: Keys,
        job_time: Duration,
        page_size: usize,
        faults: Faults,
    ) -> Self {
        let unhealthy = (faults.transport.unhealthy_after_change.clone())
            .map(|picks| Arc::new(UnhealthyDraw::new(picks, faults.transport.seed)));
        Sim(Arc::new(Inner {
            world: Mutex::new(world),
            keys,
            job_time,
            page_size,
            stats: RequestStats::default(),
            injector: Injector::new(faults),
            dirty: Notify::new(),
            cluster_apis: Default::default(),
            unhealthy,
        }))
    }

    /// Runs `f` on the world after every job due by now has advanced (what they did to rules'
    /// VMs logged in the stats); `mutated` (or a job having advanced) wakes the writer.
    pub fn with_world<T>(&self, f: impl FnOnce(&mut World, &Ctx) -> (T, bool)) -> T {
        let mut world = self.lock();
        let cx = self.ctx(&world);
        let mut members = Vec::new();
        let settled = jobs::settle(&mut world, &cx, &mut members);
        self.0.stats.log_members(members);
        let (value, mutated) = f(&mut world, &cx);
        if settled || mutated {
            self.0.dirty.notify_one();
        }
        value
    }

    /// Advances the jobs due by now (the background ticker).
    pub fn tick(&self) {
        self.with_world(|_, _| ((), false));
    }

    pub fn world_json(&self) -> String {
        persist::world_text(&*self.lock())
    }

    /// Resolves once the world changed since the last call.
    pub async fn changed(&self) {
        self.0.dirty.notified().await
    }

    pub fn keys(&self) -> &Keys {
        &self.0.keys
    }

    pub fn stats(&self) -> &RequestStats {
        &self.0.stats
    }

    pub fn injector(&self) -> &Injector {
        &self.0.injector
    }

    pub fn cluster_apis(&self) -> &super::cks::ApiUrls {
        &self.0.cluster_apis
    }

    fn lock(&self) -> MutexGuard<'_, World> {
        // A handler that panicked mid-change leaves at worst one half-made object: keep serving.
        self.0
            .world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn ctx(&self, world: &World) -> Ctx {
        let now = Timestamp::now();
        let settings = &world.settings;
        Ctx {
            now: now.round(Unit::Microsecond).unwrap_or(now),
            job_time: self.0.job_time,
            page_size: self.0.page_size,
            version: settings
                .version
                .clone()
                .unwrap_or_else(|| DEFAULT_VERSION.into()),
            hypervisor: settings
                .hypervisor
                .clone()
                .unwrap_or_else(|| DEFAULT_HYPERVISOR.into()),
            max_cluster_size: match settings.max_cluster_size {
                0 => DEFAULT_MAX_CLUSTER_SIZE,
                n => n,
            },
            cluster_apis: self
                .0
                .cluster_apis
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            unhealthy: self.0.unhealthy.clone(),
        }
    }
}
