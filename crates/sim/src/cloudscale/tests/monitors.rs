use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{uuid, Harness};

/// What the cloudscale CCM 1.3.0 sends for a Service without health-monitor annotations: the
/// Go SDK's request with an empty HTTP part (`monitor_http` has why the real API takes it).
#[tokio::test]
async fn a_tcp_monitor_with_empty_http_settings_is_created_without_any() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    let pool = h.create_pool(&lb).await;
    let body = json!({"pool": uuid(&pool), "delay_s": 2, "timeout_s": 1, "up_threshold": 2,
        "down_threshold": 3, "type": "tcp", "http": {}});
    let (status, monitor) = h.post("/load-balancers/health-monitors", body).await;
    assert_eq!(status, StatusCode::CREATED, "{monitor}");
    assert_eq!(monitor["http"], Value::Null);
    let path = format!("/load-balancers/health-monitors/{}", uuid(&monitor));
    let (status, _) = h.patch(&path, json!({"delay_s": 5, "http": {}})).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, read) = h.get(&path).await;
    assert_eq!(
        (read["delay_s"].clone(), read["http"].clone()),
        (json!(5), Value::Null)
    );
    let (status, error) = h.patch(&path, json!({"http": {"url_path": "/x"}})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
}

#[tokio::test]
async fn a_host_header_needs_http_1_1() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    let pool = h.create_pool(&lb).await;
    let body = json!({"pool": uuid(&pool), "type": "http", "http": {"version": "1.0", "host": "a.example"}});
    let (status, error) = h.post("/load-balancers/health-monitors", body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        error["detail"].as_str().unwrap().contains("host"),
        "{error}"
    );
}
