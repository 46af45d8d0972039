//! State, journal and lock in PostgreSQL (`[backend.postgres]`), for a team that runs skyplan
//! from many machines. One row of `skyplan_state` per workspace; the journal as rows written
//! before and after every mutating cloud call, as the local journal writes lines; the lock a
//! session-level advisory lock held on a connection of its own for the whole run, so it ends
//! with its holder's connection — a killed skyplan never leaves a lock behind.

mod connect;
mod journal;
mod lock;
mod pgpass;
mod schema;

use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::Client;

use self::connect::Target;
use super::backend::{check_replaces, StateBackend, StateVersion};
use super::error::StateError;
use super::executor::Executor;
use super::file::State;
use super::journal::{Interrupted, Journal};
use super::lock::{LockInfo, StateLock};
use crate::config::PostgresBackend;

/// One workspace of one database. Connects when opened and creates the tables if needed.
pub struct PgBackend {
    workspace: String,
    target: Arc<Target>,
    /// For state and journal; the lock has a connection of its own.
    client: Arc<Client>,
    /// Dropped last: it drives the connections.
    executor: Arc<Executor>,
}

impl PgBackend {
    pub fn open(settings: &PostgresBackend) -> Result<PgBackend, StateError> {
        let target = Arc::new(Target::new(&settings.url)?);
        let executor =
            Arc::new(Executor::new("skyplan-postgres").map_err(|e| {
                StateError::PostgresSetup(format!("cannot start its runtime: {e}"))
            })?);
        let mut client = target.connect_on(&executor)?;
        let client = executor.run(async move {
            schema::ensure(&mut client).await?;
            Ok::<_, StateError>(client)
        })?;
        Ok(PgBackend {
            workspace: settings.workspace.clone(),
            target,
            client: Arc::new(client),
            executor,
        })
    }

    /// Runs `f` with this backend's client and workspace on the backend's runtime.
    fn with_client<T, F, Fut>(&self, f: F) -> T
    where
        T: Send + 'static,
        F: FnOnce(Arc<Client>, String) -> Fut,
        Fut: std::future::Future<Output = T> + Send + 'static,
    {
        self.executor
            .run(f(self.client.clone(), self.workspace.clone()))
    }

    /// Runs one statement, for tests that set the database up.
    #[cfg(test)]
    pub(super) fn execute(&self, statement: &str) {
        let statement = statement.to_string();
        self.with_client(|client, _| async move { client.batch_execute(&statement).await })
            .expect("the test statement runs");
    }

    /// Where the state is, as a path-like name for the errors that take one.
    fn place(&self) -> std::path::PathBuf {
        format!("postgres:{}#{}", self.target.describe(), self.workspace).into()
    }
}

impl StateBackend for PgBackend {
    fn describe(&self) -> String {
        format!(
            "PostgreSQL workspace `{}` on {}",
            self.workspace,
            self.target.describe()
        )
    }

    fn load(&self) -> Result<Option<State>, StateError> {
        let body: Option<String> = self.with_client(|client, workspace| async move {
            let row = client
                .query_opt(
                    "SELECT body FROM skyplan_state WHERE workspace = $1",
                    &[&workspace],
                )
                .await
                .map_err(StateError::pg("read the state"))?;
            Ok::<_, StateError>(row.map(|row| row.get(0)))
        })?;
        body.map(|text| super::store::parse_state(&self.place(), &text))
            .transpose()
    }

    fn write(&self, next: &State, replaces: Option<&StateVersion>) -> Result<(), StateError> {
        let mut body = serde_json::to_string_pretty(next).expect("a state serializes to JSON");
        body.push('\n');
        let next_version = StateVersion::of(next);
        let replaces = replaces.cloned();
        self.with_client(|client, workspace| async move {
            state_write(&client, &workspace, &next_version, &body, replaces).await
        })
    }

    fn lock(&self, operation: &str, wait: Option<Duration>) -> Result<StateLock, StateError> {
        lock::acquire(
            &self.executor,
            &self.target,
            &self.workspace,
            LockInfo::for_this_process(operation),
            wait,
        )
    }

    fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError> {
        let id = id.to_string();
        self.with_client(|client, workspace| async move {
            lock::force_unlock(&client, &workspace, &id).await
        })
    }

    fn start_journal(&self) -> Result<Journal, StateError> {
        journal::start(self.executor.clone(), self.client.clone(), &self.workspace)
    }

    fn interrupted(&self) -> Result<Option<Interrupted>, StateError> {
        self.with_client(|client, workspace| async move {
            journal::interrupted(&client, &workspace).await
        })
    }

    fn archive_journal(&self) -> Result<String, StateError> {
        let kept = self.with_client(|client, workspace| async move {
            journal::archive(&client, &workspace).await
        })?;
        Ok(format!("{}, archived at {kept}", self.describe()))
    }
}

/// One statement each way, so two writers never both win: an update only of the row still
/// holding `replaces`, or an insert only where there is no row.
async fn state_write(
    client: &Client,
    workspace: &str,
    next: &StateVersion,
    body: &str,
    replaces: Option<StateVersion>,
) -> Result<(), StateError> {
    let serial = serial_of(next.serial)?;
    let written = match &replaces {
        Some(old) => client
            .execute(
                "UPDATE skyplan_state SET lineage = $2, serial = $3, body = $4, updated = now() \
                     WHERE workspace = $1 AND lineage = $5 AND serial = $6",
                &[
                    &workspace,
                    &next.lineage,
                    &serial,
                    &body,
                    &old.lineage,
                    &serial_of(old.serial)?,
                ],
            )
            .await,
        None => {
            client
                .execute(
                    "INSERT INTO skyplan_state (workspace, lineage, serial, body) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (workspace) DO NOTHING",
                    &[&workspace, &next.lineage, &serial, &body],
                )
                .await
        }
    }
    .map_err(StateError::pg("write the state"))?;
    if written == 1 {
        return Ok(());
    }
    let stored = client
        .query_opt(
            "SELECT lineage, serial FROM skyplan_state WHERE workspace = $1",
            &[&workspace],
        )
        .await
        .map_err(StateError::pg("read the state"))?
        .map(|row| StateVersion {
            lineage: row.get(0),
            serial: row.get::<_, i64>(1) as u64,
        });
    check_replaces(stored.as_ref(), replaces.as_ref())?;
    // The row changed between the write and the read: still not the one expected.
    Err(StateError::Stale {
        read: StateVersion::describe(replaces.as_ref()),
        stored: "a state written meanwhile".into(),
    })
}

fn serial_of(serial: u64) -> Result<i64, StateError> {
    i64::try_from(serial)
        .map_err(|_| StateError::PostgresSetup(format!("serial {serial} is out of range")))
}
