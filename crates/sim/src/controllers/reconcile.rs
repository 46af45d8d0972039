//! `reconcileLbState` and `runActions`: plan, run up to the first `Refetch`, fetch again,
//! until a plan needs no refetch. Time is compressed: the CCM's pauses (500 ms after a delete,
//! 5 s between a category's deletes and creates, 5-7.5 s between fetches) are scaled by
//! `pass / 5 s`, so the order of events is the real one and only the clock runs faster.

use std::time::Duration;

use serde_json::json;

use super::http::Cloud;
use super::lbstate::{
    create_lb_body, create_listener_body, create_member_body, create_monitor_body,
    create_pool_body, Actual, Desired,
};
use super::plan::{next_actions, Action};

/// The real CCM's wait between state fetches (lower bound).
const REAL_REFETCH_WAIT: Duration = Duration::from_secs(5);
/// A reconcile that keeps refetching this often is stuck (the CCM would loop on forever).
const MAX_ROUNDS: usize = 25;
/// How long `AwaitLb` waits for `changing` to end.
const AWAIT_LB_LIMIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// The pause between fetches; the CCM's other pauses keep their ratio to it.
    pub refetch_wait: Duration,
}

impl Clock {
    fn scaled(&self, real: Duration) -> Duration {
        real.mul_f64(self.refetch_wait.as_secs_f64() / REAL_REFETCH_WAIT.as_secs_f64())
    }
}

/// What one reconcile did: the labels of the actions it ran, and its warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    pub actions: Vec<String>,
    /// Events the CCM sends besides (`NoValidNodes`).
    pub warnings: Vec<String>,
}

/// Reconciles until the plan is empty of structural changes. `desired` and `actual` are
/// called anew every round, as the CCM's closures are (the servers are looked up again too).
pub async fn reconcile<D, A, DF, AF>(
    cloud: &Cloud,
    clock: Clock,
    mut desired: D,
    mut actual: A,
    outcome: &mut Outcome,
) -> Result<(), String>
where
    D: FnMut() -> DF,
    DF: std::future::Future<Output = Result<Option<Desired>, String>>,
    A: FnMut() -> AF,
    AF: std::future::Future<Output = Result<Actual, String>>,
{
    for _ in 0..MAX_ROUNDS {
        let wanted = desired().await?;
        let present = actual().await?;
        let next = next_actions(wanted.as_ref(), &present)?;
        if !run_actions(cloud, clock, &next, outcome).await? {
            return Ok(());
        }
        tokio::time::sleep(clock.refetch_wait).await;
    }
    Err(format!("still changing after {MAX_ROUNDS} rounds"))
}

/// Runs up to the first `Refetch`; true when one was reached.
async fn run_actions(
    cloud: &Cloud,
    clock: Clock,
    next: &[Action],
    outcome: &mut Outcome,
) -> Result<bool, String> {
    for action in next {
        if let Action::Refetch = action {
            return Ok(true);
        }
        run(cloud, clock, action)
            .await
            .map_err(|e| format!("error during {}: {e}", describe(action)))?;
        if let Some(label) = action.label() {
            outcome.actions.push(label);
        }
    }
    Ok(false)
}

fn describe(action: &Action) -> String {
    action.label().unwrap_or_else(|| format!("{action:?}"))
}

async fn run(cloud: &Cloud, clock: Clock, action: &Action) -> Result<(), String> {
    fn call<T>(result: Result<T, super::http::CallError>) -> Result<(), String> {
        result.map(|_| ()).map_err(|e| e.to_string())
    }
    match action {
        Action::CreateLb(lb) => call(cloud.post("load-balancers", &create_lb_body(lb)).await),
        Action::AwaitLb { href } => await_lb(cloud, clock, href).await,
        Action::DeleteLb { href, .. } | Action::Delete { href, .. } => {
            call(cloud.delete(href).await)
        }
        Action::RenameLb { href, name } => call(cloud.patch(href, &json!({"name": name})).await),
        Action::CreatePool { lb_uuid, pool } => call(
            cloud
                .post("load-balancers/pools", &create_pool_body(lb_uuid, pool))
                .await,
        ),
        Action::CreateMember {
            pool_uuid, member, ..
        } => {
            let path = format!("load-balancers/pools/{pool_uuid}/members");
            call(cloud.post(&path, &create_member_body(member)).await)
        }
        Action::CreateListener {
            pool_uuid,
            listener,
        } => {
            let body = create_listener_body(pool_uuid, listener);
            call(cloud.post("load-balancers/listeners", &body).await)
        }
        Action::CreateMonitor {
            pool_uuid, monitor, ..
        } => {
            let body = create_monitor_body(pool_uuid, monitor);
            call(cloud.post("load-balancers/health-monitors", &body).await)
        }
        Action::Update { href, body, .. } => call(cloud.patch(href, body).await),
        Action::AssignFloatingIp { network, lb_uuid } => {
            let address = network.split('/').next().unwrap_or(network);
            let path = format!("floating-ips/{address}");
            call(cloud.patch(&path, &json!({"load_balancer": lb_uuid})).await)
        }
        Action::Sleep(real) => {
            tokio::time::sleep(clock.scaled(*real)).await;
            Ok(())
        }
        Action::Refetch => Ok(()),
    }
}

/// Polls until the load balancer is no longer `changing`.
async fn await_lb(cloud: &Cloud, clock: Clock, href: &str) -> Result<(), String> {
    let started = tokio::time::Instant::now();
    let poll = clock
        .scaled(Duration::from_secs(1))
        .max(Duration::from_millis(20));
    loop {
        let lb = cloud.get(href).await.map_err(|e| e.to_string())?;
        if lb["status"].as_str() != Some("changing") {
            return Ok(());
        }
        if started.elapsed() > AWAIT_LB_LIMIT {
            return Err(format!("{href} still changing"));
        }
        tokio::time::sleep(poll).await;
    }
}
