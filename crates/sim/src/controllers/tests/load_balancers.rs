//! LoadBalancer Services reconciled into the simulated cloud: what is created, and for each
//! change which objects keep their uuid and which are made anew.

use serde_json::{json, Value};

use super::{names, uuids, Harness};
use crate::controllers::config::{UUID, ZONE};
use crate::controllers::writeback::FINALIZER;

/// An initialised cluster with Service `web` (one unnamed port 80) converged.
async fn with_web(annotations: Value) -> Harness {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(
        "web",
        json!([{"port": 80, "targetPort": 8080}]),
        annotations,
    )
    .await;
    h.passes(1).await;
    h
}

async fn pools(h: &Harness) -> Vec<Value> {
    h.list("load-balancers/pools").await
}

async fn members(h: &Harness) -> Vec<Value> {
    let mut all = Vec::new();
    for pool in pools(h).await {
        let uuid = pool["uuid"].as_str().unwrap();
        all.extend(
            h.list(&format!("load-balancers/pools/{uuid}/members"))
                .await,
        );
    }
    all
}

fn node_port(service: &Value, index: usize) -> u64 {
    service["spec"]["ports"][index]["nodePort"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn a_service_gets_a_load_balancer_with_pool_members_listener_and_monitor() {
    let h = with_web(json!({})).await;
    let service = h.service("web").await;
    let uid = service["metadata"]["uid"].as_str().unwrap();
    let lbs = h.list("load-balancers").await;
    assert_eq!(names(&lbs), [format!("k8s-service-{uid}")]);
    assert_eq!(lbs[0]["flavor"]["slug"], "lb-standard");
    assert_eq!(names(&pools(&h).await), ["tcp"]);
    let port = node_port(&service, 0);
    let mut addresses = Vec::new();
    for member in members(&h).await {
        assert_eq!(member["protocol_port"], port);
        assert_eq!(member["monitor_port"], port);
        let address = member["address"].as_str().unwrap();
        assert!(
            address.starts_with("10.0.0."),
            "only private addresses: {member}"
        );
        assert_eq!(member["name"], format!("{address}:{port}"));
        addresses.push(address.to_owned());
    }
    addresses.dedup();
    assert_eq!(addresses.len(), 3, "one member per node");
    let listeners = h.list("load-balancers/listeners").await;
    assert_eq!(names(&listeners), ["tcp/80"]);
    assert_eq!(listeners[0]["protocol_port"], 80);
    let monitors = h.list("load-balancers/health-monitors").await;
    assert_eq!(monitors.len(), 1);
    assert_eq!(monitors[0]["type"], "tcp");

    let annotations = &service["metadata"]["annotations"];
    assert_eq!(annotations[UUID], lbs[0]["uuid"]);
    assert_eq!(
        annotations["k8s.cloudscale.ch/loadbalancer-config-version"],
        "1"
    );
    assert_eq!(annotations[ZONE], "lpg1");
    assert!(service["metadata"]["finalizers"]
        .as_array()
        .unwrap()
        .contains(&json!(FINALIZER)));
    let ingress = &service["status"]["loadBalancer"]["ingress"];
    assert_eq!(ingress[0]["ip"], lbs[0]["vip_addresses"][0]["address"]);
    assert_eq!(ingress[0]["ipMode"], "Proxy");

    let record = h.record("web").await;
    assert_eq!(record.trigger, "ensure");
    assert_eq!(record.error, None);
    for action in [
        "create lb",
        "create pool tcp",
        "create listener tcp/80",
        "create monitor tcp of pool tcp",
    ] {
        assert!(
            record.actions.iter().any(|a| a.starts_with(action)),
            "{action}: {record:?}"
        );
    }
    assert_eq!(
        record
            .actions
            .iter()
            .filter(|a| a.starts_with("create member"))
            .count(),
        3
    );
}

#[tokio::test]
async fn a_converged_service_is_left_alone() {
    let mut h = with_web(json!({})).await;
    let before = h.history().len();
    h.passes(3).await;
    assert_eq!(h.history().len(), before, "{:?}", h.history());
}

#[tokio::test]
async fn renaming_a_port_recreates_its_pool() {
    let mut h = with_web(json!({})).await;
    let old_pool = uuids(&pools(&h).await);
    let old_listener = uuids(&h.list("load-balancers/listeners").await);
    h.merge_service(
        "web",
        json!({"spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}),
    )
    .await;
    h.passes(1).await;
    let new_pools = pools(&h).await;
    assert_eq!(names(&new_pools), ["tcp/http"]);
    assert_ne!(uuids(&new_pools), old_pool);
    assert_eq!(members(&h).await.len(), 3);
    // The CCM deletes only the old pool (and its members): the cloud takes the pool's
    // listener with it, and the new pool gets a listener of its own on the same port.
    let listeners = h.list("load-balancers/listeners").await;
    assert_eq!(names(&listeners), ["tcp/80"]);
    assert_eq!(listeners[0]["pool"]["uuid"], new_pools[0]["uuid"]);
    assert!(!old_listener.contains(&listeners[0]["uuid"].as_str().unwrap().to_owned()));
    let record = h.record("web").await;
    assert!(
        record.actions.contains(&"delete pool tcp".to_string()),
        "{record:?}"
    );
    assert!(
        record.actions.contains(&"create pool tcp/http".to_string()),
        "{record:?}"
    );
}

#[tokio::test]
async fn a_new_node_port_recreates_members_and_keeps_the_pool() {
    let mut h = with_web(json!({})).await;
    let pool = uuids(&pools(&h).await);
    let old_members = uuids(&members(&h).await);
    let port = node_port(&h.service("web").await, 0);
    let new_port = if port == 31999 { 31998 } else { 31999 };
    h.merge_service(
        "web",
        json!({"spec": {"ports": [{"port": 80, "targetPort": 8080, "nodePort": new_port}]}}),
    )
    .await;
    h.passes(1).await;
    assert_eq!(uuids(&pools(&h).await), pool);
    let new_members = members(&h).await;
    assert_eq!(new_members.len(), 3);
    assert!(new_members.iter().all(|m| m["protocol_port"] == new_port));
    assert!(uuids(&new_members).iter().all(|u| !old_members.contains(u)));
}

#[tokio::test]
async fn local_traffic_recreates_members_and_monitor_but_keeps_pool_and_listener() {
    let mut h = with_web(json!({})).await;
    let pool = uuids(&pools(&h).await);
    let listener = uuids(&h.list("load-balancers/listeners").await);
    let monitor = uuids(&h.list("load-balancers/health-monitors").await);
    h.merge_service("web", json!({"spec": {"externalTrafficPolicy": "Local"}}))
        .await;
    h.passes(1).await;
    let service = h.service("web").await;
    let health = service["spec"]["healthCheckNodePort"].as_u64().unwrap();
    assert_eq!(uuids(&pools(&h).await), pool);
    assert_eq!(uuids(&h.list("load-balancers/listeners").await), listener);
    let monitors = h.list("load-balancers/health-monitors").await;
    assert_ne!(uuids(&monitors), monitor);
    assert_eq!(monitors[0]["type"], "http");
    assert_eq!(monitors[0]["http"]["url_path"], "/livez");
    assert_eq!(monitors[0]["http"]["version"], "1.0");
    assert!(members(&h)
        .await
        .iter()
        .all(|m| m["monitor_port"] == health));
}

#[tokio::test]
async fn allowed_cidrs_and_monitor_numbers_change_in_place() {
    let mut h = with_web(json!({})).await;
    let listener = uuids(&h.list("load-balancers/listeners").await);
    let monitor = uuids(&h.list("load-balancers/health-monitors").await);
    let member = uuids(&members(&h).await);
    h.merge_service(
        "web",
        json!({"metadata": {"annotations": {
            "k8s.cloudscale.ch/loadbalancer-listener-allowed-cidrs": "[\"10.9.0.0/16\"]",
            "k8s.cloudscale.ch/loadbalancer-health-monitor-delay-s": "5",
        }}}),
    )
    .await;
    h.passes(1).await;
    let listeners = h.list("load-balancers/listeners").await;
    assert_eq!(uuids(&listeners), listener);
    assert_eq!(listeners[0]["allowed_cidrs"], json!(["10.9.0.0/16"]));
    let monitors = h.list("load-balancers/health-monitors").await;
    assert_eq!(uuids(&monitors), monitor);
    assert_eq!(monitors[0]["delay_s"], 5);
    assert_eq!(uuids(&members(&h).await), member);
    let record = h.record("web").await;
    assert_eq!(
        record.actions,
        [
            "update listener tcp/80 allowed_cidrs",
            "update monitor tcp of pool tcp delay_s"
        ]
    );
}

#[tokio::test]
async fn a_flavor_change_is_refused_and_changes_nothing() {
    let mut h = with_web(json!({})).await;
    let lbs = h.list("load-balancers").await;
    h.merge_service(
        "web",
        json!({"metadata": {"annotations": {"k8s.cloudscale.ch/loadbalancer-flavor": "lb-large"}}}),
    )
    .await;
    h.passes(2).await;
    assert_eq!(h.list("load-balancers").await, lbs);
    let record = h.record("web").await;
    assert!(
        record.error.as_deref().unwrap().contains("flavor"),
        "{record:?}"
    );
    assert!(record.actions.is_empty());
}

#[tokio::test]
async fn a_bad_annotation_aborts_before_any_cloud_call() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(
        "web",
        json!([{"port": 80}]),
        json!({"k8s.cloudscale.ch/loadbalancer-health-monitor-delay-s": "soon"}),
    )
    .await;
    h.passes(2).await;
    assert!(h.list("load-balancers").await.is_empty());
    let record = h.record("web").await;
    assert!(record.error.unwrap().contains("cannot convert"));
}

#[tokio::test]
async fn a_node_label_change_waits_for_the_service_to_change() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    let label = |value: &str| json!({"metadata": {"labels": {"role": value}}});
    let kube = h.kube.clone();
    let patch_node = |name: &'static str, body: Value| {
        let kube = kube.clone();
        async move {
            kube.patch(&format!("/api/v1/nodes/{name}"), super::MERGE_PATCH, &body)
                .await
                .unwrap();
        }
    };
    patch_node("node-1", label("lb")).await;
    h.create_service(
        "web",
        json!([{"port": 80}]),
        json!({"k8s.cloudscale.ch/loadbalancer-node-selector": "role=lb"}),
    )
    .await;
    h.passes(1).await;
    assert_eq!(members(&h).await.len(), 1);
    patch_node("node-2", label("lb")).await;
    h.passes(2).await;
    assert_eq!(members(&h).await.len(), 1, "a label alone triggers nothing");
    h.merge_service("web", json!({"metadata": {"annotations": {"touch": "1"}}}))
        .await;
    h.passes(1).await;
    assert_eq!(members(&h).await.len(), 2);
}

#[tokio::test]
async fn an_excluded_node_loses_its_members_through_an_update() {
    let mut h = with_web(json!({})).await;
    h.kube
        .patch(
            "/api/v1/nodes/node-3",
            super::MERGE_PATCH,
            &json!({"metadata": {"labels": {"node.kubernetes.io/exclude-from-external-load-balancers": "false"}}}),
        )
        .await
        .unwrap();
    h.passes(1).await;
    assert_eq!(members(&h).await.len(), 2);
    let record = h.record("web").await;
    assert_eq!(record.trigger, "update");
    assert_eq!(record.actions.len(), 1, "{record:?}");
    assert!(record.actions[0].starts_with("delete member"));
}

#[tokio::test]
async fn deleting_the_service_deletes_the_load_balancer_and_then_the_service() {
    let mut h = with_web(json!({})).await;
    assert_eq!(h.list("load-balancers").await.len(), 1);
    h.kube
        .delete("/api/v1/namespaces/default/services/web")
        .await
        .unwrap();
    assert!(h.service("web").await["metadata"]["deletionTimestamp"].is_string());
    h.passes(1).await;
    assert!(h.list("load-balancers").await.is_empty());
    assert!(pools(&h).await.is_empty());
    let gone = h
        .kube
        .get("/api/v1/namespaces/default/services/web")
        .await
        .unwrap_err();
    assert!(gone.is_not_found());
    assert_eq!(h.history().last().unwrap().trigger, "delete");
}

#[tokio::test]
async fn a_floating_ip_is_assigned_and_one_claimed_twice_is_refused() {
    let fip = json!({"k8s.cloudscale.ch/loadbalancer-floating-ips": "[\"5.102.150.123/32\"]"});
    let mut h = with_web(fip.clone()).await;
    let ip = h.cloud.get("floating-ips/5.102.150.123").await.unwrap();
    let lb = &h.list("load-balancers").await[0];
    assert_eq!(ip["load_balancer"]["uuid"], lb["uuid"]);

    h.create_service("other", json!([{"port": 81}]), fip).await;
    h.passes(1).await;
    assert_eq!(h.list("load-balancers").await.len(), 1);
    let record = h.record("other").await;
    assert!(record.error.unwrap().contains("5.102.150.123/32"));
}

#[tokio::test]
async fn a_type_change_away_deletes_the_load_balancer_and_the_finalizer() {
    let mut h = with_web(json!({})).await;
    h.merge_service("web", json!({"spec": {"type": "ClusterIP"}}))
        .await;
    h.passes(1).await;
    assert!(h.list("load-balancers").await.is_empty());
    let service = h.service("web").await;
    assert!(service["metadata"]["finalizers"]
        .as_array()
        .is_none_or(|f| !f.contains(&json!(FINALIZER))));
    let record = h.record("web").await;
    assert_eq!(record.trigger, "delete");
    assert_eq!(record.actions.len(), 1, "{record:?}");
    assert!(record.actions[0].starts_with("delete lb"));
}

#[tokio::test]
async fn restarted_controllers_ensure_again_without_touching_cloud_or_record() {
    let mut h = with_web(json!({})).await;
    let before = h.record("web").await;
    let lbs = h.list("load-balancers").await;
    let version = h.service("web").await["metadata"]["resourceVersion"].clone();
    h.restart_controllers();
    h.passes(1).await;
    assert_eq!(h.history().len(), 1, "one Ensure after the restart");
    assert!(h.history()[0].actions.is_empty());
    assert_eq!(h.list("load-balancers").await, lbs);
    assert_eq!(h.record("web").await, before);
    assert_eq!(
        h.service("web").await["metadata"]["resourceVersion"],
        version
    );
}
