//! The workspace lock: a session-level advisory lock on a key derived from the workspace,
//! held on a connection of its own for the whole run, plus a `skyplan_lock` row telling who
//! holds it. The server releases the lock the moment that session ends — a clean exit, a
//! `kill -9`, a lost network — so there is never a stale lock to wait out or remove. The row
//! is only believed while its session holds the lock.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio_postgres::{Client, Row};

use super::connect::Target;
use crate::state::lock::LockInfo;
use crate::state::Executor;
use crate::state::{StateError, StateLock};

const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// How long a refused run waits for the holder to write its row after taking the lock.
const HOLDER_ROW_GRACE: Duration = Duration::from_secs(2);

/// The advisory lock key of a workspace: the first 8 bytes of a hash of its name.
pub(super) fn key(workspace: &str) -> i64 {
    let digest = Sha256::digest(format!("skyplan workspace lock\0{workspace}"));
    i64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// pg_locks shows a bigint advisory key as two oids: the high half in classid, the low in objid.
fn key_halves(key: i64) -> (i64, i64) {
    let key = key as u64;
    ((key >> 32) as i64, (key & 0xffff_ffff) as i64)
}

/// The holder row, if its session holds the workspace's lock right now.
const LIVE_HOLDER: &str = "SELECT l.id, l.operation, l.who, l.host, l.pid, l.created, \
     l.skyplan_version, l.backend_pid FROM skyplan_lock l \
     WHERE l.workspace = $1 AND EXISTS (SELECT 1 FROM pg_locks k \
       WHERE k.locktype = 'advisory' AND k.granted AND k.pid = l.backend_pid \
       AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
       AND k.classid = $2::bigint::oid AND k.objid = $3::bigint::oid AND k.objsubid = 1)";

const ANY_HOLDER: &str = "SELECT id, operation, who, host, pid, created, skyplan_version, \
     backend_pid FROM skyplan_lock WHERE workspace = $1";

fn lock_info(row: &Row) -> LockInfo {
    LockInfo {
        id: row.get(0),
        operation: row.get(1),
        who: row.get(2),
        host: row.get(3),
        pid: u32::try_from(row.get::<_, i64>(4)).unwrap_or(u32::MAX),
        created: row.get(5),
        skyplan_version: row.get(6),
    }
}

async fn live_holder(client: &Client, workspace: &str) -> Result<Option<Row>, StateError> {
    let (high, low) = key_halves(key(workspace));
    client
        .query_opt(LIVE_HOLDER, &[&workspace, &high, &low])
        .await
        .map_err(StateError::pg("read the lock holder"))
}

/// Takes the lock, waiting up to `wait` for another holder.
pub(super) fn acquire(
    executor: &Arc<Executor>,
    target: &Arc<Target>,
    workspace: &str,
    info: LockInfo,
    wait: Option<Duration>,
) -> Result<StateLock, StateError> {
    let client = Arc::new(target.connect_on(executor)?);
    let deadline = wait.map(|wait| Instant::now() + wait);
    let (task_client, task_workspace, task_info) =
        (client.clone(), workspace.to_string(), info.clone());
    let taken_over = executor
        .run(async move { take(&task_client, &task_workspace, &task_info, deadline).await })?;
    let release = Release {
        executor: executor.clone(),
        client,
        workspace: workspace.to_string(),
        id: info.id.clone(),
    };
    Ok(StateLock::new(info, taken_over, Box::new(release)))
}

/// Polls the advisory lock; once held, writes the holder row. Returns the row of a holder
/// whose session had ended without removing it (a killed run), for the warning.
async fn take(
    client: &Client,
    workspace: &str,
    info: &LockInfo,
    deadline: Option<Instant>,
) -> Result<Option<LockInfo>, StateError> {
    let key = key(workspace);
    loop {
        let row = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .await
            .map_err(StateError::pg("take the lock"))?;
        if row.get::<_, bool>(0) {
            return write_holder(client, workspace, info).await;
        }
        let holder = refusing_holder(client, workspace).await?;
        match deadline {
            Some(deadline) if Instant::now() < deadline => {
                tokio::time::sleep(POLL_INTERVAL.min(deadline - Instant::now())).await;
            }
            _ => return Err(StateError::Locked(Box::new(holder))),
        }
    }
}

async fn write_holder(
    client: &Client,
    workspace: &str,
    info: &LockInfo,
) -> Result<Option<LockInfo>, StateError> {
    // We hold the lock, so any row left is a dead session's.
    let left = client
        .query_opt(ANY_HOLDER, &[&workspace])
        .await
        .map_err(StateError::pg("read the lock holder"))?
        .map(|row| lock_info(&row));
    client
        .execute(
            "INSERT INTO skyplan_lock (workspace, id, operation, who, host, pid, created, \
             skyplan_version, backend_pid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, \
             pg_backend_pid()) ON CONFLICT (workspace) DO UPDATE SET id = $2, operation = $3, \
             who = $4, host = $5, pid = $6, created = $7, skyplan_version = $8, \
             backend_pid = pg_backend_pid()",
            &[
                &workspace,
                &info.id,
                &info.operation,
                &info.who,
                &info.host,
                &i64::from(info.pid),
                &info.created,
                &info.skyplan_version,
            ],
        )
        .await
        .map_err(StateError::pg("record the lock holder"))?;
    Ok(left)
}

/// Who holds the lock we were refused. The holder writes its row right after taking the
/// lock, so a refusal in between waits a moment for it.
async fn refusing_holder(client: &Client, workspace: &str) -> Result<LockInfo, StateError> {
    let until = Instant::now() + HOLDER_ROW_GRACE;
    loop {
        if let Some(row) = live_holder(client, workspace).await? {
            return Ok(lock_info(&row));
        }
        if Instant::now() >= until {
            return Ok(LockInfo {
                id: "unknown".into(),
                operation: "unknown".into(),
                who: "a session that wrote no holder row".into(),
                host: "unknown".into(),
                pid: 0,
                created: "unknown".into(),
                skyplan_version: "unknown".into(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Ends the holder's session (which releases its lock) and removes its row.
pub(super) async fn force_unlock(
    client: &Client,
    workspace: &str,
    id: &str,
) -> Result<LockInfo, StateError> {
    let row = live_holder(client, workspace)
        .await?
        .ok_or(StateError::NotLocked)?;
    let holder = lock_info(&row);
    if holder.id != id {
        return Err(StateError::LockIdMismatch {
            given: id.to_string(),
            holder: Box::new(holder),
        });
    }
    let backend_pid: i32 = row.get(7);
    client
        .execute("SELECT pg_terminate_backend($1)", &[&backend_pid])
        .await
        .map_err(StateError::pg("end the lock holder's session"))?;
    client
        .execute(
            "DELETE FROM skyplan_lock WHERE workspace = $1 AND id = $2",
            &[&workspace, &id],
        )
        .await
        .map_err(StateError::pg("remove the lock holder"))?;
    wait_until_released(client, workspace).await?;
    Ok(holder)
}

/// A terminated session lets go of its locks as it exits, a moment after the signal.
async fn wait_until_released(client: &Client, workspace: &str) -> Result<(), StateError> {
    let (high, low) = key_halves(key(workspace));
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let held = client
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
                 AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1",
                &[&high, &low],
            )
            .await
            .map_err(StateError::pg("read the locks"))?;
        if row_count(&held) == 0 {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

fn row_count(row: &Row) -> i64 {
    row.get(0)
}

/// Releases the lock when the run's [`StateLock`] is dropped: the row first (only if still
/// ours: a force-unlock may have given the lock to another run), then the advisory lock,
/// then the connection.
struct Release {
    executor: Arc<Executor>,
    client: Arc<Client>,
    workspace: String,
    id: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        let (client, workspace, id) =
            (self.client.clone(), self.workspace.clone(), self.id.clone());
        self.executor.run(async move {
            let _ = client
                .execute(
                    "DELETE FROM skyplan_lock WHERE workspace = $1 AND id = $2",
                    &[&workspace, &id],
                )
                .await;
            let _ = client
                .execute("SELECT pg_advisory_unlock($1)", &[&key(&workspace)])
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_workspace_and_split_into_two_oids() {
        assert_ne!(key("prod"), key("staging"));
        assert_eq!(key("prod"), key("prod"));
        let (high, low) = key_halves(-1);
        assert_eq!((high, low), (0xffff_ffff, 0xffff_ffff));
        let (high, low) = key_halves(key("prod"));
        assert_eq!(((high as u64) << 32 | low as u64) as i64, key("prod"));
    }
}
