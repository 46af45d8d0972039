use reqwest::StatusCode;
use serde_json::json;

use super::{uuid, Harness};

/// A client behind a port-forward reaches the simulator as `localhost:18080`: every href it
/// gets back, nested references included, must lead there, not to the listen address.
#[tokio::test]
async fn hrefs_follow_the_host_and_scheme_the_client_used() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    let pool = h.create_pool(&lb).await;
    let path = format!("/load-balancers/pools/{}", uuid(&pool));
    let forwarded = h.client.get(h.url(&path)).header("host", "localhost:18080");
    let (status, seen) = h.send(forwarded).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(seen["href"], format!("http://localhost:18080/v1{path}"));
    let lb_href = format!("http://localhost:18080/v1/load-balancers/{}", uuid(&lb));
    assert_eq!(seen["load_balancer"]["href"], lb_href);
    let proxied = h
        .client
        .get(h.url("/load-balancers"))
        .header("x-forwarded-host", "api.example.test")
        .header("x-forwarded-proto", "https");
    let (_, listed) = h.send(proxied).await;
    let https = format!("https://api.example.test/v1/load-balancers/{}", uuid(&lb));
    assert_eq!(listed[0]["href"], https);
    assert_eq!(lb["href"], h.url(&format!("/load-balancers/{}", uuid(&lb))));
}
