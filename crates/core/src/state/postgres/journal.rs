//! The apply journal as rows of `skyplan_journal`: the same entries the local journal writes
//! as lines, one row each, inserted (and committed) before the call they announce returns.

use std::sync::Arc;

use tokio_postgres::Client;

use crate::state::journal::{Entry, Interrupted, Journal, JournalSink};
use crate::state::Executor;
use crate::state::StateError;

/// The seq of the row that marks a started journal.
const STARTED: i64 = -1;

/// Starts a journal: drops the rows of a journal never archived (as the local backend
/// truncates its file) and marks this one started.
pub(super) fn start(
    executor: Arc<Executor>,
    client: Arc<Client>,
    workspace: &str,
) -> Result<Journal, StateError> {
    let run = uuid::Uuid::new_v4().to_string();
    let (task_client, task_workspace, task_run) =
        (client.clone(), workspace.to_string(), run.clone());
    executor.run(async move {
        task_client
            .execute(
                "DELETE FROM skyplan_journal WHERE workspace = $1 AND archived IS NULL",
                &[&task_workspace],
            )
            .await
            .map_err(StateError::pg("start the journal"))?;
        task_client
            .execute(
                "INSERT INTO skyplan_journal (workspace, run, seq) VALUES ($1, $2, $3)",
                &[&task_workspace, &task_run, &STARTED],
            )
            .await
            .map_err(StateError::pg("start the journal"))?;
        Ok::<_, StateError>(())
    })?;
    Ok(Journal::with_sink(Box::new(RowSink {
        executor,
        client,
        workspace: workspace.to_string(),
        run,
    })))
}

struct RowSink {
    executor: Arc<Executor>,
    client: Arc<Client>,
    workspace: String,
    run: String,
}

impl JournalSink for RowSink {
    fn append(&self, entry: &Entry, line: &str) -> Result<(), StateError> {
        let (client, workspace, run) = (
            self.client.clone(),
            self.workspace.clone(),
            self.run.clone(),
        );
        let seq = i64::try_from(entry.seq).unwrap_or(i64::MAX);
        let line = line.trim_end().to_string();
        self.executor.run(async move {
            client
                .execute(
                    "INSERT INTO skyplan_journal (workspace, run, seq, entry) VALUES ($1, $2, $3, $4)",
                    &[&workspace, &run, &seq, &line],
                )
                .await
                .map(|_| ())
                .map_err(StateError::pg("write the journal"))
        })
    }

    fn finish(self: Box<Self>) -> Result<(), StateError> {
        let (client, workspace, run) = (
            self.client.clone(),
            self.workspace.clone(),
            self.run.clone(),
        );
        self.executor.run(async move {
            client
                .execute(
                    "DELETE FROM skyplan_journal WHERE workspace = $1 AND run = $2 AND archived IS NULL",
                    &[&workspace, &run],
                )
                .await
                .map(|_| ())
                .map_err(StateError::pg("remove the journal"))
        })
    }
}

/// The journal an interrupted run left: its unarchived rows, if any.
pub(super) async fn interrupted(
    client: &Client,
    workspace: &str,
) -> Result<Option<Interrupted>, StateError> {
    let rows = client
        .query(
            "SELECT entry FROM skyplan_journal WHERE workspace = $1 AND archived IS NULL \
             ORDER BY seq",
            &[&workspace],
        )
        .await
        .map_err(StateError::pg("read the journal"))?;
    if rows.is_empty() {
        return Ok(None);
    }
    let lines: Vec<String> = rows
        .iter()
        .filter_map(|row| row.get::<_, Option<String>>(0))
        .collect();
    let entries = crate::state::journal::parse_lines(lines.iter().map(String::as_str));
    Ok(Some(Interrupted { entries }))
}

/// Marks the interrupted journal's rows archived; returns the time it was archived at.
pub(super) async fn archive(client: &Client, workspace: &str) -> Result<String, StateError> {
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    client
        .execute(
            "UPDATE skyplan_journal SET archived = $2 WHERE workspace = $1 AND archived IS NULL",
            &[&workspace, &stamp],
        )
        .await
        .map_err(StateError::pg("archive the journal"))?;
    Ok(stamp)
}
