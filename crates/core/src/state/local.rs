//! The local directory as a [`StateBackend`]: state file, lock file and journal file side by
//! side in `<state-dir>`, as they always were.

use std::time::Duration;

use super::backend::{StateBackend, StateVersion};
use super::error::StateError;
use super::file::State;
use super::journal::{self, Interrupted, Journal};
use super::lock::{LockInfo, StateLock};
use super::store::StateStore;

impl StateBackend for StateStore {
    fn describe(&self) -> String {
        format!("local directory {}", self.dir().display())
    }

    fn load(&self) -> Result<Option<State>, StateError> {
        StateStore::load(self)
    }

    fn write(&self, next: &State, replaces: Option<&StateVersion>) -> Result<(), StateError> {
        self.write_file(next, replaces)
    }

    fn lock(&self, operation: &str, wait: Option<Duration>) -> Result<StateLock, StateError> {
        StateStore::lock(self, operation, wait)
    }

    fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError> {
        StateStore::force_unlock(self, id)
    }

    fn start_journal(&self) -> Result<Journal, StateError> {
        Journal::start(self.dir())
    }

    fn interrupted(&self) -> Result<Option<Interrupted>, StateError> {
        journal::interrupted(self.dir())
    }

    fn archive_journal(&self) -> Result<String, StateError> {
        journal::archive(self.dir()).map(|kept| kept.display().to_string())
    }
}
