//! The Kubernetes provider's `ClusterConnection` (the `skyplan-kubernetes` library) against the
//! Kubernetes simulator over real HTTP: how many reads a plan's namespace checks cost. Here
//! rather than in the provider's crate because no provider crate depends on the simulators,
//! not even for its tests (`pipeline/layering.rs`).

use k8s_openapi::api::core::v1::Service;

use skyplan_core::model::{Address, ResourceKind};
use skyplan_kubernetes::connection::ClusterConnection;
use skyplan_sim::kubernetes::{spawn, KubeSimOptions};

/// A missing namespace is said once per run, at one GET per namespace, and never asked
/// about when the Service exists.
#[tokio::test]
async fn a_missing_namespace_is_read_once_and_only_for_a_missing_service() {
    let dir = tempfile::tempdir().unwrap();
    let sim = spawn(KubeSimOptions::new(dir.path().join("prod.json")))
        .await
        .unwrap();
    let client = kube::Client::try_from(kube::Config::new(sim.url().parse().unwrap())).unwrap();
    let connection = ClusterConnection::new(Address::new(ResourceKind::Cluster, "prod"), client);
    let before = sim.requests().total;
    for _ in 0..3 {
        let why = connection.missing_namespace("nons", None).await.unwrap();
        assert_eq!(
            why.as_deref(),
            Some("namespace `nons` does not exist in cluster.prod: create it (kubectl create namespace nons) or name a namespace that exists")
        );
        assert_eq!(
            connection.missing_namespace("default", None).await.unwrap(),
            None
        );
    }
    let service = Service::default();
    let found = connection.missing_namespace("other", Some(&service)).await;
    assert_eq!(found.unwrap(), None);
    assert_eq!(sim.requests().total - before, 2, "one GET per namespace");
    sim.shutdown().await.unwrap();
}
