use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use super::{uuid, Harness};

#[tokio::test]
async fn the_world_survives_a_restart() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({"k": "v"})).await;
    h.create_pool(&lb).await;
    let h = h.restart().await;
    let (status, again) = h.get(&format!("/load-balancers/{}", uuid(&lb))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["tags"], json!({"k": "v"}));
    assert_eq!(again["created_at"], lb["created_at"]);
    assert_eq!(
        again["href"],
        h.url(&format!("/load-balancers/{}", uuid(&lb)))
    );
    assert_eq!(
        h.get("/load-balancers/pools")
            .await
            .1
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn changes_reach_the_file_while_serving() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    let mut text = String::new();
    for _ in 0..50 {
        text = std::fs::read_to_string(&h.world).unwrap();
        if text.contains(uuid(&lb)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the world file never got the new load balancer:\n{text}");
}
