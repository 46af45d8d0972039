//! The apply journal, `<state-dir>/skyplan.journal`: one JSON line per step, written before
//! every mutating cloud call (intent) and after it (done or failed), so that a run killed at
//! any point leaves a record of what it was doing. The next run finds it, reports what was
//! interrupted, and re-plans from the live state; ownership tags let that plan adopt whatever
//! the killed run created, so nothing is created twice or lost.
//!
//! Each line is written with one `write` call and the file is synced at the end: that survives a
//! killed process (the kernel has the bytes); a power cut may lose the last lines, which the
//! ownership tags make harmless.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::error::StateError;
use super::ResourceState;
use crate::model::Address;

const JOURNAL_FILE: &str = "skyplan.journal";

/// A test hook: `SKYPLAN_TEST_KILL_AT=<phase>:<n>` makes the process kill itself with SIGKILL
/// at the n-th journal checkpoint of that phase (`intent`: before the cloud call, `call`: after
/// the call returned but before it was recorded, `done`: after it was recorded). The kill test
/// uses it to crash apply at exact, repeatable points.
pub const KILL_AT_ENV: &str = "SKYPLAN_TEST_KILL_AT";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Intent,
    Done,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub seq: u64,
    pub time: String,
    pub address: Address,
    pub phase: Phase,
    /// The operation as the plan shows it, e.g. `create pool tcp/http`.
    pub operation: String,
    /// The provider's IDs of the resource after the operation (done only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// In an intent's IDs: the state entry the operation leaves once done (a Service written,
/// its wait for the controller still to come), recorded should the run never end — killed
/// before or after the call — (see [`Interrupted::left`]).
pub const LEFT_KEY: &str = "left";

/// The state entry an intent announced under [`LEFT_KEY`].
fn left_of(intent: &Entry) -> Option<ResourceState> {
    let left = intent.ids.as_ref()?.get(LEFT_KEY)?;
    serde_json::from_value(left.clone()).ok()
}

/// What an interrupted run left behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Interrupted {
    pub entries: Vec<Entry>,
}

impl Interrupted {
    pub fn done(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.phase == Phase::Done)
            .count()
    }

    /// What the run wrote, or may have written, and would have recorded in the state had it
    /// ended: the last [`LEFT_KEY`] an address's operations announced, unless the operation
    /// then failed (nothing was written).
    pub fn left(&self) -> BTreeMap<Address, ResourceState> {
        let failed = |intent: &Entry| {
            self.entries.iter().any(|e| {
                e.seq > intent.seq
                    && e.phase == Phase::Failed
                    && e.address == intent.address
                    && e.operation == intent.operation
            })
        };
        let announced = self.entries.iter().filter(|e| e.phase == Phase::Intent);
        announced
            .filter(|intent| !failed(intent))
            .filter_map(|intent| Some((intent.address.clone(), left_of(intent)?)))
            .collect()
    }

    /// Operations with an intent but no outcome: the cloud may or may not have done them.
    pub fn in_flight(&self) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|intent| intent.phase == Phase::Intent)
            .filter(|intent| {
                !self.entries.iter().any(|e| {
                    e.seq > intent.seq
                        && e.phase != Phase::Intent
                        && e.address == intent.address
                        && e.operation == intent.operation
                })
            })
            .collect()
    }
}

/// Told of every journal entry as it is written (apply's progress display listens here).
pub type Observer = Box<dyn Fn(&Entry) + Send + Sync>;

/// Where a journal's lines go: a file ([`FileSink`]) or PostgreSQL rows. Each `append` is
/// durable against a killed process before it returns: the cloud call it announces comes after.
pub trait JournalSink: Send + Sync {
    fn append(&self, entry: &Entry, line: &str) -> Result<(), StateError>;
    /// The run ended and the state has recorded it: the journal goes away.
    fn finish(self: Box<Self>) -> Result<(), StateError>;
}

/// The local journal, `<state-dir>/skyplan.journal`.
pub struct FileSink {
    path: PathBuf,
    file: Mutex<File>,
}

impl JournalSink for FileSink {
    fn append(&self, _entry: &Entry, line: &str) -> Result<(), StateError> {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(line.as_bytes())
            .map_err(StateError::io("write", &self.path))
    }

    /// Syncs and removes the journal file.
    fn finish(self: Box<Self>) -> Result<(), StateError> {
        let file = self.file.into_inner().unwrap_or_else(|p| p.into_inner());
        file.sync_all()
            .map_err(StateError::io("sync", &self.path))?;
        fs::remove_file(&self.path).map_err(StateError::io("remove", &self.path))
    }
}

/// The journal of the apply in progress.
pub struct Journal {
    sink: Box<dyn JournalSink>,
    seq: AtomicU64,
    observer: Option<Observer>,
    kill_at: Option<(String, u64)>,
    checkpoints: Mutex<std::collections::HashMap<String, u64>>,
    /// What this run's announced writes leave, by address, with the operation that announced
    /// it (see [`LEFT_KEY`]); an operation that failed leaves nothing.
    left: Mutex<BTreeMap<Address, (String, ResourceState)>>,
}

impl Journal {
    /// Starts a fresh journal in `dir` (an earlier one must have been recovered first).
    pub fn start(dir: &Path) -> Result<Journal, StateError> {
        fs::create_dir_all(dir).map_err(StateError::io("create", dir))?;
        let path = dir.join(JOURNAL_FILE);
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(StateError::io("create", &path))?;
        Ok(Journal::with_sink(Box::new(FileSink {
            path,
            file: Mutex::new(file),
        })))
    }

    /// A journal writing to `sink`, which has already started (and emptied) its record.
    pub fn with_sink(sink: Box<dyn JournalSink>) -> Journal {
        Journal {
            sink,
            seq: AtomicU64::new(0),
            observer: None,
            kill_at: kill_point(),
            checkpoints: Mutex::default(),
            left: Mutex::default(),
        }
    }

    pub fn observed_by(mut self, observer: Observer) -> Journal {
        self.observer = Some(observer);
        self
    }

    /// Appends one entry as one line.
    pub fn record(
        &self,
        address: &Address,
        phase: Phase,
        operation: &str,
        ids: Option<serde_json::Value>,
        error: Option<String>,
    ) -> Result<(), StateError> {
        let entry = Entry {
            seq: self.seq.fetch_add(1, Ordering::SeqCst),
            time: jiff::Timestamp::now().to_string(),
            address: address.clone(),
            phase,
            operation: operation.to_string(),
            ids,
            error,
        };
        self.keep_left(&entry);
        let mut line = serde_json::to_string(&entry).expect("entries serialize");
        line.push('\n');
        self.sink.append(&entry, &line)?;
        if let Some(observer) = &self.observer {
            observer(&entry);
        }
        let phase = match phase {
            Phase::Intent => "intent",
            Phase::Done | Phase::Failed => "done",
        };
        self.checkpoint(phase);
        Ok(())
    }

    /// What the operations of `address` this run announced leave, unless they failed: to
    /// record in the state when the resource's apply fails after them (a Service written, the
    /// wait for its controller then timed out).
    pub fn left_by(&self, address: &Address) -> Option<ResourceState> {
        let left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        left.get(address).map(|(_, entry)| entry.clone())
    }

    fn keep_left(&self, entry: &Entry) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        match entry.phase {
            Phase::Intent => {
                if let Some(state) = left_of(entry) {
                    left.insert(entry.address.clone(), (entry.operation.clone(), state));
                }
            }
            Phase::Failed => {
                if left
                    .get(&entry.address)
                    .is_some_and(|(op, _)| *op == entry.operation)
                {
                    left.remove(&entry.address);
                }
            }
            Phase::Done => {}
        }
    }

    /// A point where the kill test may crash the process (see [`KILL_AT_ENV`]).
    pub fn checkpoint(&self, phase: &str) {
        let Some((kill_phase, at)) = &self.kill_at else {
            return;
        };
        if kill_phase != phase {
            return;
        }
        let mut counts = self.checkpoints.lock().unwrap_or_else(|p| p.into_inner());
        let count = counts.entry(phase.to_string()).or_default();
        *count += 1;
        if count == at {
            // SAFETY: kill(2) with our own pid and SIGKILL has no memory-safety preconditions.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
        }
    }

    /// Ends the journal: the run ended and the state has recorded it.
    pub fn finish(self) -> Result<(), StateError> {
        self.sink.finish()
    }
}

/// The entries of a journal's lines; lines cut short by a kill are skipped: they describe a
/// step whose outcome the live state will tell.
pub fn parse_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Entry> {
    lines
        .into_iter()
        .filter_map(|line| serde_json::from_str::<Entry>(line).ok())
        .collect()
}

fn kill_point() -> Option<(String, u64)> {
    let spec = std::env::var(KILL_AT_ENV).ok()?;
    let (phase, at) = spec.split_once(':')?;
    Some((phase.to_string(), at.parse().ok()?))
}

/// The journal an interrupted run left in `dir`, if any. Lines cut short by the kill are
/// skipped: they describe a step whose outcome the live state will tell.
pub fn interrupted(dir: &Path) -> Result<Option<Interrupted>, StateError> {
    let path = dir.join(JOURNAL_FILE);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StateError::io("read", &path)(error)),
    };
    let mut entries = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line.map_err(StateError::io("read", &path))?;
        if let Ok(entry) = serde_json::from_str::<Entry>(&line) {
            entries.push(entry);
        }
    }
    Ok(Some(Interrupted { entries }))
}

/// Keeps the interrupted journal for the record, beside the state, once it was recovered.
pub fn archive(dir: &Path) -> Result<PathBuf, StateError> {
    let path = dir.join(JOURNAL_FILE);
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
    let kept = dir.join(format!("skyplan.journal.{stamp}.interrupted"));
    fs::rename(&path, &kept).map_err(StateError::io("archive", &path))?;
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;

    fn address() -> Address {
        Address::new(ResourceKind::LoadBalancer, "web")
    }

    #[test]
    fn a_finished_journal_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::start(dir.path()).unwrap();
        journal
            .record(&address(), Phase::Intent, "create pool tcp", None, None)
            .unwrap();
        journal
            .record(&address(), Phase::Done, "create pool tcp", None, None)
            .unwrap();
        journal.finish().unwrap();
        assert_eq!(interrupted(dir.path()).unwrap(), None);
    }

    #[test]
    fn a_line_cut_short_by_the_kill_is_skipped() {
        // The rest of what an interrupted journal tells is the conformance suite's.
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::start(dir.path()).unwrap();
        journal
            .record(&address(), Phase::Intent, "create pool tcp", None, None)
            .unwrap();
        drop(journal);
        let path = dir.path().join(JOURNAL_FILE);
        let mut text = fs::read_to_string(&path).unwrap();
        text.push_str("{\"seq\": 3, \"addr");
        fs::write(&path, text).unwrap();

        let found = interrupted(dir.path()).unwrap().unwrap();
        assert_eq!(found.entries.len(), 1);
        assert_eq!(found.in_flight()[0].operation, "create pool tcp");
        let kept = archive(dir.path()).unwrap();
        assert!(kept.exists());
        assert_eq!(interrupted(dir.path()).unwrap(), None);
    }

    /// A Service announced with the entry it leaves: recorded whether the kill came before or
    /// after the call; not when the call failed (nothing was written).
    #[test]
    fn what_an_announced_write_leaves_is_recorded_unless_it_failed() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::start(dir.path()).unwrap();
        let entry = ResourceState {
            provider: "cloudscale".into(),
            id: String::new(),
            ids: serde_json::Value::Null,
            attributes: serde_json::json!({"name": "web"}),
            depends_on: vec![],
        };
        let left = Some(serde_json::json!({ LEFT_KEY: entry }));
        let refused = Address::new(ResourceKind::LoadBalancer, "refused");
        let write = "create service shop/web";
        journal
            .record(&address(), Phase::Intent, write, left.clone(), None)
            .unwrap();
        journal
            .record(&refused, Phase::Intent, write, left, None)
            .unwrap();
        journal
            .record(&refused, Phase::Failed, write, None, Some("422".into()))
            .unwrap();
        // The run itself knows the same, for an apply that fails after the write.
        assert_eq!(journal.left_by(&address()), Some(entry.clone()));
        assert_eq!(journal.left_by(&refused), None);
        drop(journal);
        let found = interrupted(dir.path()).unwrap().unwrap();
        let left = found.left();
        assert_eq!(left.keys().collect::<Vec<_>>(), [&address()]);
        assert_eq!(left[&address()], entry);
    }
}
