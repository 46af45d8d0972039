//! The embedded world: for `endpoint = "embedded"` (and `kubeconfig = "embedded"`), the
//! simulator started on 127.0.0.1 over the world kept under `<state-dir>/embedded/`, handed to
//! its provider as a URL, credentials and a [`Companion`](crate::provider::Companion) that
//! stops it. The only place skyplan starts a simulator: providers never know they talk to one.

mod cloudscale;
mod cloudstack;
mod kubernetes;
mod phoenixnap;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use cloudscale::cloudscale;
pub use cloudstack::cloudstack;
pub use kubernetes::Clusters;
pub use phoenixnap::{phoenixnap, phoenixnap_ccm};

use crate::provider::ProviderError;

/// Where an embedded simulator listens: a free port of the loopback interface.
fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().expect("a socket address")
}

/// `<state-dir>/embedded/<file>`, its directory created.
fn world_file(provider: &str, state_dir: &Path, file: &str) -> Result<PathBuf, ProviderError> {
    let dir = state_dir.join("embedded");
    std::fs::create_dir_all(&dir).map_err(|e| {
        ProviderError::new(provider, format!("cannot create {}: {e}", dir.display()))
    })?;
    Ok(dir.join(file))
}

/// A duration in milliseconds from the environment variable, else `default`.
fn millis_from_env(variable: &str, default: Duration) -> Duration {
    std::env::var(variable)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(default, Duration::from_millis)
}

/// Faults a simulator injects, parsed from the environment variable (none unless set).
fn faults_from_env<F>(provider: &str, variable: &str) -> Result<F, ProviderError>
where
    F: std::str::FromStr + Default,
    F::Err: std::fmt::Display,
{
    match std::env::var(variable) {
        Ok(spec) => spec
            .parse()
            .map_err(|e| ProviderError::new(provider, format!("{variable}: {e}"))),
        Err(_) => Ok(F::default()),
    }
}

fn not_started(provider: &str, e: impl std::fmt::Display) -> ProviderError {
    ProviderError::new(
        provider,
        format!("cannot start the embedded simulator: {e}"),
    )
}
