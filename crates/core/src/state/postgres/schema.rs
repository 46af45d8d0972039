//! The tables, created on first use and versioned: `skyplan_schema_version` records every
//! migration applied, and a skyplan meeting a newer schema refuses rather than guess.

use tokio_postgres::Client;

use crate::state::StateError;

/// The schema this build reads and writes.
pub(super) const SCHEMA_VERSION: i32 = 1;

/// Migration `n` (1-based) brings the schema from version n-1 to n.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [r#"
CREATE TABLE skyplan_state (
    workspace text PRIMARY KEY,
    lineage text NOT NULL,
    serial bigint NOT NULL,
    -- The state exactly as the local backend writes its file.
    body text NOT NULL,
    updated timestamptz NOT NULL DEFAULT now()
);
-- Who holds the workspace's advisory lock. A row is only believed while its backend_pid
-- holds the lock: a killed holder's row stays behind, its lock does not.
CREATE TABLE skyplan_lock (
    workspace text PRIMARY KEY,
    id text NOT NULL,
    operation text NOT NULL,
    who text NOT NULL,
    host text NOT NULL,
    pid bigint NOT NULL,
    created text NOT NULL,
    skyplan_version text NOT NULL,
    backend_pid integer NOT NULL
);
-- One row per journal line; seq -1 marks a started journal (so one killed before its first
-- line is still found). Rows of a recovered journal are kept with their archive time.
CREATE TABLE skyplan_journal (
    workspace text NOT NULL,
    run text NOT NULL,
    seq bigint NOT NULL,
    entry text,
    archived text,
    PRIMARY KEY (workspace, run, seq)
);
"#];

/// A fixed key for the transaction lock that serialises two first uses of one database.
const SCHEMA_LOCK_KEY: i64 = 0x736b_7970_6c61_6e00; // "skyplan\0"

/// Creates or upgrades the tables, in one transaction.
pub(super) async fn ensure(client: &mut Client) -> Result<(), StateError> {
    let pg = StateError::pg;
    let tx = client.transaction().await.map_err(pg("begin"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK_KEY])
        .await
        .map_err(pg("lock the schema"))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS skyplan_schema_version (
             version integer PRIMARY KEY,
             applied timestamptz NOT NULL DEFAULT now())",
    )
    .await
    .map_err(pg("create the schema version table"))?;
    let row = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM skyplan_schema_version",
            &[],
        )
        .await
        .map_err(pg("read the schema version"))?;
    let current: i32 = row.get(0);
    if current > SCHEMA_VERSION {
        return Err(StateError::PostgresSetup(format!(
            "the database has skyplan schema version {current}, newer than version \
             {SCHEMA_VERSION} that this skyplan understands; upgrade skyplan"
        )));
    }
    for version in current + 1..=SCHEMA_VERSION {
        tx.batch_execute(MIGRATIONS[version as usize - 1])
            .await
            .map_err(pg("create the tables"))?;
        tx.execute(
            "INSERT INTO skyplan_schema_version (version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(pg("record the schema version"))?;
    }
    tx.commit().await.map_err(pg("commit the schema"))
}

#[cfg(test)]
mod tests {
    use crate::config::PostgresBackend;
    use crate::state::postgres::PgBackend;
    use crate::state::{StateBackend, StateError};

    /// In a database of its own: a newer version row must not disturb the other tests.
    #[test]
    #[ignore = "needs PostgreSQL: SKYPLAN_TEST_PG_URL (.ci/run starts one)"]
    fn the_schema_is_created_once_versioned_and_a_newer_one_refused() {
        let fixture = crate::state::conformance::postgres::fixture();
        let url = fixture.url().to_string();
        let database = format!("skyplan_schema_{}", uuid::Uuid::new_v4().simple());
        let admin = PgBackend::open(&PostgresBackend {
            url: url.clone(),
            workspace: "schema-test".into(),
        })
        .unwrap();
        admin.execute(&format!("CREATE DATABASE {database}"));
        let settings = PostgresBackend {
            url: with_database(&url, &database),
            workspace: "w".into(),
        };
        let first = PgBackend::open(&settings).unwrap();
        assert_eq!(first.load().unwrap(), None);
        drop(PgBackend::open(&settings).unwrap()); // a second first use changes nothing
        first.execute("INSERT INTO skyplan_schema_version (version) VALUES (1000)");
        let error = PgBackend::open(&settings)
            .err()
            .expect("a newer schema is refused");
        assert!(
            matches!(&error, StateError::PostgresSetup(m) if m.contains("upgrade skyplan")),
            "{error:?}"
        );
        drop(first);
        admin.execute(&format!("DROP DATABASE {database} WITH (FORCE)"));
    }

    fn with_database(url: &str, database: &str) -> String {
        let (base, _) = url.rsplit_once('/').expect("the test URL names a database");
        format!("{base}/{database}")
    }
}
