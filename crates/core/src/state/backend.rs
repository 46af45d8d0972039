//! The state store interface: where the state, the lock and the apply journal live. Two
//! implementations — a local directory ([`super::StateStore`]) and PostgreSQL
//! ([`super::postgres::PgBackend`]) — and one conformance suite (`conformance.rs`) that both
//! pass, so the rest of skyplan never asks which one it has.

use std::time::Duration;

use super::error::StateError;
use super::file::State;
use super::journal::{Interrupted, Journal};
use super::lock::{LockInfo, StateLock};

/// Which stored state a write replaces: a write is refused unless the store still holds
/// exactly this one, so of two runs that read the same state only the first to write wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateVersion {
    pub lineage: String,
    pub serial: u64,
}

impl StateVersion {
    pub fn of(state: &State) -> StateVersion {
        StateVersion {
            lineage: state.lineage.clone(),
            serial: state.serial,
        }
    }

    /// How a refusal names a stored state, or its absence.
    pub fn describe(version: Option<&StateVersion>) -> String {
        match version {
            Some(v) => format!("serial {} of lineage {}", v.serial, v.lineage),
            None => "no state".into(),
        }
    }
}

/// Where state, lock and journal are kept. Every method is synchronous and may be called from
/// inside an async runtime: the PostgreSQL backend runs its client on a runtime of its own.
pub trait StateBackend: Send + Sync {
    /// Where the state lives, for messages: "the local directory state" or "PostgreSQL
    /// workspace prod". Never holds a password.
    fn describe(&self) -> String;

    /// The stored state, or `None` when nothing has been saved yet.
    fn load(&self) -> Result<Option<State>, StateError>;

    /// Stores `next` in place of `replaces` (`None`: only if nothing is stored yet), atomically:
    /// refused with [`StateError::Stale`] when the store holds anything else.
    fn write(&self, next: &State, replaces: Option<&StateVersion>) -> Result<(), StateError>;

    /// Takes the lock for `operation`; another holder makes this wait up to `wait`, polling,
    /// then fail with [`StateError::Locked`] naming it. Released when the lock is dropped.
    fn lock(&self, operation: &str, wait: Option<Duration>) -> Result<StateLock, StateError>;

    /// Removes the lock whatever holds it, given its id. Returns who held it.
    fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError>;

    /// Starts the journal of an apply (an interrupted one must have been archived first).
    fn start_journal(&self) -> Result<Journal, StateError>;

    /// The journal an interrupted apply left, if any.
    fn interrupted(&self) -> Result<Option<Interrupted>, StateError>;

    /// Keeps the interrupted journal for the record, out of the way of the next one. Returns
    /// where it was kept.
    fn archive_journal(&self) -> Result<String, StateError>;

    /// Increments the serial and writes, refusing if the stored state is no longer the one
    /// `state` was loaded from. On error `state` is unchanged.
    fn save(&self, state: &mut State) -> Result<(), StateError> {
        let next = State {
            serial: state.serial + 1,
            skyplan_version: env!("CARGO_PKG_VERSION").to_string(),
            ..state.clone()
        };
        // Every save increments the serial, so serial 0 is a state never stored.
        let replaces = (state.serial > 0).then(|| StateVersion::of(state));
        self.write(&next, replaces.as_ref())?;
        *state = next;
        Ok(())
    }
}

/// Whether `stored` is what a write expected to replace; the refusal otherwise.
pub fn check_replaces(
    stored: Option<&StateVersion>,
    replaces: Option<&StateVersion>,
) -> Result<(), StateError> {
    if stored == replaces {
        return Ok(());
    }
    Err(StateError::Stale {
        read: StateVersion::describe(replaces),
        stored: StateVersion::describe(stored),
    })
}
