//! A provider for core's own tests: it plans a no-op for every target (refusing those named
//! `bad…`, and noting the threads it planned on) and reports the healths it was given, one per
//! read, the last one again and again.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::thread::ThreadId;

use futures::future::BoxFuture;

use super::{Applied, DriftCheck, Health, PlanOptions, Provider, ProviderError, Refreshed, Target};
use crate::plan::ResourceChange;
use crate::state::journal::Journal;
use crate::state::ResourceState;

#[derive(Default)]
pub(crate) struct Fake {
    pub threads: Mutex<HashSet<ThreadId>>,
    healths: Mutex<VecDeque<Result<Health, String>>>,
    reads: Mutex<usize>,
}

impl Fake {
    /// A provider whose health reads report `healths` in turn (an `Err` is a failed read).
    pub fn reporting(healths: Vec<Result<Health, String>>) -> Fake {
        Fake {
            healths: Mutex::new(healths.into()),
            ..Fake::default()
        }
    }

    /// How many health reads were made.
    pub fn reads(&self) -> usize {
        *self.reads.lock().unwrap()
    }

    /// What its refresh reads: nothing.
    pub fn refreshed() -> Refreshed {
        Refreshed::new(())
    }
}

impl Provider for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }

    fn refresh<'a>(
        &'a self,
        _: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        Box::pin(async { Ok(Fake::refreshed()) })
    }

    fn plan(
        &self,
        target: &Target,
        refreshed: &Refreshed,
        _: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        refreshed.downcast_ref::<()>("fake")?;
        let thread = std::thread::current().id();
        self.threads.lock().unwrap().insert(thread);
        if target.address.name.starts_with("bad") {
            return Err(ProviderError::new(target.address, "refused"));
        }
        Ok(ResourceChange::no_op(target.address.clone(), "fake", None))
    }

    fn drift(&self, _: &Target, _: &Refreshed) -> Result<DriftCheck, ProviderError> {
        unreachable!("core's tests do not check drift through it")
    }

    fn import(&self, _: &Target, _: &Refreshed) -> Result<ResourceState, ProviderError> {
        unreachable!("core's tests do not import through it")
    }

    fn apply<'a>(
        &'a self,
        _: &'a ResourceChange,
        _: Option<&'a ResourceState>,
        _: &'a Refreshed,
        _: &'a Journal,
    ) -> BoxFuture<'a, Result<Applied, ProviderError>> {
        unreachable!("core's tests do not apply through it")
    }

    fn health<'a>(
        &'a self,
        change: &'a ResourceChange,
        _: Option<&'a ResourceState>,
    ) -> BoxFuture<'a, Result<Health, ProviderError>> {
        *self.reads.lock().unwrap() += 1;
        let mut healths = self.healths.lock().unwrap();
        let health = match healths.len() {
            1 => healths[0].clone(),
            _ => healths.pop_front().expect("a health to report"),
        };
        let address = change.address.clone();
        Box::pin(async move { health.map_err(|e| ProviderError::new(&address, e)) })
    }

    fn request_count(&self) -> u64 {
        0
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }
}
