//! Embedded clusters: the Kubernetes simulator, its nodes backed by the embedded cloud beside
//! it, whose simulated controller runs in it.

use std::path::PathBuf;

use futures::future::BoxFuture;
use futures::FutureExt;
use skyplan_sim::controllers::{self, EmbeddedClouds};

use crate::provider::Companion;
use skyplan_kubernetes::embedded::{EmbeddedClusters, StartedCluster};

/// Starts embedded clusters beside the embedded clouds (cloudscale first when both run).
pub struct Clusters {
    pub clouds: EmbeddedClouds,
}

impl EmbeddedClusters for Clusters {
    fn start(&self, world: PathBuf) -> BoxFuture<'_, Result<StartedCluster, String>> {
        async move {
            let cluster = controllers::embedded_cluster(world, self.clouds.clone())
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
