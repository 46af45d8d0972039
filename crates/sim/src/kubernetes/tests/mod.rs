//! The simulator through kube-rs, a client written for the real apiserver: `kube::Client`
//! over plain HTTP with no auth, the typed k8s-openapi objects, and kube's error helpers.

use std::path::Path;

use k8s_openapi::api::core::v1::{Node, Service};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Config};
use serde_json::json;

use super::{spawn, KubeSimHandle, KubeSimOptions};

async fn start(world: &Path) -> (KubeSimHandle, Client) {
    let sim = spawn(KubeSimOptions::new(world.to_owned())).await.unwrap();
    let config = Config::new(sim.url().parse().unwrap());
    let client = Client::try_from(config).unwrap();
    (sim, client)
}

fn taint(key: &str) -> serde_json::Value {
    json!({"key": key, "value": "x", "effect": "NoSchedule"})
}

#[tokio::test]
async fn nodes_list_label_and_taint_with_optimistic_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("cluster.json");
    let (sim, client) = start(&world).await;
    let nodes: Api<Node> = Api::all(client.clone());

    let listed = nodes.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(listed.items.len(), 2);
    let rest = nodes
        .list(&ListParams::default().continue_token(listed.metadata.continue_.as_deref().unwrap()))
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_eq!(rest.items[0].metadata.name.as_deref(), Some("node-3"));

    let label = Patch::Merge(json!({"metadata": {"labels": {"tier": "web"}}}));
    let labelled = nodes
        .patch("node-1", &PatchParams::default(), &label)
        .await
        .unwrap();
    let version = labelled.metadata.resource_version.clone().unwrap();
    let web = nodes
        .list(&ListParams::default().labels("tier=web"))
        .await
        .unwrap();
    assert_eq!(web.items.len(), 1);

    let taints = |key: &str| {
        Patch::Strategic(json!({"metadata": {"resourceVersion": version},
                                "spec": {"taints": [taint(key)]}}))
    };
    let tainted = nodes
        .patch("node-1", &PatchParams::default(), &taints("a"))
        .await
        .unwrap();
    let on_node = tainted.spec.unwrap().taints.unwrap();
    assert_eq!(on_node.len(), 1);
    assert_eq!(on_node[0].key, "a");
    let stale = nodes
        .patch("node-1", &PatchParams::default(), &taints("b"))
        .await
        .unwrap_err();
    assert!(
        matches!(&stale, kube::Error::Api(status) if status.is_conflict()),
        "{stale:?}"
    );

    let missing = nodes.get("node-9").await.unwrap_err();
    assert!(matches!(&missing, kube::Error::Api(status) if status.is_not_found()));
    assert!(sim.requests().total >= 6);

    sim.shutdown().await.unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&world).unwrap()).unwrap();
    assert_eq!(saved["nodes"]["node-1"]["spec"]["taints"][0]["key"], "a");
    assert_eq!(
        saved["nodes"]["node-1"]["metadata"]["labels"]["tier"],
        "web"
    );
}

#[tokio::test]
async fn services_create_get_apply_keep_node_ports_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, client) = start(&dir.path().join("cluster.json")).await;
    let services: Api<Service> = Api::namespaced(client, "default");
    let service: Service = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "shop"},
        "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    }))
    .unwrap();

    let created = services
        .create(&PostParams::default(), &service)
        .await
        .unwrap();
    let spec = created.spec.clone().unwrap();
    let node_port = spec.ports.as_ref().unwrap()[0].node_port.unwrap();
    assert!((30000..=32767).contains(&node_port));
    assert!(spec.health_check_node_port.is_some());
    let again = services
        .create(&PostParams::default(), &service)
        .await
        .unwrap_err();
    assert!(matches!(&again, kube::Error::Api(s) if s.is_already_exists()));

    let fetched = services.get("shop").await.unwrap();
    assert_eq!(fetched.metadata.uid, created.metadata.uid);

    let mut renumbered = service.clone();
    renumbered.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].port = 8080;
    let applied = services
        .patch(
            "shop",
            &PatchParams::apply("skyplan").force(),
            &Patch::Apply(&renumbered),
        )
        .await
        .unwrap();
    let ports = applied.spec.clone().unwrap().ports.unwrap();
    assert_eq!(ports.len(), 1, "{ports:?}");
    assert_eq!(ports[0].port, 8080);
    assert_eq!(ports[0].node_port, Some(node_port), "kept by port name");
    assert_eq!(
        applied.spec.unwrap().health_check_node_port,
        spec.health_check_node_port
    );

    let bad = Patch::Merge(json!({"spec": {"ports": [{"name": "http", "port": 0}]}}));
    let invalid = services
        .patch("shop", &PatchParams::default(), &bad)
        .await
        .unwrap_err();
    assert!(
        matches!(&invalid, kube::Error::Api(s) if s.is_invalid()),
        "{invalid:?}"
    );

    services
        .delete("shop", &DeleteParams::default())
        .await
        .unwrap();
    let gone = services.get("shop").await.unwrap_err();
    assert!(matches!(&gone, kube::Error::Api(s) if s.is_not_found()));
    sim.shutdown().await.unwrap();
}

/// A namespace that does not exist answers as the apiserver does: 404 with its `Status` body,
/// for the namespace itself and for a Service in it.
#[tokio::test]
async fn a_missing_namespace_is_the_apiservers_404_status() {
    use k8s_openapi::api::core::v1::Namespace;
    let dir = tempfile::tempdir().unwrap();
    let (sim, client) = start(&dir.path().join("cluster.json")).await;
    let raw = reqwest::get(format!("{}/api/v1/namespaces/nons", sim.url()))
        .await
        .unwrap();
    assert_eq!(raw.status(), 404);
    let body: serde_json::Value = raw.json().await.unwrap();
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "namespaces \"nons\" not found", "reason": "NotFound",
               "details": {"name": "nons", "kind": "namespaces"}, "code": 404})
    );
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(namespaces.get_opt("nons").await.unwrap().is_none());
    assert!(namespaces.get_opt("default").await.unwrap().is_some());
    let services: Api<Service> = Api::namespaced(client, "nons");
    assert!(services.get_opt("web3").await.unwrap().is_none());
    sim.shutdown().await.unwrap();
}
