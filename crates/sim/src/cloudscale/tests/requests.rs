use serde_json::json;

use super::Harness;

#[tokio::test]
async fn requests_are_counted_by_route_template_in_process_and_over_http() {
    let h = Harness::start().await;
    let lb = h.create_lb("web", json!({})).await;
    h.get(&format!("/load-balancers/{}", lb["uuid"].as_str().unwrap()))
        .await;
    h.get("/load-balancers").await;
    h.client.get(h.url("/load-balancers")).send().await.unwrap(); // refused, still counted
    assert_eq!(h.sim.request_count(), 4);
    let stats = h.requests_json().await;
    let expected = json!({"total": 4, "by_route": {
        "GET /v1/load-balancers": 2,
        "GET /v1/load-balancers/{uuid}": 1,
        "POST /v1/load-balancers": 1,
    }, "faults": {"429": 0, "5xx": 0, "drop": 0, "after-commit": 0}});
    assert_eq!(stats, expected);
    h.client
        .post(h.requests_url("/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(h.sim.request_count(), 0);
}
