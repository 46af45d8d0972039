//! The embedded PhoenixNAP APIs (token, IP, network, tag, BMC).

use std::path::Path;
use std::time::Duration;

use skyplan_sim::controllers::PnapEndpoint;
use skyplan_sim::phoenixnap as sim;

use crate::model::Secret;
use crate::provider::{Companion, ProviderError};
use skyplan_phoenixnap::client::Credentials;
use skyplan_phoenixnap::{PhoenixnapProvider, PnapEmbedded};

const PROVIDER: &str = "phoenixnap";

/// Faults the embedded cloud injects (none unless set).
const FAULTS_ENV: &str = "SKYPLAN_SIM_PNAP_FAULTS";
/// How long the embedded cloud's attach and detach take (default 100 ms).
const TRANSITION_ENV: &str = "SKYPLAN_SIM_PNAP_TRANSITION_MS";
/// Turns the embedded cluster's simulated PhoenixNAP CCM off (`off`), for tests of what
/// skyplan sees before the controller acts.
const CCM_ENV: &str = "SKYPLAN_SIM_PNAP_CCM";
/// The public network the embedded CCM's `PNAP_LOAD_BALANCER` names: the fresh world's.
const CCM_NETWORK: &str = "k8s-public";

/// Starts the simulator over `<state-dir>/embedded/phoenixnap.json`; also returns its API
/// root, for [`phoenixnap_ccm`].
pub async fn phoenixnap(state_dir: &Path) -> Result<(PnapEmbedded, String), ProviderError> {
    let world = super::world_file(PROVIDER, state_dir, "phoenixnap.json")?;
    let options = sim::PnapSimOptions {
        transition: super::millis_from_env(TRANSITION_ENV, Duration::from_millis(100)),
        faults: super::faults_from_env(PROVIDER, FAULTS_ENV)?,
        ..sim::PnapSimOptions::default()
    };
    let handle = sim::spawn(world, super::loopback(), options)
        .await
        .map_err(|e| super::not_started(PROVIDER, e))?;
    let base_url = handle.base_url();
    let embedded = PnapEmbedded {
        base_url: base_url.clone(),
        credentials: Credentials {
            client_id: sim::DEFAULT_CLIENT_ID.to_owned(),
            client_secret: Secret::new(sim::DEFAULT_CLIENT_SECRET),
        },
        companion: Companion::new("stopping the embedded simulator", move || handle.shutdown()),
    };
    Ok((embedded, base_url))
}

/// The embedded cloud as the embedded cluster beside it sees it: its nodes are the servers,
/// and its CCM is configured as an operator would — the provider's location and
/// `kube-vip://<id of k8s-public>`. `None` when `SKYPLAN_SIM_PNAP_CCM=off`.
pub async fn phoenixnap_ccm(
    provider: &PhoenixnapProvider,
    base_url: String,
) -> Result<Option<PnapEndpoint>, ProviderError> {
    if std::env::var(CCM_ENV).is_ok_and(|v| v == "off") {
        return Ok(None);
    }
    let network = provider.public_network_for_ccm(CCM_NETWORK).await?;
    Ok(Some(PnapEndpoint {
        base_url,
        client_id: sim::DEFAULT_CLIENT_ID.to_owned(),
        client_secret: sim::DEFAULT_CLIENT_SECRET.to_owned(),
        location: provider.location().to_owned(),
        load_balancer: network.map_or_else(String::new, |id| format!("kube-vip://{id}")),
    }))
}
