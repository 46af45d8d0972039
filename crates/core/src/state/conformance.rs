//! The one conformance suite every [`StateBackend`] passes: each check below is run against the
//! local directory, against PostgreSQL (a real server, from `SKYPLAN_TEST_PG_URL`) and — from
//! the Kubernetes crate, which enables the `conformance` feature for its tests — against a real
//! kube-apiserver. A fixture opens any number of handles on one shared store — two machines,
//! two processes — so the checks can race them.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::json;

use super::journal::Phase;
use super::{ResourceState, State, StateBackend, StateError};
use crate::model::{Address, ResourceKind};
use crate::plan::file::{PlanFile, PlanFileError, PlanRequest, SavedOutlook, StateRef};
use crate::plan::Plan;

/// One shared store; `open` gives another handle on it.
pub trait Fixture {
    fn open(&self) -> Box<dyn StateBackend>;
}

fn with_resource(state: &mut State, name: &str) {
    state.resources.insert(
        Address::new(ResourceKind::LoadBalancer, name),
        ResourceState {
            provider: "cloudscale".into(),
            id: format!("lb-{name}"),
            ids: json!({"pools": {"tcp/80": "pool-1"}}),
            attributes: json!({"zone": "lpg1", "ports": [80, 443]}),
            depends_on: vec![],
        },
    );
}

fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "web")
}

pub fn nothing_saved_loads_as_none(fixture: &dyn Fixture) {
    assert_eq!(fixture.open().load().unwrap(), None);
}

pub fn a_save_loads_back_equal_on_another_handle(fixture: &dyn Fixture) {
    let (writer, reader) = (fixture.open(), fixture.open());
    let mut state = State::new();
    with_resource(&mut state, "web");
    writer.save(&mut state).unwrap();
    writer.save(&mut state).unwrap();
    assert_eq!(state.serial, 2);
    let loaded = reader.load().unwrap().unwrap();
    assert_eq!(loaded, state);
    assert_eq!(loaded.content_hash(), state.content_hash());
}

pub fn a_save_against_a_stale_serial_is_refused(fixture: &dyn Fixture) {
    let (first, second) = (fixture.open(), fixture.open());
    let mut state = State::new();
    first.save(&mut state).unwrap();
    let mut mine = first.load().unwrap().unwrap();
    let mut theirs = second.load().unwrap().unwrap();
    with_resource(&mut theirs, "theirs");
    second.save(&mut theirs).unwrap();
    with_resource(&mut mine, "mine");
    let before = mine.clone();
    let error = first.save(&mut mine).unwrap_err();
    assert!(matches!(error, StateError::Stale { .. }), "{error:?}");
    assert!(error.to_string().contains("serial 1"), "{error}");
    assert_eq!(mine, before, "a refused save leaves the state as it was");
    assert_eq!(first.load().unwrap(), Some(theirs));
}

pub fn a_save_of_another_lineage_is_refused(fixture: &dyn Fixture) {
    let store = fixture.open();
    let mut original = State::new();
    store.save(&mut original).unwrap();
    let mut other = State::new();
    other.serial = original.serial;
    assert!(matches!(
        store.save(&mut other),
        Err(StateError::Stale { .. })
    ));
    // A fresh state (serial 0) never replaces a stored one either.
    assert!(matches!(
        store.save(&mut State::new()),
        Err(StateError::Stale { .. })
    ));
    assert_eq!(store.load().unwrap(), Some(original));
}

/// Writers racing from one read: exactly one wins, whatever the timing.
pub fn of_racing_writers_exactly_one_wins(fixture: &dyn Fixture) {
    let mut state = State::new();
    fixture.open().save(&mut state).unwrap();
    let writers = 4;
    let barrier = Arc::new(Barrier::new(writers));
    let outcomes: Vec<bool> = (0..writers)
        .map(|n| {
            let (store, barrier, mut state) = (fixture.open(), barrier.clone(), state.clone());
            std::thread::spawn(move || {
                with_resource(&mut state, &format!("w{n}"));
                barrier.wait();
                store.save(&mut state).is_ok()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|won| **won).count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(fixture.open().load().unwrap().unwrap().serial, 2);
}

/// What `apply PLANFILE` checks a saved plan against: lineage, serial and content hash of the
/// stored state, as another handle (another machine) loads it.
pub fn a_saved_plan_is_checked_against_the_stored_state(fixture: &dyn Fixture) {
    let (planner, applier) = (fixture.open(), fixture.open());
    let mut state = State::new();
    with_resource(&mut state, "web");
    planner.save(&mut state).unwrap();
    let state_ref = |s: &State| StateRef {
        lineage: s.lineage.clone(),
        serial: s.serial,
        content_hash: s.content_hash(),
    };
    let file = PlanFile::new(
        Plan::default(),
        PlanRequest::default(),
        state_ref(&state),
        SavedOutlook::default(),
    );
    let loaded = applier.load().unwrap().unwrap();
    file.check_state(&state_ref(&loaded)).unwrap();
    let mut changed = loaded;
    with_resource(&mut changed, "other");
    applier.save(&mut changed).unwrap();
    let now = planner.load().unwrap().unwrap();
    assert!(matches!(
        file.check_state(&state_ref(&now)),
        Err(PlanFileError::Serial {
            planned: 1,
            current: 2
        })
    ));
}

pub fn a_finished_journal_leaves_nothing(fixture: &dyn Fixture) {
    let store = fixture.open();
    let journal = store.start_journal().unwrap();
    journal
        .record(&address(), Phase::Intent, "create pool tcp", None, None)
        .unwrap();
    journal
        .record(&address(), Phase::Done, "create pool tcp", None, None)
        .unwrap();
    journal.finish().unwrap();
    assert_eq!(fixture.open().interrupted().unwrap(), None);
}

pub fn an_interrupted_journal_tells_what_was_in_flight(fixture: &dyn Fixture) {
    let store = fixture.open();
    let journal = store.start_journal().unwrap();
    let ids = json!({"lb": "1"});
    journal
        .record(&address(), Phase::Intent, "create pool tcp", None, None)
        .unwrap();
    journal
        .record(&address(), Phase::Done, "create pool tcp", Some(ids), None)
        .unwrap();
    journal
        .record(
            &address(),
            Phase::Intent,
            "create member 10.0.0.1:1",
            None,
            None,
        )
        .unwrap();
    drop(journal); // killed: never finished
    let found = fixture.open().interrupted().unwrap().unwrap();
    assert_eq!(found.entries.len(), 3);
    assert_eq!(found.entries[1].ids, Some(json!({"lb": "1"})));
    assert_eq!(found.done(), 1);
    let in_flight: Vec<&str> = found
        .in_flight()
        .iter()
        .map(|e| e.operation.as_str())
        .collect();
    assert_eq!(in_flight, ["create member 10.0.0.1:1"]);
    let kept = store.archive_journal().unwrap();
    assert!(!kept.is_empty());
    assert_eq!(fixture.open().interrupted().unwrap(), None);
    // The next journal starts empty.
    let next = store.start_journal().unwrap();
    next.finish().unwrap();
    assert_eq!(store.interrupted().unwrap(), None);
}

pub fn a_journal_killed_before_its_first_line_is_found(fixture: &dyn Fixture) {
    let store = fixture.open();
    drop(store.start_journal().unwrap());
    let found = fixture.open().interrupted().unwrap().unwrap();
    assert!(found.entries.is_empty());
}

pub fn a_held_lock_refuses_another_naming_the_holder(fixture: &dyn Fixture) {
    let (first_store, second_store) = (fixture.open(), fixture.open());
    let first = first_store.lock("apply", None).unwrap();
    assert_eq!(first.info().operation, "apply");
    assert_eq!(first.info().pid, std::process::id());
    let started = Instant::now();
    let error = second_store.lock("plan", None).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "refused at once"
    );
    let Some(holder) = error.holder() else {
        panic!("expected a lock refusal, got {error:?}");
    };
    assert_eq!(*holder, *first.info());
    let message = error.to_string();
    for part in [&holder.who, &holder.host, &holder.created, "`apply`"] {
        assert!(message.contains(part), "{part} missing from: {message}");
    }
    drop(first);
    let again = second_store.lock("plan", None).unwrap();
    assert!(
        again.taken_over().is_none(),
        "a released lock leaves nothing"
    );
}

pub fn waiting_gets_the_lock_once_it_is_released(fixture: &dyn Fixture) {
    let first = fixture.open().lock("apply", None).unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(first);
    });
    let second = fixture.open().lock("plan", Some(Duration::from_secs(10)));
    release.join().unwrap();
    assert!(second.is_ok(), "{second:?}");
}

pub fn waiting_gives_up_at_the_timeout(fixture: &dyn Fixture) {
    let _first = fixture.open().lock("apply", None).unwrap();
    let started = Instant::now();
    let second = fixture
        .open()
        .lock("plan", Some(Duration::from_millis(500)));
    let refused = second.as_ref().err().and_then(StateError::holder);
    assert!(refused.is_some(), "{second:?}");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(500), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

pub fn force_unlock_needs_the_holders_id(fixture: &dyn Fixture) {
    let store = fixture.open();
    let old = fixture.open().lock("apply", None).unwrap();
    let wrong = store.force_unlock("not-the-id");
    assert!(
        matches!(wrong, Err(StateError::LockIdMismatch { .. })),
        "{wrong:?}"
    );
    let refused = fixture.open().lock("plan", None);
    assert!(refused.unwrap_err().holder().is_some());
    assert_eq!(store.force_unlock(&old.info().id).unwrap(), *old.info());
    assert!(matches!(
        store.force_unlock(&old.info().id),
        Err(StateError::NotLocked)
    ));
    let new = fixture.open().lock("plan", None).unwrap();
    drop(old);
    // Dropping the force-unlocked lock leaves the next holder's.
    let error = fixture.open().lock("plan", None).unwrap_err();
    assert_eq!(error.holder(), Some(new.info()), "{error:?}");
}

/// Declares one `#[test]` per check for a backend, given an expression making its fixture and
/// the attributes each test gets (`#[ignore = "needs …"]` for a backend that needs a server).
#[macro_export]
macro_rules! conformance_tests {
    ($(#[$attribute:meta])* fixture: $fixture:expr) => {
        $crate::conformance_tests!(@each [$(#[$attribute])*] $fixture;
            nothing_saved_loads_as_none,
            a_save_loads_back_equal_on_another_handle,
            a_save_against_a_stale_serial_is_refused,
            a_save_of_another_lineage_is_refused,
            of_racing_writers_exactly_one_wins,
            a_saved_plan_is_checked_against_the_stored_state,
            a_finished_journal_leaves_nothing,
            an_interrupted_journal_tells_what_was_in_flight,
            a_journal_killed_before_its_first_line_is_found,
            a_held_lock_refuses_another_naming_the_holder,
            waiting_gets_the_lock_once_it_is_released,
            waiting_gives_up_at_the_timeout,
            force_unlock_needs_the_holders_id,
        );
    };
    (@each $attributes:tt $fixture:expr; $($check:ident),* $(,)?) => {
        $(
            $crate::conformance_tests!(@one $attributes $check $fixture);
        )*
    };
    (@one [$($attribute:tt)*] $check:ident $fixture:expr) => {
        #[test]
        $($attribute)*
        fn $check() {
            $crate::state::conformance::$check(&$fixture);
        }
    };
}

#[cfg(test)]
mod local {
    use std::path::PathBuf;

    use super::Fixture;
    use crate::state::{StateBackend, StateStore};

    pub(super) struct LocalDir(tempfile::TempDir);

    impl Fixture for LocalDir {
        fn open(&self) -> Box<dyn StateBackend> {
            Box::new(StateStore::open(&PathBuf::from(self.0.path())))
        }
    }

    fn fixture() -> LocalDir {
        LocalDir(tempfile::tempdir().unwrap())
    }

    crate::conformance_tests!(fixture: fixture());
}

#[cfg(test)]
pub(super) mod postgres {
    use super::Fixture;
    use crate::config::PostgresBackend;
    use crate::state::postgres::PgBackend;
    use crate::state::StateBackend;

    /// The variable `.ci/run` sets to its server's URL (see `.ci/postgres.sh`).
    pub const TEST_URL_ENV: &str = "SKYPLAN_TEST_PG_URL";

    /// A fresh workspace (a uuid) on the test server.
    pub(in crate::state) struct PgWorkspace(PostgresBackend);

    impl PgWorkspace {
        pub(in crate::state) fn url(&self) -> &str {
            &self.0.url
        }
    }

    impl Fixture for PgWorkspace {
        fn open(&self) -> Box<dyn StateBackend> {
            Box::new(PgBackend::open(&self.0).expect("the test server accepts connections"))
        }
    }

    /// The test server's settings with a workspace of their own. The tests that use it are
    /// ignored unless asked for; asked for without a server, they fail saying what to set.
    pub(in crate::state) fn fixture() -> PgWorkspace {
        let url = match std::env::var(TEST_URL_ENV) {
            Ok(url) if !url.is_empty() => url,
            _ => panic!(
                "{TEST_URL_ENV} is not set: this test needs a PostgreSQL server's URL \
                 (.ci/run starts one)"
            ),
        };
        PgWorkspace(PostgresBackend {
            url,
            workspace: format!("test-{}", uuid::Uuid::new_v4()),
        })
    }

    crate::conformance_tests!(
        #[ignore = "needs PostgreSQL: SKYPLAN_TEST_PG_URL (.ci/run starts one)"]
        fixture: fixture()
    );
}
