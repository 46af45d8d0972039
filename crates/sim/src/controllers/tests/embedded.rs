//! The embedded cluster: with a cloud its nodes come up initialised from their servers.

use std::time::Duration;

use crate::cloudscale::{self, SimOptions, DEFAULT_TOKEN};
use crate::controllers::http::Kube;
use crate::controllers::{embedded_cluster, CloudscaleEndpoint, EmbeddedClouds};
use crate::kubernetes::KubeFaults;

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
    let cluster = embedded_cluster(world.clone(), cloudscale(&endpoint), KubeFaults::default())
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
    let cluster = embedded_cluster(world, cloudscale(&endpoint), KubeFaults::default())
        .await
        .unwrap();
    let servers = crate::controllers::http::Cloud::new(&endpoint.api, &endpoint.token)
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
    let cluster = embedded_cluster(
        dir.path().join("k.json"),
        EmbeddedClouds::default(),
        KubeFaults::default(),
    )
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

#[tokio::test]
async fn with_phoenixnap_the_nodes_are_its_servers_and_services_get_blocks() {
    use crate::controllers::PnapEndpoint;
    use crate::phoenixnap::{
        self, PnapSimOptions, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, DEFAULT_PUBLIC_NETWORK_ID,
    };
    let dir = tempfile::tempdir().unwrap();
    let cloud = phoenixnap::spawn(
        dir.path().join("p.json"),
        "127.0.0.1:0".parse().unwrap(),
        PnapSimOptions {
            transition: Duration::from_millis(20),
            ..PnapSimOptions::default()
        },
    )
    .await
    .unwrap();
    let pnap = PnapEndpoint {
        base_url: cloud.base_url(),
        client_id: DEFAULT_CLIENT_ID.into(),
        client_secret: DEFAULT_CLIENT_SECRET.into(),
        location: "PHX".into(),
        load_balancer: format!("kube-vip://{DEFAULT_PUBLIC_NETWORK_ID}"),
    };
    assert!(!format!("{pnap:?}").contains(DEFAULT_CLIENT_SECRET));
    let clouds = EmbeddedClouds {
        cloudscale: None,
        phoenixnap: Some(pnap.clone()),
    };
    let cluster = embedded_cluster(dir.path().join("k.json"), clouds, KubeFaults::default())
        .await
        .unwrap();
    assert_eq!(cluster.controller_error(), None);
    let kube = Kube::new(cluster.url());
    let nodes = kube.list("/api/v1/nodes").await.unwrap();
    assert_eq!(nodes.len(), 3);
    for node in &nodes {
        let provider_id = node["spec"]["providerID"].as_str().unwrap();
        assert!(provider_id.starts_with("phoenixnap://"), "{node}");
        assert!(
            node["spec"]["taints"].as_array().is_none_or(Vec::is_empty),
            "{node}"
        );
    }
    let service = serde_json::json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
    kube.post("/api/v1/namespaces/default/services", &service)
        .await
        .unwrap();
    let mut published = None;
    for _ in 0..100 {
        let service = kube
            .get("/api/v1/namespaces/default/services/web")
            .await
            .unwrap();
        let ip = service["status"]["loadBalancer"]["ingress"][0]["ip"].as_str();
        if ip.is_some_and(|ip| !ip.is_empty()) {
            assert_eq!(
                Some(service["spec"]["loadBalancerIP"].as_str().unwrap()),
                ip
            );
            published = ip.map(str::to_owned);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(published.is_some(), "the Service never got its address");
    cluster.shutdown().await.unwrap();

    // Misconfigured: the CCM refuses to start and the cluster says why.
    let mut broken = pnap;
    broken.location.clear();
    let clouds = EmbeddedClouds {
        cloudscale: None,
        phoenixnap: Some(broken),
    };
    let cluster = embedded_cluster(dir.path().join("k2.json"), clouds, KubeFaults::default())
        .await
        .unwrap();
    assert_eq!(
        cluster.controller_error(),
        Some("no location specified, cannot proceed")
    );
    cluster.shutdown().await.unwrap();
    cloud.shutdown().await.unwrap();
}
