//! From the configured URL to a connected client: the password from PGPASSWORD or the
//! password file (never from the URL), TLS when the URL asks for it, and connections driven
//! on the backend's runtime.

use std::str::FromStr;

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config, NoTls};

use super::pgpass;
use crate::state::Executor;
use crate::state::StateError;

/// Where to connect, with the password found for it. Never printed: it has no Debug.
pub(super) struct Target {
    config: Config,
}

impl Target {
    /// Parses `url` and finds its password. A URL holding a password is refused: the config
    /// file refuses one already, and `SKYPLAN_PG_URL` is held to the same rule.
    pub(super) fn new(url: &str) -> Result<Target, StateError> {
        let mut config = Config::from_str(url).map_err(|_| {
            StateError::PostgresSetup(
                "the url is not a PostgreSQL connection URL (postgres://USER@HOST:PORT/DATABASE)"
                    .into(),
            )
        })?;
        if config.get_password().is_some() {
            return Err(StateError::PostgresSetup(
                "the url holds a password; remove it and set PGPASSWORD or a ~/.pgpass line".into(),
            ));
        }
        if config.get_user().is_none() {
            let user = std::env::var("PGUSER")
                .or_else(|_| std::env::var("USER"))
                .unwrap_or_else(|_| "postgres".into());
            config.user(user);
        }
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        if let Some(password) = password_for(&config) {
            config.password(password);
        }
        config.application_name("skyplan");
        Ok(Target { config })
    }

    /// host:port/database, for messages.
    pub(super) fn describe(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(name)) => name.clone(),
            Some(Host::Unix(path)) => path.display().to_string(),
            None => "localhost".into(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        let database = self
            .config
            .get_dbname()
            .or(self.config.get_user())
            .unwrap_or_default();
        format!("{host}:{port}/{database}")
    }

    /// A new connection, driven on the executor's runtime until the client is dropped (or
    /// the process dies: then the server ends the session, and with it its advisory locks).
    pub(super) async fn connect(&self) -> Result<Client, StateError> {
        let connect = StateError::pg("connect");
        if self.config.get_ssl_mode() == SslMode::Require {
            let tls = tls::connector();
            let (client, connection) = self.config.connect(tls).await.map_err(connect)?;
            tokio::spawn(drive(connection));
            Ok(client)
        } else {
            let (client, connection) = self.config.connect(NoTls).await.map_err(connect)?;
            tokio::spawn(drive(connection));
            Ok(client)
        }
    }

    /// Connects on `executor`'s runtime.
    pub(super) fn connect_on(
        self: &std::sync::Arc<Self>,
        executor: &Executor,
    ) -> Result<Client, StateError> {
        let target = self.clone();
        executor.run(async move { target.connect().await })
    }
}

async fn drive<F>(connection: F)
where
    F: std::future::Future<Output = Result<(), tokio_postgres::Error>>,
{
    if let Err(error) = connection.await {
        tracing::debug!(%error, "PostgreSQL connection ended");
    }
}

/// PGPASSWORD, else the password file's line for this connection.
fn password_for(config: &Config) -> Option<String> {
    if let Ok(password) = std::env::var("PGPASSWORD") {
        return Some(password);
    }
    let host = match config.get_hosts().first()? {
        Host::Tcp(name) => name.clone(),
        // libpq matches a socket connection against "localhost".
        Host::Unix(_) => "localhost".into(),
    };
    let user = config.get_user()?;
    pgpass::password(&pgpass::Wanted {
        host: &host,
        port: config.get_ports().first().copied().unwrap_or(5432),
        database: config.get_dbname().unwrap_or(user),
        user,
    })
}

mod tls {
    pub(super) fn connector() -> tokio_postgres_rustls::MakeRustlsConnect {
        let roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        tokio_postgres_rustls::MakeRustlsConnect::new(config)
    }
}
