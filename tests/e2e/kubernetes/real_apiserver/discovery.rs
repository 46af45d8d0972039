//! Discovery against the real kube-apiserver: a LoadBalancer Service no resource manages —
//! pending, as nothing reconciles it there — is listed by the Kubernetes provider from the
//! server's own Service list (paged, every namespace), with the server's defaults (protocol).

use serde_json::{json, Value};

use crate::kubernetes::real_apiserver::RealCluster;

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn an_unmanaged_load_balancer_service_is_listed_pending() {
    let cluster = RealCluster::get();
    let namespace = cluster.namespace("adopt");
    cluster.create(&json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": namespace,
                     "annotations": {"k8s.cloudscale.ch/loadbalancer-flavor": "lb-standard"}},
        "spec": {"type": "LoadBalancer", "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    }));
    cluster.create(&json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "internal", "namespace": namespace},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }));
    let project = cluster.project("");
    let out = project.run(&["discover", "--provider", "kubernetes", "--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let listed = out.json();
    let ours: Vec<&Value> = listed["unmanaged"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["id"]
                .as_str()
                .is_some_and(|id| id.starts_with(&format!("{namespace}/")))
        })
        .collect();
    assert_eq!(ours.len(), 1, "only the LoadBalancer Service: {listed:#}");
    let web = ours[0];
    assert_eq!(web["id"], format!("{namespace}/web"));
    assert_eq!(web["provider"], "kubernetes");
    assert_eq!(web["made_by"], json!({"by": "unknown"}));
    assert_eq!(web["cluster"], "cluster.prod");
    assert_eq!(web["importable"], false);
    assert!(
        web["address"]
            .as_str()
            .unwrap()
            .starts_with("load-balancer.web"),
        "{web:#}"
    );
    assert_eq!(
        web["summary"], "pending; port 80/TCP; cloudscale CCM annotations",
        "the server defaulted the protocol: {web:#}"
    );
}
