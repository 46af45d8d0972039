//! A simulator of the Apache CloudStack API (`/client/api`), written from the published API
//! facts and CloudStack's server code (see ../shared/research/cloudstack.md), apart from
//! skyplan's CloudStack client: it shares no code with `crate::provider::cloudstack`, so a
//! client that works against it reads the protocol the way the real server does.
//!
//! INTERFACE (fixed; embedded mode and `skyplan sim serve --provider cloudstack` use it):
//! [`spawn`], [`SimOptions`], [`SimHandle`] (`base_url`, `request_count`, `shutdown`,
//! `serve_until_ctrl_c`), [`DEFAULT_API_KEY`], [`DEFAULT_SECRET_KEY`].
//!
//! Codemap: `server` starts and stops it and serves the endpoint; `signing` checks request
//! signatures; `params` decodes parameters; `api` the envelope, errors and paging; `commands`
//! one file per area (catalog, VMs, public IPs, LB rules, firewall, tags, CKS clusters);
//! `jobs` the async jobs; `world` the data and file format, `inventory` a fresh account,
//! `persist` the file writes; `state` what every request shares; `stats` the request counters
//! and the log of what jobs did to rules' VMs; `faults` the faults injected on purpose,
//! `health` the VM states a rule's members report.

mod api;
mod cks;
mod commands;
mod faults;
mod health;
mod inventory;
mod jobs;
mod params;
mod persist;
mod server;
mod signing;
mod state;
mod stats;
mod world;

#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

pub use crate::cloudscale::{FaultsError, FAULTS_ENV};
pub use faults::Faults;
pub use jobs::MemberChange;
pub use server::{spawn, SimHandle, API_PATH};
pub use stats::{MemberEntry, RequestCounts};

/// The keys the simulator accepts unless told otherwise; embedded mode uses them too.
pub const DEFAULT_API_KEY: &str = "skyplan-sim-cloudstack-api-key";
pub const DEFAULT_SECRET_KEY: &str = "skyplan-sim-cloudstack-secret-key";

#[derive(Clone)]
pub struct SimOptions {
    /// The API key to accept; `None` means [`DEFAULT_API_KEY`].
    pub api_key: Option<String>,
    /// The secret key requests must be signed with; `None` means [`DEFAULT_SECRET_KEY`].
    pub secret_key: Option<String>,
    /// How long an async job stays pending (jobstatus 0) before it ends.
    pub job_time: Duration,
    /// `cloudstackversion` as listCapabilities reports it, e.g. "4.22.0.0".
    pub version: String,
    /// The hypervisor of every VM created, e.g. "KVM".
    pub hypervisor: String,
    /// `default.page.size`.
    pub page_size: usize,
    /// What goes wrong on purpose; none by default.
    pub faults: Faults,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            api_key: None,
            secret_key: None,
            job_time: Duration::from_millis(300),
            version: state::DEFAULT_VERSION.into(),
            hypervisor: state::DEFAULT_HYPERVISOR.into(),
            page_size: 500,
            faults: Faults::default(),
        }
    }
}

/// Never shows the secret key.
impl fmt::Debug for SimOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimOptions")
            .field("api_key", &self.api_key)
            .field("secret_key", &self.secret_key.as_ref().map(|_| "***"))
            .field("job_time", &self.job_time)
            .field("version", &self.version)
            .field("hypervisor", &self.hypervisor)
            .field("page_size", &self.page_size)
            .field("faults", &self.faults.to_string())
            .finish()
    }
}
