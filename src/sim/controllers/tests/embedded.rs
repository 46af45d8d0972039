//! The embedded cluster: with a cloud its nodes come up initialised from their servers.

use std::time::Duration;

use crate::sim::cloudscale::{self, SimOptions, DEFAULT_TOKEN};
use crate::sim::controllers::http::Kube;
use crate::sim::controllers::{embedded_cluster, CloudscaleEndpoint, EmbeddedClouds};

#[tokio::test]
async fn with_a_cloud_the_nodes_are_backed_by_servers_and_initialised() {
    let dir = tempfile::tempdir().unwrap();
    let options = SimOptions {
        settle: Duration::from_millis(20),
        ..SimOptions::default()
    };
    let cloud = cloudscale::spawn(
        dir.path().join("c.json"),
        "127.0.0.1:0".parse().unwrap(),
        options,
    )
    .await
    .unwrap();
    let endpoint = CloudscaleEndpoint {
        api: cloud.base_url(),
        token: DEFAULT_TOKEN.into(),
    };
    let world = dir.path().join("k.json");
    let cluster = embedded_cluster(world.clone(), cloudscale(&endpoint))
        .await
        .unwrap();
    let nodes = Kube::new(cluster.url())
        .list("/api/v1/nodes")
        .await
        .unwrap();
    assert_eq!(nodes.len(), 3);
    for node in &nodes {
        assert!(
            node["spec"]["providerID"]
                .as_str()
                .unwrap()
                .starts_with("cloudscale://"),
            "{node}"
        );
        assert!(
            node["spec"]["taints"].as_array().is_none_or(Vec::is_empty),
            "{node}"
        );
    }
    cluster.shutdown().await.unwrap();

    // Started again on its world: no new servers, the same nodes.
    let cluster = embedded_cluster(world, cloudscale(&endpoint))
        .await
        .unwrap();
    let servers = crate::sim::controllers::http::Cloud::new(&endpoint.api, &endpoint.token)
        .list("servers")
        .await
        .unwrap();
    assert_eq!(servers.len(), 3);
    cluster.shutdown().await.unwrap();
    cloud.shutdown().await.unwrap();
}

#[tokio::test]
async fn without_a_cloud_three_initialised_nodes_and_no_controllers() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = embedded_cluster(dir.path().join("k.json"), EmbeddedClouds::default())
        .await
        .unwrap();
    let nodes = Kube::new(cluster.url())
        .list("/api/v1/nodes")
        .await
        .unwrap();
    assert_eq!(nodes.len(), 3);
    assert!(nodes
        .iter()
        .all(|n| n["spec"]["taints"].as_array().is_none_or(Vec::is_empty)));
    cluster.shutdown().await.unwrap();
}

fn cloudscale(endpoint: &CloudscaleEndpoint) -> EmbeddedClouds {
    EmbeddedClouds {
        cloudscale: Some(endpoint.clone()),
        phoenixnap: None,
    }
}
