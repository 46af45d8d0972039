//! The hook into the CloudStack simulator: a CKS cluster's own Kubernetes API comes with this
//! CCM, so a LoadBalancer Service created there becomes an LB rule on the cluster's VMs.

use std::time::Duration;

use serde_json::{json, Value};

use super::super::client::CsApi;
use crate::cloudstack::{self, SimOptions, DEFAULT_API_KEY, DEFAULT_SECRET_KEY};
use crate::controllers::http::Kube;

const LIMIT: Duration = Duration::from_secs(20);

async fn id_named(api: &CsApi, command: &str, key: &str, field: &str, value: &str) -> String {
    let items = api
        .list(command, key, &[("listall", "true".into())])
        .await
        .unwrap();
    let item = items.iter().find(|i| i[field] == value);
    let item = item.unwrap_or_else(|| panic!("no {key} with {field} {value}"));
    item["id"].as_str().unwrap().to_owned()
}

/// Polls `probe` until it gives something, or fails the test after [`LIMIT`].
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_cks_clusters_service_gets_a_rule_on_the_clusters_vms() {
    let dir = tempfile::tempdir().unwrap();
    let options = SimOptions {
        job_time: Duration::from_millis(5),
        ..SimOptions::default()
    };
    let sim = cloudstack::spawn(
        dir.path().join("cs.json"),
        "127.0.0.1:0".parse().unwrap(),
        options,
    )
    .await
    .unwrap();
    let api = CsApi::new(&sim.base_url(), DEFAULT_API_KEY, DEFAULT_SECRET_KEY);
    let params = [
        ("name", "shop".to_owned()),
        (
            "zoneid",
            id_named(&api, "listZones", "zone", "name", "zone1").await,
        ),
        (
            "serviceofferingid",
            id_named(
                &api,
                "listServiceOfferings",
                "serviceoffering",
                "name",
                "Small Instance",
            )
            .await,
        ),
        (
            "kubernetesversionid",
            id_named(
                &api,
                "listKubernetesSupportedVersions",
                "kubernetessupportedversion",
                "semanticversion",
                "1.28.15",
            )
            .await,
        ),
        (
            "networkid",
            id_named(&api, "listNetworks", "network", "name", "k8s-net").await,
        ),
        ("size", "2".to_owned()),
    ];
    let created = api.run("createKubernetesCluster", &params).await.unwrap();
    let cluster_id = created["kubernetescluster"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = eventually("the cluster's API", || async {
        let config = api
            .call("getKubernetesClusterConfig", &[("id", cluster_id.clone())])
            .await
            .ok()?;
        let data = config["clusterconfig"]["configdata"].as_str()?.to_owned();
        let server = data
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: "))?;
        server.starts_with("http://").then(|| server.to_owned())
    })
    .await;
    let kube = Kube::new(&url);
    // The VMs behind the nodes, by the providerIDs the cluster's nodes carry.
    let vm_ids: Vec<String> = eventually("three nodes", || async {
        let nodes = kube.list("/api/v1/nodes").await.ok()?;
        let mut ids: Vec<String> = nodes
            .iter()
            .filter_map(|n| n["spec"]["providerID"].as_str())
            .map(|p| p.trim_start_matches("external-cloudstack://").to_owned())
            .collect();
        ids.sort();
        (ids.len() == 3).then_some(ids)
    })
    .await;
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "shop"},
        "spec": {"type": "LoadBalancer", "selector": {"app": "shop"},
                 "ports": [{"name": "http", "protocol": "TCP", "port": 80, "nodePort": 30080}]},
    });
    kube.post("/api/v1/namespaces/default/services", &service)
        .await
        .unwrap();
    let rule: Value = eventually("the LB rule", || async {
        let rules = api
            .list(
                "listLoadBalancerRules",
                "loadbalancerrule",
                &[("listall", "true".into())],
            )
            .await
            .ok()?;
        rules
            .into_iter()
            .find(|r| r["name"].as_str().is_some_and(|n| n.ends_with("-tcp-80")))
    })
    .await;
    assert_eq!(rule["privateport"], "30080");
    let members: Vec<String> = eventually("the members", || async {
        let vms = api
            .list(
                "listLoadBalancerRuleInstances",
                "loadbalancerruleinstance",
                &[("id", rule["id"].as_str()?.to_owned())],
            )
            .await
            .ok()?;
        let mut ids: Vec<String> = vms
            .iter()
            .filter_map(|v| v["id"].as_str().map(str::to_owned))
            .collect();
        ids.sort();
        (ids.len() == 3).then_some(ids)
    })
    .await;
    assert_eq!(members, vm_ids);
    let ingress = eventually("the status", || async {
        let service = kube
            .get("/api/v1/namespaces/default/services/shop")
            .await
            .ok()?;
        service["status"]["loadBalancer"]["ingress"][0]["ip"]
            .as_str()
            .map(str::to_owned)
    })
    .await;
    assert_eq!(rule["publicip"], ingress);
    sim.shutdown().await.unwrap();
}
