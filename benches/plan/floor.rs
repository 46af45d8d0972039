//! The raw-fetch floor: the URLs of one refresh fetched by a plain concurrent HTTP client —
//! reqwest, a semaphore of the same size as skyplan's limit, the same token — reading every
//! body and parsing none. The collections come first and the pools' member lists after them,
//! as any client must: it learns the pools from the pool list.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::run::SIM_TOKEN;

/// What one refresh reads besides the member lists.
const COLLECTIONS: [&str; 6] = [
    "/load-balancers",
    "/load-balancers/pools",
    "/load-balancers/listeners",
    "/load-balancers/health-monitors",
    "/floating-ips",
    "/subnets",
];

/// Fetches the collections, then every pool's members; returns the wall time and the number
/// of requests.
pub async fn raw_fetch(base_url: &str, pools: &[String], concurrency: usize) -> (Duration, usize) {
    let http = reqwest::Client::new();
    let permits = Arc::new(Semaphore::new(concurrency));
    let start = Instant::now();
    let collections: Vec<String> = COLLECTIONS
        .iter()
        .map(|c| format!("{base_url}{c}"))
        .collect();
    fetch_all(&http, &permits, collections).await;
    let members: Vec<String> = pools
        .iter()
        .map(|pool| format!("{base_url}/load-balancers/pools/{pool}/members"))
        .collect();
    let requests = COLLECTIONS.len() + members.len();
    fetch_all(&http, &permits, members).await;
    (start.elapsed(), requests)
}

async fn fetch_all(http: &reqwest::Client, permits: &Arc<Semaphore>, urls: Vec<String>) {
    let tasks: Vec<_> = urls
        .into_iter()
        .map(|url| {
            let (http, permits) = (http.clone(), permits.clone());
            tokio::spawn(async move {
                let _permit = permits.acquire().await.expect("open semaphore");
                let response = http
                    .get(&url)
                    .bearer_auth(SIM_TOKEN)
                    .send()
                    .await
                    .and_then(reqwest::Response::error_for_status)
                    .unwrap_or_else(|e| panic!("GET {url}: {e}"));
                response.bytes().await.expect("read the body").len()
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("fetch task");
    }
}
