//! `skyplan state migrate`: moves the state from one backend to another, each locked for the
//! move. The state keeps its lineage and serial, so a saved plan stays valid across the move.

use super::backend::{StateBackend, StateVersion};
use super::error::StateError;
use super::file::State;

/// What a migration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Migrated {
    /// The state was written to the target.
    Moved { serial: u64, resources: usize },
    /// The target already held this very state.
    AlreadyThere { serial: u64 },
    /// The source holds no state: nothing to move.
    NothingToMove,
}

/// Copies `source`'s state into `target`. Refused when the target holds a state of another
/// lineage, a newer one of the same lineage, or when an interrupted apply's journal is in the
/// source (its recovery belongs where it happened).
pub fn migrate(
    source: &dyn StateBackend,
    target: &dyn StateBackend,
) -> Result<Migrated, StateError> {
    let _source_lock = source.lock("state migrate", None)?;
    let _target_lock = target.lock("state migrate", None)?;
    if source.interrupted()?.is_some() {
        return Err(StateError::JournalPending(source.describe()));
    }
    let Some(state) = source.load()? else {
        return Ok(Migrated::NothingToMove);
    };
    let stored = target.load()?;
    if let Some(existing) = &stored {
        refuse_unless_older(target, existing, &state)?;
        if existing.serial == state.serial {
            return Ok(Migrated::AlreadyThere {
                serial: state.serial,
            });
        }
    }
    target.write(&state, stored.as_ref().map(StateVersion::of).as_ref())?;
    Ok(Migrated::Moved {
        serial: state.serial,
        resources: state.resources.len(),
    })
}

fn refuse_unless_older(
    target: &dyn StateBackend,
    existing: &State,
    state: &State,
) -> Result<(), StateError> {
    if existing.lineage != state.lineage {
        return Err(StateError::OtherLineage {
            target: target.describe(),
            found: existing.lineage.clone(),
            migrating: state.lineage.clone(),
        });
    }
    let diverged = existing.serial == state.serial && existing.resources != state.resources;
    if existing.serial > state.serial || diverged {
        return Err(StateError::Stale {
            read: StateVersion::describe(Some(&StateVersion::of(state))),
            stored: format!(
                "{} in the {}",
                StateVersion::describe(Some(&StateVersion::of(existing))),
                target.describe()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::StateStore;

    fn saved(store: &StateStore) -> State {
        let mut state = State::new();
        store.save(&mut state).unwrap();
        store.save(&mut state).unwrap();
        state
    }

    #[test]
    fn a_state_moves_with_its_lineage_and_serial() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (source, target) = (StateStore::open(a.path()), StateStore::open(b.path()));
        let state = saved(&source);
        let moved = migrate(&source, &target).unwrap();
        assert_eq!(
            moved,
            Migrated::Moved {
                serial: 2,
                resources: 0
            }
        );
        assert_eq!(target.load().unwrap(), Some(state));
        assert_eq!(
            migrate(&source, &target).unwrap(),
            Migrated::AlreadyThere { serial: 2 }
        );
    }

    #[test]
    fn a_target_with_another_lineage_or_a_newer_serial_is_refused() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (source, target) = (StateStore::open(a.path()), StateStore::open(b.path()));
        saved(&source);
        let other = saved(&target);
        let error = migrate(&source, &target).unwrap_err();
        assert!(
            matches!(error, StateError::OtherLineage { .. }),
            "{error:?}"
        );
        assert_eq!(target.load().unwrap(), Some(other));

        let c = tempfile::tempdir().unwrap();
        let newer = StateStore::open(c.path());
        migrate(&source, &newer).unwrap();
        let mut ahead = newer.load().unwrap().unwrap();
        newer.save(&mut ahead).unwrap();
        let error = migrate(&source, &newer).unwrap_err();
        assert!(matches!(error, StateError::Stale { .. }), "{error:?}");
    }

    #[test]
    fn nothing_saved_moves_nothing() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (source, target) = (StateStore::open(a.path()), StateStore::open(b.path()));
        assert_eq!(migrate(&source, &target).unwrap(), Migrated::NothingToMove);
        assert_eq!(target.load().unwrap(), None);
    }
}
