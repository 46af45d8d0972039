//! The embedded cloudscale.ch API.

use std::path::Path;
use std::time::Duration;

use skyplan_sim::cloudscale as sim;
use skyplan_sim::controllers::CloudscaleEndpoint;

use crate::model::Secret;
use crate::provider::{Companion, ProviderError};
use skyplan_cloudscale::CloudscaleEmbedded;

const PROVIDER: &str = "cloudscale";

/// How long the embedded cloud's load balancers stay `changing` after a change.
const SETTLE_ENV: &str = "SKYPLAN_SIM_SETTLE_MS";

/// Starts the simulator over `<state-dir>/embedded/cloudscale.json`: what the provider
/// connects to, and where what runs beside it (the embedded cluster's servers and cloud
/// controller) finds it.
pub async fn cloudscale(
    state_dir: &Path,
) -> Result<(CloudscaleEmbedded, CloudscaleEndpoint), ProviderError> {
    let world = super::world_file(PROVIDER, state_dir, "cloudscale.json")?;
    let options = sim::SimOptions {
        settle: super::millis_from_env(SETTLE_ENV, Duration::from_millis(50)),
        faults: super::faults_from_env(PROVIDER, sim::FAULTS_ENV)?,
        ..sim::SimOptions::default()
    };
    let handle = sim::spawn(world, super::loopback(), options)
        .await
        .map_err(|e| super::not_started(PROVIDER, e))?;
    let endpoint = CloudscaleEndpoint {
        api: handle.base_url(),
        token: sim::DEFAULT_TOKEN.to_string(),
    };
    let embedded = CloudscaleEmbedded {
        base_url: handle.base_url(),
        token: Secret::new(sim::DEFAULT_TOKEN),
        companion: Companion::new("cannot save the embedded world", move || handle.shutdown()),
    };
    Ok((embedded, endpoint))
}
