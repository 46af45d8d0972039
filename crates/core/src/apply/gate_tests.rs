use super::*;
use crate::apply::test_changes::change;
use crate::model::{Downtime, Impact};
use crate::plan::ResourceChange;
use crate::provider::fake::Fake;

fn recreated() -> ResourceChange {
    change("web", Impact::PoolRecreate, Downtime::new(60, 120))
}

fn down(what: &str) -> Result<Health, String> {
    Ok(Health::Unhealthy(vec![what.to_string()]))
}

#[tokio::test(start_paused = true)]
async fn a_resource_that_becomes_healthy_passes_after_as_many_reads() {
    let cloud = Fake::reporting(vec![
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
    let cloud = Fake::reporting(vec![down("member a: changing"), down("member a: down")]);
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
    let cloud = Fake::reporting(vec![Err("connection refused".to_string())]);
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
    let cloud = Fake::reporting(vec![Ok(Health::Healthy)]);
    let gate = wait_until_healthy(&cloud, &recreated(), None, Duration::ZERO).await;
    assert_eq!(gate, Gate::Passed);
    assert_eq!(cloud.reads(), 1);
}
