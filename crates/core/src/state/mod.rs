//! The state: what skyplan last applied (lineage, serial, per address the cloud IDs and the
//! last-applied spec), the lock that keeps two runs from changing it at once, and the journal
//! of the apply in progress — behind one interface, [`StateBackend`], kept in a local
//! directory (`<state-dir>/skyplan.state.json`, the default), in PostgreSQL
//! (`[backend.postgres]`) or — kept by the Kubernetes crate, opened through the binary's
//! registry — in a cluster's Secrets and Lease (`[backend.kubernetes]`).
//!
//! Architecture invariant: this module knows nothing about providers; their parts of the
//! state are opaque JSON values.

mod backend;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
mod error;
mod executor;
mod file;
pub mod journal;
mod local;
mod lock;
mod migrate;
mod moves;
pub mod postgres;
mod store;

pub use backend::{check_replaces, StateBackend, StateVersion};
pub use error::StateError;
pub use executor::Executor;
pub use file::{ResourceState, State, FORMAT_VERSION};
pub use lock::{LockInfo, StateLock};
pub use migrate::{migrate, Migrated};
pub use moves::{Blocked, MoveError};
pub use store::{parse_state, StateStore};

use crate::config::{Backend, KubernetesBackend, Settings};

/// Opens `[backend.kubernetes]`, which the Kubernetes crate keeps: core depends on no
/// provider, so the binary's registry hands it over.
pub type OpenKubernetes = fn(&KubernetesBackend) -> Result<Box<dyn StateBackend>, StateError>;

/// The backend the settings name: `[backend.postgres]`, `[backend.kubernetes]`, or the state
/// directory.
pub fn open(
    settings: &Settings,
    kubernetes: OpenKubernetes,
) -> Result<Box<dyn StateBackend>, StateError> {
    match &settings.backend {
        Backend::Local => Ok(Box::new(StateStore::open(&settings.state_dir))),
        Backend::Postgres(pg) => Ok(Box::new(postgres::PgBackend::open(pg)?)),
        Backend::Kubernetes(kube) => kubernetes(kube),
    }
}
