//! A simulator of the Apache CloudStack API (`/client/api`), written from the published API
//! facts and CloudStack's server code (see ../shared/research/cloudstack.md), apart from
//! skyplan's CloudStack client: it shares no code with `crate::provider::cloudstack`.
//!
//! INTERFACE (fixed; embedded mode and `skyplan sim serve --provider cloudstack` use it):
//! [`spawn`], [`SimOptions`], [`SimHandle`] (`base_url`, `request_count`, `shutdown`,
//! `serve_until_ctrl_c`), [`DEFAULT_API_KEY`], [`DEFAULT_SECRET_KEY`].

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The keys the simulator accepts unless told otherwise; embedded mode uses them too.
pub const DEFAULT_API_KEY: &str = "skyplan-sim-cloudstack-api-key";
pub const DEFAULT_SECRET_KEY: &str = "skyplan-sim-cloudstack-secret-key";

#[derive(Clone, Debug)]
pub struct SimOptions {
    /// The API key to accept; `None` means [`DEFAULT_API_KEY`].
    pub api_key: Option<String>,
    /// The secret key requests must be signed with; `None` means [`DEFAULT_SECRET_KEY`].
    pub secret_key: Option<String>,
    /// How long an async job stays pending (jobstatus 0) before it ends.
    pub job_time: Duration,
    /// `cloudstackversion` as listCapabilities reports it, e.g. "4.22.0.0".
    pub version: String,
    /// The hypervisor of every VM, e.g. "KVM".
    pub hypervisor: String,
    /// `default.page.size`.
    pub page_size: usize,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            api_key: None,
            secret_key: None,
            job_time: Duration::from_millis(300),
            version: "4.22.0.0".into(),
            hypervisor: "KVM".into(),
            page_size: 500,
        }
    }
}

pub struct SimHandle {}

impl SimHandle {
    /// `http://127.0.0.1:PORT/client/api`.
    pub fn base_url(&self) -> String {
        String::new()
    }

    pub fn request_count(&self) -> u64 {
        0
    }

    /// Stops serving and writes the world file.
    pub async fn shutdown(self) -> io::Result<()> {
        Ok(())
    }

    /// Serves until SIGINT/SIGTERM, then writes the world file.
    pub async fn serve_until_ctrl_c(self) -> io::Result<()> {
        Ok(())
    }
}

/// Starts the simulator on `listen` over the world file (created with a fresh account's
/// inventory when missing).
pub async fn spawn(
    _world: PathBuf,
    _listen: SocketAddr,
    _options: SimOptions,
) -> io::Result<SimHandle> {
    Err(io::Error::other("not built yet"))
}
