//! The state: what skyplan last applied (lineage, serial, per address the cloud IDs and the
//! last-applied spec), the lock that keeps two runs from changing it at once, and the journal
//! of the apply in progress — behind one interface, [`StateBackend`], kept in a local
//! directory (`<state-dir>/skyplan.state.json`, the default) or in PostgreSQL
//! (`[backend.postgres]`).
//!
//! Architecture invariant: this module knows nothing about providers; their parts of the
//! state are opaque JSON values.

mod backend;
#[cfg(test)]
mod conformance;
mod error;
mod file;
pub mod journal;
mod local;
mod lock;
mod migrate;
mod moves;
pub mod postgres;
mod store;

pub use backend::{StateBackend, StateVersion};
pub use error::StateError;
pub use file::{ResourceState, State, FORMAT_VERSION};
pub use lock::{LockInfo, StateLock};
pub use migrate::{migrate, Migrated};
pub use moves::{Blocked, MoveError};
pub use store::StateStore;

use crate::config::{Backend, Settings};

/// The backend the settings name: `[backend.postgres]`, or the state directory.
pub fn open(settings: &Settings) -> Result<Box<dyn StateBackend>, StateError> {
    match &settings.backend {
        Backend::Local => Ok(Box::new(StateStore::open(&settings.state_dir))),
        Backend::Postgres(pg) => Ok(Box::new(postgres::PgBackend::open(pg)?)),
    }
}
