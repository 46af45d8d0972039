use std::collections::VecDeque;
use std::sync::Mutex;

use futures::future::BoxFuture;

use super::*;
use crate::apply::test_changes::change;
use crate::model::{Downtime, Impact};
use crate::plan::ResourceChange;
use crate::provider::{Applied, DriftCheck, PlanOptions, ProviderError, Refreshed, Target};
use crate::state::journal::Journal;

/// A provider that reports the healths it was given, one per read, then the last one again.
struct Reports {
    healths: Mutex<VecDeque<Result<Health, String>>>,
    reads: Mutex<usize>,
}

impl Reports {
    fn of(healths: Vec<Result<Health, String>>) -> Reports {
        Reports {
            healths: Mutex::new(healths.into()),
            reads: Mutex::new(0),
        }
    }

    fn reads(&self) -> usize {
        *self.reads.lock().unwrap()
    }
}

impl Provider for Reports {
    fn name(&self) -> &'static str {
        "reports"
    }

    fn refresh<'a>(
        &'a self,
        _: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        unreachable!("only asked about health")
    }

    fn plan(
        &self,
        _: &Target,
        _: &Refreshed,
        _: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        unreachable!("only asked about health")
    }

    fn drift(&self, _: &Target, _: &Refreshed) -> Result<DriftCheck, ProviderError> {
        unreachable!("only asked about health")
    }

    fn import(&self, _: &Target, _: &Refreshed) -> Result<ResourceState, ProviderError> {
        unreachable!("only asked about health")
    }

    fn apply<'a>(
        &'a self,
        _: &'a ResourceChange,
        _: Option<&'a ResourceState>,
        _: &'a Refreshed,
        _: &'a Journal,
    ) -> BoxFuture<'a, Result<Applied, ProviderError>> {
        unreachable!("only asked about health")
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

fn recreated() -> ResourceChange {
    change("web", Impact::PoolRecreate, Downtime::new(60, 120))
}

fn down(what: &str) -> Result<Health, String> {
    Ok(Health::Unhealthy(vec![what.to_string()]))
}

#[tokio::test(start_paused = true)]
async fn a_resource_that_becomes_healthy_passes_after_as_many_reads() {
    let cloud = Reports::of(vec![
        down("member a: down"),
        down("member a: down"),
        Ok(Health::Healthy),
    ]);
    let gate = wait_until_healthy(&cloud, &recreated(), None, Duration::from_secs(300)).await;
    assert_eq!(gate, Gate::Passed);
    assert_eq!(cloud.reads(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_resource_still_unhealthy_at_the_deadline_fails_with_what_the_last_read_said() {
    let cloud = Reports::of(vec![down("member a: changing"), down("member a: down")]);
    let started = Instant::now();
    let gate = wait_until_healthy(&cloud, &recreated(), None, Duration::from_secs(30)).await;
    assert_eq!(gate, Gate::Failed(vec!["member a: down".to_string()]));
    // The waits double to five seconds and the last read is at the deadline, not after it.
    assert_eq!(started.elapsed(), Duration::from_secs(30));
    // 0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 5 + 5 + 5 + 5 = 26.3, then 3.7 to the deadline.
    assert_eq!(cloud.reads(), 12);
}

#[tokio::test(start_paused = true)]
async fn a_read_that_fails_is_retried_and_reported_when_time_runs_out() {
    let cloud = Reports::of(vec![Err("connection refused".to_string())]);
    let gate = wait_until_healthy(&cloud, &recreated(), None, Duration::from_secs(1)).await;
    let Gate::Failed(problems) = gate else {
        panic!("a failing read passed the gate");
    };
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].starts_with("reading its health failed: "),
        "{problems:?}"
    );
    assert!(problems[0].contains("connection refused"), "{problems:?}");
    assert!(cloud.reads() > 1);
}

#[tokio::test(start_paused = true)]
async fn a_zero_timeout_still_reads_once() {
    let cloud = Reports::of(vec![Ok(Health::Healthy)]);
    let gate = wait_until_healthy(&cloud, &recreated(), None, Duration::ZERO).await;
    assert_eq!(gate, Gate::Passed);
    assert_eq!(cloud.reads(), 1);
}
