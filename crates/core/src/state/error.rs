//! `StateError`: every way reading, writing or locking the state fails, each with its cause.

use std::io;
use std::path::{Path, PathBuf};

use super::lock::LockInfo;

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the state file {} is corrupt; it was left untouched", path.display())]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "the state file {} has format version {found}, newer than version {supported} that \
         this skyplan understands; upgrade skyplan",
        path.display()
    )]
    NewerFormat {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error(
        "the state is locked by {} on {} (pid {}) since {} for `{}` (skyplan {}); if that run \
         is gone, remove the lock with `{}`",
        .0.who, .0.host, .0.pid, .0.created, .0.operation, .0.skyplan_version,
        crate::invocation::skyplan(&format!("force-unlock {}", .0.id))
    )]
    Locked(Box<LockInfo>),
    /// Refused by a lock that expires unless its holder renews it (a Kubernetes Lease).
    #[error(
        "the state is locked by {} on {} (pid {}) since {} for `{}` (skyplan {}); its lease of \
         {lease_seconds} s was last renewed at {renewed}: if that run is gone, the next run takes \
         the lock over {lease_seconds} s after that renewal, or remove it now with \
         `skyplan force-unlock {}`",
        .holder.who, .holder.host, .holder.pid, .holder.created, .holder.operation,
        .holder.skyplan_version, .holder.id
    )]
    LeaseHeld {
        holder: Box<LockInfo>,
        lease_seconds: u64,
        renewed: String,
    },
    #[error("the lock file {} is corrupt; if no skyplan is running, delete it", path.display())]
    CorruptLock {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("the state is not locked")]
    NotLocked,
    #[error(
        "the state was changed by another run since this one read it ({read} read, {stored} \
         stored); nothing was saved: plan again"
    )]
    Stale { read: String, stored: String },
    #[error("the {target} already holds another state (lineage {found}, migrating lineage {migrating}); nothing was moved")]
    OtherLineage {
        target: String,
        found: String,
        migrating: String,
    },
    #[error("PostgreSQL state backend: cannot {action}")]
    Postgres {
        action: &'static str,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error(
        "an interrupted apply's journal is in the {0}: run `{apply}` there first",
        apply = crate::invocation::skyplan("apply")
    )]
    JournalPending(String),
    #[error("PostgreSQL state backend: {0}")]
    PostgresSetup(String),
    /// A backend kept outside core (`[backend.kubernetes]`): what it could not do, and why.
    #[error("{backend} state backend: {message}")]
    Backend {
        backend: &'static str,
        message: String,
    },
    #[error("lock id `{given}` does not match the current lock `{}`; nothing was unlocked", .holder.id)]
    LockIdMismatch {
        given: String,
        holder: Box<LockInfo>,
    },
}

impl StateError {
    /// Who holds the lock that refused this run, if that is what this error is.
    pub fn holder(&self) -> Option<&LockInfo> {
        match self {
            StateError::Locked(holder) | StateError::LeaseHeld { holder, .. } => Some(holder),
            _ => None,
        }
    }

    /// Wraps a PostgreSQL error with what was being done, for `map_err`.
    pub(super) fn pg(action: &'static str) -> impl FnOnce(tokio_postgres::Error) -> StateError {
        move |source| StateError::Postgres { action, source }
    }

    /// Wraps an IO error with what was being done, for `map_err`.
    pub(super) fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> StateError {
        let path = path.to_path_buf();
        move |source| StateError::Io {
            action,
            path,
            source,
        }
    }
}
