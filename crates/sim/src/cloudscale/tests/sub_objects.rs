use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{uuid, Harness};
use crate::cloudscale::DEFAULT_SUBNET_UUID;

/// A load balancer with one pool, a member, a monitor and a listener, all settled.
async fn full_lb(h: &Harness) -> (Value, Value) {
    let lb = h.create_lb("web", json!({})).await;
    let pool = h.create_pool(&lb).await;
    let member = json!({"name": "10.0.0.50:30080", "protocol_port": 30080, "address": "10.0.0.50", "subnet": DEFAULT_SUBNET_UUID});
    let (status, _) = h
        .post(
            &format!("/load-balancers/pools/{}/members", uuid(&pool)),
            member,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let monitor = json!({"pool": pool["uuid"], "type": "http", "http": {"url_path": "/livez"}});
    assert_eq!(
        h.post("/load-balancers/health-monitors", monitor).await.0,
        StatusCode::CREATED
    );
    let listener =
        json!({"name": "tcp/80", "pool": pool["uuid"], "protocol": "tcp", "protocol_port": 80});
    assert_eq!(
        h.post("/load-balancers/listeners", listener).await.0,
        StatusCode::CREATED
    );
    h.wait_running(&lb).await;
    (lb, pool)
}

#[tokio::test]
async fn sub_objects_render_references_and_defaults() {
    let h = Harness::start().await;
    let (lb, pool) = full_lb(&h).await;
    h.wait_members(uuid(&pool), "up").await;
    assert_eq!(
        pool["load_balancer"],
        json!({"href": lb["href"], "uuid": lb["uuid"], "name": "web"})
    );
    let (_, members) = h
        .get(&format!("/load-balancers/pools/{}/members", uuid(&pool)))
        .await;
    let member = &members[0];
    assert_eq!(member["monitor_port"], 30080);
    assert_eq!(member["enabled"], true);
    assert_eq!(member["monitor_status"], "up");
    assert_eq!(member["subnet"]["cidr"], "10.0.0.0/24");
    assert_eq!(member["load_balancer"]["uuid"], lb["uuid"]);
    let (_, monitors) = h.get("/load-balancers/health-monitors").await;
    let expected_http = json!({"expected_codes": ["200"], "method": "GET", "url_path": "/livez", "version": "1.1", "host": null});
    assert_eq!(monitors[0]["http"], expected_http);
    assert_eq!(monitors[0]["delay_s"], 2);
    let (_, listeners) = h.get("/load-balancers/listeners").await;
    assert_eq!(listeners[0]["pool"]["uuid"], pool["uuid"]);
    assert_eq!(listeners[0]["timeout_client_data_ms"], 50000);
    assert_eq!(listeners[0]["timeout_member_connect_ms"], 5000);
}

#[tokio::test]
async fn every_sub_object_change_puts_the_load_balancer_back_to_changing() {
    let h = Harness::start().await;
    let (lb, pool) = full_lb(&h).await;
    let lb_path = format!("/load-balancers/{}", uuid(&lb));
    assert_eq!(h.get(&lb_path).await.1["status"], "running");
    let (status, _) = h
        .patch(
            &format!("/load-balancers/pools/{}", uuid(&pool)),
            json!({"name": "tcp/http"}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(h.get(&lb_path).await.1["status"], "changing");
    h.wait_running(&lb).await;
}

#[tokio::test]
async fn enum_values_references_and_one_monitor_per_pool_are_validated() {
    let h = Harness::start().await;
    let (lb, pool) = full_lb(&h).await;
    let refused = [
        (
            "/load-balancers/pools",
            json!({"name": "x", "load_balancer": lb["uuid"], "algorithm": "random", "protocol": "tcp"}),
        ),
        (
            "/load-balancers/pools",
            json!({"name": "x", "load_balancer": lb["uuid"], "algorithm": "source_ip", "protocol": "http"}),
        ),
        (
            "/load-balancers/pools",
            json!({"name": "x", "load_balancer": pool["uuid"], "algorithm": "source_ip", "protocol": "tcp"}),
        ),
        (
            "/load-balancers/health-monitors",
            json!({"pool": pool["uuid"], "type": "tcp"}),
        ),
        (
            "/load-balancers/health-monitors",
            json!({"pool": lb["uuid"], "type": "ping"}),
        ),
        (
            "/load-balancers/listeners",
            json!({"name": "x", "pool": pool["uuid"], "protocol": "http", "protocol_port": 80}),
        ),
        (
            "/load-balancers/listeners",
            json!({"name": "x", "pool": pool["uuid"], "protocol_port": 0}),
        ),
    ];
    for (path, body) in refused {
        let (status, error) = h.post(path, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {body}: {error}");
    }
    let second_pool = h.create_pool(&lb).await;
    let tls = json!({"pool": second_pool["uuid"], "type": "tls-hello", "http": {"version": "1.0"}});
    assert_eq!(
        h.post("/load-balancers/health-monitors", tls).await.0,
        StatusCode::BAD_REQUEST
    );
    let tls = json!({"pool": second_pool["uuid"], "type": "tls-hello"});
    let (status, monitor) = h.post("/load-balancers/health-monitors", tls).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(monitor["http"], Value::Null);
}

#[tokio::test]
async fn create_only_fields_of_sub_objects_are_refused_in_a_patch() {
    let h = Harness::start().await;
    let (_, pool) = full_lb(&h).await;
    let pool_path = format!("/load-balancers/pools/{}", uuid(&pool));
    let (_, members) = h.get(&format!("{pool_path}/members")).await;
    let (_, monitors) = h.get("/load-balancers/health-monitors").await;
    let (_, listeners) = h.get("/load-balancers/listeners").await;
    let member_path = format!("{pool_path}/members/{}", uuid(&members[0]));
    let monitor_path = format!("/load-balancers/health-monitors/{}", uuid(&monitors[0]));
    let listener_path = format!("/load-balancers/listeners/{}", uuid(&listeners[0]));
    let refused = [
        (pool_path.clone(), json!({"algorithm": "source_ip"})),
        (member_path.clone(), json!({"protocol_port": 1})),
        (member_path.clone(), json!({"address": "10.0.0.9"})),
        (monitor_path.clone(), json!({"type": "tcp"})),
        (monitor_path.clone(), json!({"http": {"version": "1.0"}})),
        (listener_path.clone(), json!({"pool": null})),
    ];
    for (path, body) in refused {
        let (status, error) = h.patch(&path, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {body}");
        let field = body.as_object().unwrap().keys().next().unwrap().clone();
        assert!(
            error["detail"].as_str().unwrap().contains(&field),
            "{error}"
        );
    }
    let allowed = [
        (member_path, json!({"enabled": false})),
        (
            monitor_path.clone(),
            json!({"delay_s": 5, "http": {"url_path": "/healthz", "host": "example.com"}}),
        ),
        (
            listener_path,
            json!({"allowed_cidrs": ["10.0.0.0/8"], "timeout_client_data_ms": 1000}),
        ),
    ];
    for (path, body) in allowed {
        assert_eq!(
            h.patch(&path, body).await.0,
            StatusCode::NO_CONTENT,
            "{path}"
        );
    }
    let (_, monitor) = h.get(&monitor_path).await;
    assert_eq!(monitor["http"]["url_path"], "/healthz");
    assert_eq!(monitor["http"]["version"], "1.1");
}

#[tokio::test]
async fn deleting_a_pool_takes_its_members_monitor_and_listeners() {
    let h = Harness::start().await;
    let (lb, pool) = full_lb(&h).await;
    let unbound = json!({"name": "tcp/81", "load_balancer": uuid(&lb), "protocol_port": 81});
    assert_eq!(
        h.post("/load-balancers/listeners", unbound).await.0,
        StatusCode::CREATED
    );
    let pool_path = format!("/load-balancers/pools/{}", uuid(&pool));
    assert_eq!(h.delete(&pool_path).await, StatusCode::NO_CONTENT);
    assert_eq!(h.get(&pool_path).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        h.get(&format!("{pool_path}/members")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(h.get("/load-balancers/health-monitors").await.1, json!([]));
    let (_, listeners) = h.get("/load-balancers/listeners").await;
    let names: Vec<&Value> = listeners
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["name"])
        .collect();
    assert_eq!(
        names,
        [&json!("tcp/81")],
        "only the listener without a pool stays"
    );
}

/// The CCM's pool recreation: members and pool deleted, then a new pool and its listener on
/// the same port.
#[tokio::test]
async fn a_recreated_pool_gets_its_listener_port_back() {
    let h = Harness::start().await;
    let (lb, pool) = full_lb(&h).await;
    let again = json!({"name": "tcp/80", "load_balancer": uuid(&lb), "protocol": "tcp", "protocol_port": 80});
    let (status, error) = h.post("/load-balancers/listeners", again.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "port 80 is taken: {error}");
    assert!(
        error["detail"].as_str().unwrap().contains("protocol_port"),
        "{error}"
    );
    let udp = json!({"name": "udp/80", "load_balancer": uuid(&lb), "protocol": "udp", "protocol_port": 80});
    assert_eq!(
        h.post("/load-balancers/listeners", udp).await.0,
        StatusCode::CREATED
    );
    h.delete(&format!("/load-balancers/pools/{}", uuid(&pool)))
        .await;
    let new_pool = h.create_pool(&lb).await;
    let mut again = again;
    again["pool"] = new_pool["uuid"].clone();
    let (status, listener) = h.post("/load-balancers/listeners", again).await;
    assert_eq!(status, StatusCode::CREATED, "{listener}");
    let other = h.create_lb("api", json!({})).await;
    let elsewhere = json!({"name": "tcp/80", "load_balancer": uuid(&other), "protocol_port": 80});
    assert_eq!(
        h.post("/load-balancers/listeners", elsewhere).await.0,
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn deleting_a_load_balancer_takes_everything_under_it() {
    let h = Harness::start().await;
    let (lb, _) = full_lb(&h).await;
    let (other, _) = full_lb(&h).await;
    assert_eq!(
        h.delete(&format!("/load-balancers/{}", uuid(&lb))).await,
        StatusCode::NO_CONTENT
    );
    for path in [
        "/load-balancers/pools",
        "/load-balancers/listeners",
        "/load-balancers/health-monitors",
    ] {
        let (_, list) = h.get(path).await;
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 1, "{path}");
        assert_eq!(list[0]["load_balancer"]["uuid"], other["uuid"], "{path}");
    }
}

#[tokio::test]
async fn a_member_is_found_only_under_its_own_pool() {
    let h = Harness::start().await;
    let (lb, pool) = full_lb(&h).await;
    let other = h.create_pool(&lb).await;
    let (_, members) = h
        .get(&format!("/load-balancers/pools/{}/members", uuid(&pool)))
        .await;
    let wrong = format!(
        "/load-balancers/pools/{}/members/{}",
        uuid(&other),
        uuid(&members[0])
    );
    assert_eq!(h.get(&wrong).await.0, StatusCode::NOT_FOUND);
    let (_, members) = h
        .get(&format!("/load-balancers/pools/{}/members", uuid(&other)))
        .await;
    assert_eq!(members, json!([]));
}

#[tokio::test]
async fn the_recreate_on_patch_fault_recreates_the_pool_of_a_patched_listener() {
    let h = Harness::start_with_faults("recreate-on-patch=pool".parse().unwrap()).await;
    let (lb, pool) = full_lb(&h).await;
    let (_, listeners) = h.get("/load-balancers/listeners").await;
    let listener = &listeners[0];
    let (_, monitors) = h.get("/load-balancers/health-monitors").await;
    let members_path = |pool: &Value| format!("/load-balancers/pools/{}/members", uuid(pool));
    let (_, members) = h.get(&members_path(&pool)).await;
    let path = format!("/load-balancers/listeners/{}", uuid(listener));
    let (status, _) = h
        .patch(&path, json!({"allowed_cidrs": ["10.1.0.0/16"]}))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "the patch itself succeeds");
    h.wait_running(&lb).await;
    let (_, pools) = h.get("/load-balancers/pools").await;
    let recreated = &pools[0];
    assert_ne!(recreated["uuid"], pool["uuid"], "a new pool");
    assert_eq!(recreated["name"], pool["name"]);
    let (_, patched) = h.get(&path).await;
    assert_eq!(patched["uuid"], listener["uuid"], "the listener stays");
    assert_eq!(patched["pool"]["uuid"], recreated["uuid"]);
    assert_eq!(patched["allowed_cidrs"], json!(["10.1.0.0/16"]));
    let (_, monitors_after) = h.get("/load-balancers/health-monitors").await;
    assert_ne!(monitors_after[0]["uuid"], monitors[0]["uuid"]);
    assert_eq!(monitors_after[0]["pool"]["uuid"], recreated["uuid"]);
    let (_, members_after) = h.get(&members_path(recreated)).await;
    assert_eq!(members_after[0]["name"], members[0]["name"]);
    assert_ne!(members_after[0]["uuid"], members[0]["uuid"]);
}
