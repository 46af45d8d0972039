//! Embedded clusters: the Kubernetes simulator, its nodes backed by the embedded cloud beside
//! it, whose simulated controller runs in it.

use std::path::PathBuf;

use futures::future::BoxFuture;
use futures::FutureExt;
use skyplan_sim::controllers::{self, EmbeddedClouds};

use crate::provider::Companion;
use skyplan_kubernetes::embedded::{EmbeddedClusters, StartedCluster};

/// Faults the embedded clusters' API injects (`unhealthy-after-change=P|NAME`; none unless
/// set): apart from the clouds' `SKYPLAN_SIM_FAULTS`, whose request faults it does not take.
const FAULTS_ENV: &str = "SKYPLAN_SIM_KUBE_FAULTS";

/// Starts embedded clusters beside the embedded clouds (cloudscale first when both run).
pub struct Clusters {
    pub clouds: EmbeddedClouds,
}

impl EmbeddedClusters for Clusters {
    fn start(&self, world: PathBuf) -> BoxFuture<'_, Result<StartedCluster, String>> {
        async move {
            let faults =
                super::faults_from_env("kubernetes", FAULTS_ENV).map_err(|e| e.to_string())?;
            let cluster = controllers::embedded_cluster(world, self.clouds.clone(), faults)
                .await
                .map_err(|e| e.to_string())?;
            Ok(StartedCluster {
                url: cluster.url().to_owned(),
                companion: Companion::new("stopping the embedded cluster", move || {
                    cluster.shutdown()
                }),
            })
        }
        .boxed()
    }
}
