//! The Kubernetes provider's discovery against the simulated cluster: every LoadBalancer
//! Service no resource manages is listed (provider kubernetes, not importable — its cloud's
//! provider adopts the load balancer a controller makes for it), with where users reach it,
//! its ports, whose controller's annotations it carries and who made it.

use serde_json::{json, Value};

use crate::support::http;
use crate::support::kube_sim::with_cluster;
use crate::support::Project;

const CONFIG: &str = "[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

fn create_service(url: &str, body: Value) {
    let url = format!("{url}/api/v1/namespaces/default/services");
    let result = http::request("POST", &url).json(&body).ok();
    assert!(result.is_ok(), "POST service: {result:?}");
}

fn service(name: &str, type_: &str, annotations: Value, ports: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {"type": type_, "selector": {"app": name}, "ports": ports},
    })
}

/// An embedded cluster holding a LoadBalancer Service with the cloudscale CCM's annotations
/// and an address, one skyplan marked as `load-balancer.legacy` (a config since lost), and a
/// ClusterIP Service.
fn cluster_with_services() -> Project {
    let project = Project::new();
    project.config(CONFIG);
    let first = project.run(&["drift"]);
    assert_eq!(first.code, 2, "never applied: {first:?}");
    with_cluster(&project, |kube| {
        let ports = json!([{"name": "http", "port": 80, "targetPort": 8080},
                           {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53}]);
        let annotations = json!({"k8s.cloudscale.ch/loadbalancer-flavor": "lb-standard"});
        create_service(
            &kube.url,
            service("shop", "LoadBalancer", annotations, ports),
        );
        let url = format!(
            "{}/api/v1/namespaces/default/services/shop/status",
            kube.url
        );
        let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.10"}]}}});
        let written = http::request("PATCH", &url).merge_patch(&status).ok();
        assert!(written.is_ok(), "PATCH status: {written:?}");
        let port = json!([{"name": "https", "port": 443, "targetPort": 8443}]);
        let marked = json!({"skyplan.address": "load-balancer.legacy"});
        create_service(
            &kube.url,
            service("legacy", "LoadBalancer", marked, port.clone()),
        );
        create_service(&kube.url, service("internal", "ClusterIP", json!({}), port));
    });
    project
}

#[test]
fn every_unmanaged_load_balancer_service_is_listed_and_none_is_adopted_by_itself() {
    let project = cluster_with_services();

    let text = project.run(&["discover"]);
    assert_eq!(text.code, 0, "{text:?}");
    for line in [
        "? load-balancer.shop (kubernetes default/shop) shop",
        "made by unknown; serves Service default/shop in cluster.prod",
        "203.0.113.10; ports 80/TCP, 53/UDP; cloudscale CCM annotations",
        "? load-balancer.legacy (kubernetes default/legacy) legacy",
        "made by skyplan (as load-balancer.legacy); serves Service default/legacy in cluster.prod",
        "pending; port 443/TCP",
        "2 objects that no resource manages.",
    ] {
        assert!(text.stdout.contains(line), "{line}\n{text:?}");
    }
    assert!(!text.stdout.contains("internal"), "{text:?}");

    let listed = project
        .run(&["discover", "--cluster", "prod", "--format", "json"])
        .json();
    let entries = listed["unmanaged"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{listed:#}");
    for entry in entries {
        assert_eq!(entry["provider"], "kubernetes");
        assert_eq!(entry["kind"], "load-balancer");
        assert_eq!(entry["cluster"], "cluster.prod");
        assert_eq!(entry["importable"], false);
        assert_eq!(
            entry["service"],
            json!({"cluster": "cluster.prod", "service": entry["id"]})
        );
    }
    let legacy = entries
        .iter()
        .find(|e| e["id"] == "default/legacy")
        .unwrap();
    assert_eq!(
        legacy["made_by"],
        json!({"by": "skyplan", "name": "load-balancer.legacy"})
    );

    let drift = project.run(&["drift", "--unmanaged"]);
    assert_eq!(drift.code, 2, "{drift:?}");
    assert!(drift.stdout.contains("? load-balancer.shop"), "{drift:?}");

    // Nothing to adopt: a Service's load balancer is its cloud's, once a controller made it.
    let file = project.path().join("adopted.toml");
    let file = file.to_str().unwrap();
    let all = project.run(&["import", "--generate-config", file, "--all"]);
    assert_eq!(all.code, 0, "{all:?}");
    assert!(
        all.stderr
            .contains("2 objects that cannot be adopted on their own"),
        "{all:?}"
    );
    let named = project.run(&[
        "import",
        "--generate-config",
        file,
        "load-balancer.shop=default/shop",
    ]);
    assert_eq!(named.code, 1, "{named:?}");
    assert!(
        named
            .stderr
            .contains("a Service no cloud object serves yet"),
        "{named:?}"
    );
    assert!(!std::path::Path::new(file).exists());
}
