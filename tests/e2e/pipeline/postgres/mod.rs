//! The PostgreSQL server the `pipeline::postgres` tests share: `.ci/run` starts one and sets
//! SKYPLAN_TEST_PG_URL (see .ci/postgres.sh; [`crate::support::needs::pg_url`]). Each test uses
//! workspaces of its own, so they run side by side.

pub mod kill_recovery;
pub mod shared_workspace;

use std::time::{Duration, Instant};

use skyplan_core::config::PostgresBackend;
use skyplan_core::state::postgres::PgBackend;
use skyplan_core::state::{StateBackend, StateLock};

use crate::support::{run, Output, Project};

pub fn fresh_workspace() -> String {
    format!("e2e-{}", uuid::Uuid::new_v4())
}

/// The `[backend.postgres]` table of a config.
pub fn backend_toml(url: &str, workspace: &str) -> String {
    format!("[backend.postgres]\nurl = \"{url}\"\nworkspace = \"{workspace}\"\n\n")
}

/// The workspace as the library sees it, to probe the lock from the test itself.
pub fn open(url: &str, workspace: &str) -> PgBackend {
    PgBackend::open(&PostgresBackend {
        url: url.to_string(),
        workspace: workspace.to_string(),
    })
    .expect("the test server accepts connections")
}

/// Takes the lock as soon as it is free; returns it with how long that took.
pub fn lock_when_free(backend: &PgBackend, limit: Duration) -> (StateLock, Duration) {
    let started = Instant::now();
    loop {
        match backend.lock("probe", None) {
            Ok(lock) => return (lock, started.elapsed()),
            Err(error) => assert!(
                started.elapsed() < limit,
                "the lock was not free within {limit:?}: {error}"
            ),
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether the project's workspace is locked, asked without taking the lock: force-unlock with
/// an id that matches no lock says "does not match" when there is one.
pub fn is_locked(project: &Project) -> bool {
    let out: Output = run(&mut project.command(&["force-unlock", "no-such-lock-id"]));
    assert_eq!(out.code, 1, "{out:?}");
    out.stderr.contains("does not match")
}

pub fn wait_until_locked(project: &Project) {
    let started = Instant::now();
    while !is_locked(project) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the first apply never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
