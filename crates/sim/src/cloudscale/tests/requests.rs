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
    let mut stats = h.requests_json().await;
    let log = stats.as_object_mut().unwrap().remove("log").unwrap();
    let expected = json!({"total": 4, "by_route": {
        "GET /v1/load-balancers": 2,
        "GET /v1/load-balancers/{uuid}": 1,
        "POST /v1/load-balancers": 1,
    }, "faults": {"429": 0, "5xx": 0, "drop": 0, "after-commit": 0}});
    assert_eq!(stats, expected);
    let log = log.as_array().unwrap();
    let seen: Vec<_> = log
        .iter()
        .map(|r| format!("{} {} {}", r["method"], r["route"], r["status"]))
        .collect();
    let expected_log = [
        r#""POST" "POST /v1/load-balancers" 201"#,
        r#""GET" "GET /v1/load-balancers/{uuid}" 200"#,
        r#""GET" "GET /v1/load-balancers" 200"#,
        r#""GET" "GET /v1/load-balancers" 401"#,
    ];
    assert_eq!(seen, expected_log);
    assert_eq!(
        log[1]["path"],
        format!("/v1/load-balancers/{}", lb["uuid"].as_str().unwrap())
    );
    let times: Vec<(f64, f64)> = log
        .iter()
        .map(|r| {
            (
                r["started_ms"].as_f64().unwrap(),
                r["ended_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    for pair in times.windows(2) {
        let ((start, end), (next_start, _)) = (pair[0], pair[1]);
        assert!(start <= end && end <= next_start, "{times:?}");
    }
    h.client
        .post(h.requests_url("/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(h.sim.request_count(), 0);
    assert_eq!(h.requests_json().await["log"], json!([]));
}
