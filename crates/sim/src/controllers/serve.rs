//! `skyplan sim serve --kubeconfig`: a served simulated cloud's controller run against a real
//! Kubernetes API server, as the cloud's CCM runs in a real cluster — the real server with a
//! simulated cloud and controller is the closest a test machine gets to production.

use std::path::PathBuf;

use super::http::{Kube, Scope};
use super::kubeconfig::endpoint_from_kubeconfig;
use super::phoenixnap::{self, PnapControllerOptions, PnapEndpoint};
use super::{start, CloudscaleEndpoint, ControllerOptions, ControllersHandle};

/// The cluster the controller reconciles, from a kubeconfig.
#[derive(Debug, Clone)]
pub struct ClusterAccess {
    pub kubeconfig: PathBuf,
    /// The kubeconfig's current context when `None`.
    pub context: Option<String>,
    pub scope: Scope,
}

impl ClusterAccess {
    /// The cluster's API as the controllers' client; the server URL, for a log line.
    pub fn connect(&self) -> Result<(Kube, String), String> {
        let endpoint = endpoint_from_kubeconfig(
            &self.kubeconfig,
            self.context.as_deref(),
            self.scope.clone(),
        )?;
        Ok((Kube::connect(&endpoint)?, endpoint.server))
    }
}

/// The simulated cloudscale CCM reconciling `cluster` into the cloud at `cloud` (the served
/// simulator), one pass every [`super::PASS_ENV`] milliseconds.
pub async fn cloudscale_ccm(
    cluster: &ClusterAccess,
    cloud: CloudscaleEndpoint,
) -> Result<ControllersHandle, String> {
    let (kube, server) = cluster.connect()?;
    let handle = start(ControllerOptions {
        kube,
        cloudscale: Some(cloud),
        pass: super::embedded::pass_interval(),
    })
    .await;
    tracing::info!(%server, "the simulated cloudscale CCM reconciles the cluster");
    Ok(handle)
}

/// The simulated PhoenixNAP CCM v1.0.0 reconciling `cluster` into the served simulator; an
/// error is a configuration the real one exits on.
pub async fn phoenixnap_ccm(
    cluster: &ClusterAccess,
    pnap: PnapEndpoint,
) -> Result<ControllersHandle, String> {
    let (kube, server) = cluster.connect()?;
    let pass = super::embedded::pass_interval();
    let handle = phoenixnap::start(PnapControllerOptions {
        kube,
        pnap,
        pass,
        reaper: phoenixnap::reaper_interval(pass),
    })
    .await?;
    tracing::info!(%server, "the simulated PhoenixNAP CCM reconciles the cluster");
    Ok(handle)
}
