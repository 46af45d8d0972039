//! The apply journal in Secrets `skyplan-journal-W-<run>-<n>`: each entry one data key (its
//! seq, zero-padded, so keys sort as entries do), added with a merge patch that sends only the
//! entry and returns once the API server has stored it — before the cloud call it announces.
//! A Secret that would grow past a piece's size is followed by the next. A started journal's
//! first Secret exists before any entry, so a run killed before its first entry is found too.
//! An interrupted journal is kept labelled with its archive time.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::ByteString;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use skyplan_core::state::journal::{parse_lines, Entry, Interrupted, Journal, JournalSink};
use skyplan_core::state::{Executor, StateError};

use super::codec::CHUNK_BYTES;
use super::errors::{failed, is_not_found};
use super::objects::{self, Part, ARCHIVED, RUN};

/// The workspace's journal Secrets.
#[derive(Clone)]
pub(super) struct JournalSecrets {
    pub api: Api<Secret>,
    pub workspace: String,
}

impl JournalSecrets {
    /// Starts a journal: drops a journal never archived (as the local backend truncates its
    /// file) and creates this run's first Secret.
    pub fn start(&self, executor: Arc<Executor>) -> Result<Journal, StateError> {
        let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        let (secrets, task_run) = (self.clone(), run.clone());
        executor.run(async move {
            for secret in secrets.unarchived().await? {
                secrets.delete(&secret).await?;
            }
            secrets.create_piece(&task_run, 0).await
        })?;
        Ok(Journal::with_sink(Box::new(SecretSink {
            executor,
            secrets: self.clone(),
            run,
            piece: Mutex::new(Piece { index: 0, bytes: 0 }),
        })))
    }

    /// The journal an interrupted run left: the entries of its unarchived Secrets, if any.
    pub async fn interrupted(&self) -> Result<Option<Interrupted>, StateError> {
        let secrets = self.unarchived().await?;
        if secrets.is_empty() {
            return Ok(None);
        }
        let mut lines = BTreeMap::new();
        for secret in secrets {
            for (key, value) in secret.data.unwrap_or_default() {
                lines.insert(key, String::from_utf8_lossy(&value.0).into_owned());
            }
        }
        let entries = parse_lines(lines.values().map(String::as_str));
        Ok(Some(Interrupted { entries }))
    }

    /// Labels the interrupted journal's Secrets with the time it was archived at; returns it.
    pub async fn archive(&self) -> Result<String, StateError> {
        let stamp = k8s_openapi::jiff::Timestamp::now()
            .strftime("%Y%m%dT%H%M%SZ")
            .to_string();
        let patch = json!({"metadata": {"labels": {ARCHIVED: stamp}}});
        for secret in self.unarchived().await? {
            let name = secret.metadata.name.unwrap_or_default();
            (self
                .api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await)
                .map_err(failed(format!("archive the journal Secret {name}")))?;
        }
        Ok(stamp)
    }

    async fn unarchived(&self) -> Result<Vec<Secret>, StateError> {
        let selector = objects::selector(&self.workspace, Part::Journal, &[format!("!{ARCHIVED}")]);
        let list = (self
            .api
            .list(&ListParams::default().labels(&selector))
            .await)
            .map_err(failed("list the journal's Secrets"))?;
        Ok(list.items)
    }

    async fn create_piece(&self, run: &str, index: usize) -> Result<(), StateError> {
        let name = objects::journal_name(&self.workspace, run, index);
        let secret = objects::secret(name.clone(), &self.workspace, Part::Journal, &[(RUN, run)]);
        (self.api.create(&PostParams::default(), &secret).await)
            .map(drop)
            .map_err(failed(format!("create the journal Secret {name}")))
    }

    async fn delete(&self, secret: &Secret) -> Result<(), StateError> {
        let name = secret.metadata.name.clone().unwrap_or_default();
        match self.api.delete(&name, &DeleteParams::default()).await {
            Err(error) if !is_not_found(&error) => {
                Err(failed(format!("delete the journal Secret {name}"))(error))
            }
            _ => Ok(()),
        }
    }
}

/// The Secret entries are being added to, and how much it holds.
struct Piece {
    index: usize,
    bytes: usize,
}

struct SecretSink {
    executor: Arc<Executor>,
    secrets: JournalSecrets,
    run: String,
    piece: Mutex<Piece>,
}

impl JournalSink for SecretSink {
    fn append(&self, entry: &Entry, line: &str) -> Result<(), StateError> {
        let line = line.trim_end().to_string();
        let mut piece = self.piece.lock().unwrap_or_else(|p| p.into_inner());
        let next_piece = piece.bytes + line.len() > CHUNK_BYTES && piece.bytes > 0;
        if next_piece {
            piece.index += 1;
            piece.bytes = 0;
        }
        let (secrets, run, index) = (self.secrets.clone(), self.run.clone(), piece.index);
        let key = format!("{:010}", entry.seq);
        let size = line.len();
        self.executor.run(async move {
            if next_piece {
                secrets.create_piece(&run, index).await?;
            }
            let name = objects::journal_name(&secrets.workspace, &run, index);
            let patch = json!({"data": {key: ByteString(line.into_bytes())}});
            let params = PatchParams::default();
            (secrets
                .api
                .patch(&name, &params, &Patch::Merge(&patch))
                .await)
                .map(drop)
                .map_err(failed(format!("write the journal Secret {name}")))
        })?;
        piece.bytes += size;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), StateError> {
        let (secrets, run) = (self.secrets.clone(), self.run.clone());
        self.executor.run(async move {
            let selector = objects::selector(
                &secrets.workspace,
                Part::Journal,
                &[format!("{RUN}={run}"), format!("!{ARCHIVED}")],
            );
            let list = (secrets
                .api
                .list(&ListParams::default().labels(&selector))
                .await)
                .map_err(failed("list the journal's Secrets"))?;
            for secret in list.items {
                secrets.delete(&secret).await?;
            }
            Ok(())
        })
    }
}
