//! The embedded CloudStack API (with its CKS clusters).

use std::path::Path;
use std::time::Duration;

use skyplan_sim::cloudstack as sim;

use crate::provider::{Companion, ProviderError};
use skyplan_cloudstack::client::Secret;
use skyplan_cloudstack::provider::CloudstackEmbedded;

const PROVIDER: &str = "cloudstack";

/// How long the embedded cloud's async jobs stay pending (default 50 ms).
const JOB_TIME_ENV: &str = "SKYPLAN_SIM_JOB_MS";
/// The embedded cloud's server version (listCapabilities), e.g. `4.20.0.0`; default 4.22.
const VERSION_ENV: &str = "SKYPLAN_SIM_CLOUDSTACK_VERSION";
/// The embedded cloud's hypervisor, e.g. `XenServer`; default KVM.
const HYPERVISOR_ENV: &str = "SKYPLAN_SIM_CLOUDSTACK_HYPERVISOR";

/// Starts the simulator over `<state-dir>/embedded/cloudstack.json`. Its faults are
/// cloudscale's variable's (`SKYPLAN_SIM_FAULTS`), plus `job-fail=P`.
pub async fn cloudstack(state_dir: &Path) -> Result<CloudstackEmbedded, ProviderError> {
    let world = super::world_file(PROVIDER, state_dir, "cloudstack.json")?;
    let defaults = sim::SimOptions::default();
    let options = sim::SimOptions {
        job_time: super::millis_from_env(JOB_TIME_ENV, Duration::from_millis(50)),
        version: std::env::var(VERSION_ENV).unwrap_or(defaults.version.clone()),
        hypervisor: std::env::var(HYPERVISOR_ENV).unwrap_or(defaults.hypervisor.clone()),
        faults: super::faults_from_env(PROVIDER, skyplan_sim::cloudscale::FAULTS_ENV)?,
        ..defaults
    };
    let handle = sim::spawn(world, super::loopback(), options)
        .await
        .map_err(|e| super::not_started(PROVIDER, e))?;
    Ok(CloudstackEmbedded {
        base_url: handle.base_url(),
        api_key: sim::DEFAULT_API_KEY.to_string(),
        secret_key: Secret::new(sim::DEFAULT_SECRET_KEY),
        companion: Companion::new("cannot save the embedded world", move || handle.shutdown()),
    })
}
