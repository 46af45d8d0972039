//! The lock: a `coordination.k8s.io/v1` Lease `skyplan-lock-W`, held while its holder renews
//! it (a background task, three times per duration) and free once cleared — or once its
//! duration has passed since the last renewal, which is how a killed run's lock is taken over,
//! never earlier. Every write is conditional on the resourceVersion read, so of two runs
//! taking a free or expired Lease only one wins. Who holds it is the Lease's annotation,
//! the lock info the other backends keep.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, PostParams};

use skyplan_core::state::{Executor, LockInfo, StateError, StateLock};

use super::errors::{failed, is_conflict, is_not_found};
use super::objects::{self, Part};

const HOLDER: &str = "skyplan.io/lock";
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// The workspace's Lease.
#[derive(Clone)]
pub(super) struct LeaseLock {
    pub api: Api<Lease>,
    pub workspace: String,
    /// The duration this run's Lease is written with.
    pub seconds: u32,
}

/// One try at the Lease.
enum Attempt {
    Held {
        lease: Box<Lease>,
        taken_over: Option<LockInfo>,
    },
    Refused(StateError),
    /// Another run wrote the Lease between our read and our write: read it again.
    Raced,
}

impl LeaseLock {
    fn name(&self) -> String {
        objects::lease_name(&self.workspace)
    }

    /// Takes the Lease for `info`, waiting up to `wait` for another holder's to be released or
    /// to expire; renews it on `executor` until the returned lock is dropped.
    pub fn acquire(
        &self,
        executor: &Arc<Executor>,
        info: LockInfo,
        wait: Option<Duration>,
    ) -> Result<StateLock, StateError> {
        let deadline = wait.map(|wait| Instant::now() + wait);
        let (lock, task_info) = (self.clone(), info.clone());
        let (lease, taken_over) =
            executor.run(async move { lock.take(&task_info, deadline).await })?;
        let held = Arc::new(Mutex::new(lease));
        let renewer = executor.handle().spawn(self.clone().renew(held.clone()));
        let release = Release {
            executor: executor.clone(),
            lock: self.clone(),
            held,
            renewer: Some(renewer),
            id: info.id.clone(),
        };
        Ok(StateLock::new(info, taken_over, Box::new(release)))
    }

    async fn take(
        &self,
        info: &LockInfo,
        deadline: Option<Instant>,
    ) -> Result<(Lease, Option<LockInfo>), StateError> {
        loop {
            match self.attempt(info).await? {
                Attempt::Held { lease, taken_over } => return Ok((*lease, taken_over)),
                Attempt::Raced => continue,
                Attempt::Refused(refusal) => match deadline {
                    Some(deadline) if Instant::now() < deadline => {
                        tokio::time::sleep(POLL_INTERVAL.min(deadline - Instant::now())).await;
                    }
                    _ => return Err(refusal),
                },
            }
        }
    }

    async fn attempt(&self, info: &LockInfo) -> Result<Attempt, StateError> {
        let name = self.name();
        let found =
            (self.api.get_opt(&name).await).map_err(failed(format!("read the Lease {name}")))?;
        let now = Timestamp::now();
        let Some(current) = found else {
            let lease = self.held_by(info, now, None);
            let created = self.api.create(&PostParams::default(), &lease).await;
            return self.outcome(created, None);
        };
        let holder = holder_of(&current);
        let expired = expires_at(&current).is_some_and(|expiry| expiry <= now);
        match holder {
            Some(holder) if !expired => Ok(Attempt::Refused(refusal(&current, holder))),
            holder => {
                let lease = self.held_by(info, now, Some(&current));
                let replaced = self
                    .api
                    .replace(&name, &PostParams::default(), &lease)
                    .await;
                self.outcome(replaced, holder)
            }
        }
    }

    fn outcome(
        &self,
        written: Result<Lease, kube::Error>,
        taken_over: Option<LockInfo>,
    ) -> Result<Attempt, StateError> {
        match written {
            Ok(lease) => Ok(Attempt::Held {
                lease: Box::new(lease),
                taken_over,
            }),
            Err(error) if is_conflict(&error) => Ok(Attempt::Raced),
            Err(error) => Err(failed(format!("take the Lease {}", self.name()))(error)),
        }
    }

    /// The Lease as this run holds it, replacing `current` (its resourceVersion the condition).
    fn held_by(&self, info: &LockInfo, now: Timestamp, current: Option<&Lease>) -> Lease {
        let transitions = current
            .and_then(|l| l.spec.as_ref()?.lease_transitions)
            .unwrap_or(0);
        let mut metadata = ObjectMeta {
            name: Some(self.name()),
            labels: Some(objects::labels(&self.workspace, Part::Lock)),
            resource_version: current.and_then(|l| l.metadata.resource_version.clone()),
            ..ObjectMeta::default()
        };
        let holder = serde_json::to_string(info).expect("lock info serializes");
        metadata.annotations = Some([(HOLDER.to_string(), holder)].into());
        Lease {
            metadata,
            spec: Some(LeaseSpec {
                holder_identity: Some(identity(info)),
                lease_duration_seconds: Some(self.seconds as i32),
                acquire_time: Some(MicroTime(now)),
                renew_time: Some(MicroTime(now)),
                lease_transitions: Some(transitions + i32::from(current.is_some())),
                ..LeaseSpec::default()
            }),
        }
    }

    /// Renews the Lease three times per duration until aborted; stops when it is lost (changed
    /// by someone else: force-unlocked, or taken over after this run could not renew in time).
    async fn renew(self, held: Arc<Mutex<Lease>>) {
        let every = Duration::from_millis(u64::from(self.seconds) * 1000 / 3);
        loop {
            tokio::time::sleep(every).await;
            let mut lease = held.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(spec) = lease.spec.as_mut() {
                spec.renew_time = Some(MicroTime(Timestamp::now()));
            }
            match self
                .api
                .replace(&self.name(), &PostParams::default(), &lease)
                .await
            {
                Ok(renewed) => *held.lock().unwrap_or_else(|p| p.into_inner()) = renewed,
                Err(error) if is_conflict(&error) || is_not_found(&error) => {
                    tracing::warn!(
                        lease = self.name(),
                        "the state lock was taken from this run"
                    );
                    return;
                }
                Err(error) => tracing::warn!(%error, "cannot renew the state lock; retrying"),
            }
        }
    }

    /// Clears the Lease if `id` holds it; returns its holder.
    pub async fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError> {
        let name = self.name();
        loop {
            let found = (self.api.get_opt(&name).await)
                .map_err(failed(format!("read the Lease {name}")))?;
            let current = found.ok_or(StateError::NotLocked)?;
            let holder = holder_of(&current).ok_or(StateError::NotLocked)?;
            if holder.id != id {
                return Err(StateError::LockIdMismatch {
                    given: id.to_string(),
                    holder: Box::new(holder),
                });
            }
            match self.clear(current).await {
                Ok(()) => return Ok(holder),
                Err(error) if is_conflict(&error) => continue,
                Err(error) => return Err(failed(format!("clear the Lease {name}"))(error)),
            }
        }
    }

    /// Writes `current` back without a holder (the condition its resourceVersion).
    async fn clear(&self, mut current: Lease) -> Result<(), kube::Error> {
        if let Some(spec) = current.spec.as_mut() {
            spec.holder_identity = None;
        }
        if let Some(annotations) = current.metadata.annotations.as_mut() {
            annotations.remove(HOLDER);
        }
        let params = PostParams::default();
        self.api
            .replace(&self.name(), &params, &current)
            .await
            .map(drop)
    }
}

/// `host/pid/id`: who holds the Lease, as `kubectl get lease` shows it.
fn identity(info: &LockInfo) -> String {
    format!("{}/{}/{}", info.host, info.pid, info.id)
}

/// The holder of a Lease that has one; `None` for a cleared Lease.
fn holder_of(lease: &Lease) -> Option<LockInfo> {
    let identity = lease.spec.as_ref()?.holder_identity.clone()?;
    if identity.is_empty() {
        return None;
    }
    let annotation = (lease.metadata.annotations.as_ref()).and_then(|a| a.get(HOLDER));
    let info = annotation.and_then(|json| serde_json::from_str(json).ok());
    // A holder that is not skyplan (or wrote no annotation) is still a holder.
    Some(info.unwrap_or_else(|| LockInfo {
        id: "unknown".into(),
        operation: "unknown".into(),
        who: identity,
        host: "unknown".into(),
        pid: 0,
        created: "unknown".into(),
        skyplan_version: "unknown".into(),
    }))
}

/// The last renewal plus the duration: when a holder that stopped renewing loses the Lease.
fn expires_at(lease: &Lease) -> Option<Timestamp> {
    let spec = lease.spec.as_ref()?;
    let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?.0;
    let seconds = spec.lease_duration_seconds?;
    renewed
        .checked_add(SignedDuration::from_secs(i64::from(seconds)))
        .ok()
}

fn refusal(lease: &Lease, holder: LockInfo) -> StateError {
    let spec = lease.spec.as_ref();
    let seconds = spec.and_then(|s| s.lease_duration_seconds).unwrap_or(0);
    let renewed = spec
        .and_then(|s| s.renew_time.as_ref())
        .map(|t| t.0.to_string())
        .unwrap_or_else(|| "an unknown time".into());
    StateError::LeaseHeld {
        holder: Box::new(holder),
        lease_seconds: u64::try_from(seconds).unwrap_or(0),
        renewed,
    }
}

/// Releases the Lease when the run's [`StateLock`] is dropped: stops the renewal, then clears
/// the Lease if it is still this run's (a force-unlock may have given it to another run).
struct Release {
    executor: Arc<Executor>,
    lock: LeaseLock,
    held: Arc<Mutex<Lease>>,
    renewer: Option<tokio::task::JoinHandle<()>>,
    id: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        let (lock, held, id) = (self.lock.clone(), self.held.clone(), self.id.clone());
        let renewer = self.renewer.take();
        self.executor.run(async move {
            if let Some(renewer) = renewer {
                renewer.abort();
                let _ = renewer.await;
            }
            let mut current = held.lock().unwrap_or_else(|p| p.into_inner()).clone();
            // A renewal cut short may still have been written: then read the Lease again.
            for _ in 0..3 {
                if holder_of(&current).is_none_or(|holder| holder.id != id) {
                    return;
                }
                match lock.clear(current.clone()).await {
                    Err(error) if is_conflict(&error) => {}
                    _ => return,
                }
                match lock.api.get_opt(&lock.name()).await {
                    Ok(Some(lease)) => current = lease,
                    _ => return,
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(renewed: &str, seconds: i32) -> Lease {
        Lease {
            metadata: ObjectMeta::default(),
            spec: Some(LeaseSpec {
                holder_identity: Some("host/1/id".into()),
                lease_duration_seconds: Some(seconds),
                renew_time: Some(MicroTime(renewed.parse().unwrap())),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn a_lease_expires_its_duration_after_the_last_renewal() {
        let expiry = expires_at(&lease("2026-11-27T06:00:00Z", 15)).unwrap();
        assert_eq!(expiry, "2026-11-27T06:00:15Z".parse::<Timestamp>().unwrap());
    }

    #[test]
    fn a_cleared_lease_has_no_holder_and_a_foreign_one_is_still_held() {
        let mut foreign = lease("2026-11-27T06:00:00Z", 15);
        let holder = holder_of(&foreign).unwrap();
        assert_eq!(holder.who, "host/1/id");
        foreign.spec.as_mut().unwrap().holder_identity = None;
        assert_eq!(holder_of(&foreign), None);
    }

    #[test]
    fn the_refusal_says_when_the_lease_was_renewed_and_for_how_long() {
        let held = lease("2026-11-27T06:00:00Z", 15);
        let message = refusal(&held, holder_of(&held).unwrap()).to_string();
        assert!(message.contains("lease of 15 s"), "{message}");
        assert!(message.contains("2026-11-27T06:00:00Z"), "{message}");
    }
}
