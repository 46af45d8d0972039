//! Fault injection as a client sees it, over real HTTP with reqwest.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{Harness, DEFAULT_SUBNET_UUID, DEFAULT_TOKEN};

/// What came back: a status, or no answer at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Status(StatusCode),
    ConnectionError,
}

async fn start(spec: &str) -> Harness {
    Harness::start_with_faults(spec.parse().unwrap()).await
}

async fn outcome(request: reqwest::RequestBuilder) -> Outcome {
    match request.bearer_auth(DEFAULT_TOKEN).send().await {
        Ok(response) => Outcome::Status(response.status()),
        Err(error) => {
            assert!(error.status().is_none(), "{error}");
            assert!(error.is_request() || error.is_connect(), "{error:?}");
            Outcome::ConnectionError
        }
    }
}

fn lb_body(name: &str) -> Value {
    json!({"name": name, "flavor": "lb-standard", "vip_addresses": [{"subnet": DEFAULT_SUBNET_UUID}]})
}

async fn create_lb(h: &Harness, name: &str) -> Outcome {
    outcome(h.client.post(h.url("/load-balancers")).json(&lb_body(name))).await
}

/// The load balancers in the world file, read after shutdown (every API request may be faulted).
async fn lbs_after_shutdown(h: Harness) -> usize {
    h.sim.shutdown().await.unwrap();
    let world: Value = serde_json::from_str(&std::fs::read_to_string(&h.world).unwrap()).unwrap();
    world["load_balancers"].as_array().unwrap().len()
}

#[tokio::test]
async fn throttled_requests_get_429_with_retry_after_and_are_not_performed() {
    let h = start("429=1").await;
    let response = h
        .client
        .post(h.url("/load-balancers"))
        .bearer_auth(DEFAULT_TOKEN)
        .json(&lb_body("web"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = response.json().await.unwrap();
    assert!(
        body["detail"].as_str().unwrap().contains("throttled"),
        "{body}"
    );
    let counts = h.sim.requests();
    assert_eq!((counts.total, counts.faults.throttled), (1, 1));
    assert_eq!(lbs_after_shutdown(h).await, 0);
}

#[tokio::test]
async fn server_errors_get_5xx_and_are_not_performed() {
    let h = start("5xx=1").await;
    for name in ["a", "b", "c", "d", "e", "f"] {
        let Outcome::Status(status) = create_lb(&h, name).await else {
            panic!("no answer");
        };
        assert!(status.is_server_error(), "{status}");
    }
    assert_eq!(h.sim.requests().faults.server_error, 6);
    assert_eq!(lbs_after_shutdown(h).await, 0);
}

#[tokio::test]
async fn dropped_requests_get_no_answer_and_are_not_performed() {
    let h = start("drop=1").await;
    assert_eq!(create_lb(&h, "web").await, Outcome::ConnectionError);
    let list = h.client.get(h.url("/load-balancers"));
    assert_eq!(outcome(list).await, Outcome::ConnectionError);
    assert_eq!(h.sim.requests().faults.dropped, 2);
    assert_eq!(lbs_after_shutdown(h).await, 0);
}

#[tokio::test]
async fn failures_after_commit_hide_a_change_that_happened() {
    let h = start("after-commit=1,seed=5").await;
    let mut outcomes = Vec::new();
    for i in 0..8 {
        outcomes.push(create_lb(&h, &format!("lb-{i}")).await);
    }
    let internal_error = Outcome::Status(StatusCode::INTERNAL_SERVER_ERROR);
    assert!(outcomes.contains(&Outcome::ConnectionError), "{outcomes:?}");
    assert!(outcomes.contains(&internal_error), "{outcomes:?}");
    assert!(outcomes
        .iter()
        .all(|o| [Outcome::ConnectionError, internal_error].contains(o)));
    // Reads have nothing to commit, so they are answered: every create happened.
    let (status, lbs) = h.get("/load-balancers").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(lbs.as_array().unwrap().len(), 8);
    // A refused request committed nothing, so it is answered as it is.
    let refused = h.client.post(h.url("/load-balancers")).json(&json!({}));
    assert_eq!(
        outcome(refused).await,
        Outcome::Status(StatusCode::BAD_REQUEST)
    );
    assert_eq!(h.sim.requests().faults.after_commit, 8);
}

#[tokio::test]
async fn seeded_rates_are_roughly_honoured_and_counted() {
    let h = start("429=0.2,5xx=0.1,drop=0.1,seed=42").await;
    let n: u32 = 300;
    let (mut throttled, mut server_error, mut dropped, mut ok) = (0, 0, 0, 0);
    for _ in 0..n {
        match outcome(h.client.get(h.url("/load-balancers"))).await {
            Outcome::Status(StatusCode::TOO_MANY_REQUESTS) => throttled += 1,
            Outcome::Status(status) if status.is_server_error() => server_error += 1,
            Outcome::Status(StatusCode::OK) => ok += 1,
            Outcome::ConnectionError => dropped += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    let share = |count: u64| count as f64 / f64::from(n);
    let near = |count: u64, rate: f64| (share(count) - rate).abs() < 0.07;
    assert!(near(throttled, 0.2), "429: {throttled}");
    assert!(near(server_error, 0.1), "5xx: {server_error}");
    assert!(near(dropped, 0.1), "drop: {dropped}");
    assert!(near(ok, 0.6), "ok: {ok}");
    let counts = h.sim.requests();
    assert_eq!(counts.total, u64::from(n));
    let faults = (counts.faults.throttled, counts.faults.server_error);
    assert_eq!(faults, (throttled, server_error));
    assert_eq!(
        (counts.faults.dropped, counts.faults.after_commit),
        (dropped, 0)
    );
}

#[tokio::test]
async fn latency_delays_api_requests() {
    let h = start("latency=80-100ms").await;
    let started = Instant::now();
    let (status, _) = h.get("/load-balancers").await;
    assert_eq!(status, StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(80));
}

#[tokio::test]
async fn sim_routes_are_never_faulted() {
    let h = start("drop=1").await;
    create_lb(&h, "web").await;
    for _ in 0..20 {
        let faults = &h.requests_json().await["faults"];
        assert_eq!(
            *faults,
            json!({"429": 0, "5xx": 0, "drop": 1, "after-commit": 0})
        );
    }
    let reset = h
        .client
        .post(h.requests_url("/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);
    assert_eq!(h.sim.requests(), Default::default());
}
