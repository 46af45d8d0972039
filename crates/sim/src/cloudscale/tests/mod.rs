//! Tests over real HTTP with reqwest, each against its own simulator on a free port with its
//! own world file.

mod faults;
mod floating_ips;
mod go_sdk_schema;
mod go_structs;
mod health;
mod hrefs;
mod load_balancers;
mod monitors;
mod persistence;
mod requests;
mod server_groups;
mod servers;
mod sub_objects;

use std::path::PathBuf;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tempfile::TempDir;

use super::{spawn, Faults, SimHandle, SimOptions, DEFAULT_SUBNET_UUID, DEFAULT_TOKEN};

const SETTLE: Duration = Duration::from_millis(30);

struct Harness {
    sim: SimHandle,
    client: reqwest::Client,
    world: PathBuf,
    dir: TempDir,
}

impl Harness {
    async fn start() -> Self {
        Self::start_with_faults(Faults::default()).await
    }

    async fn start_with_faults(faults: Faults) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let world = dir.path().join("world.json");
        Self::start_on(dir, world, faults).await
    }

    async fn start_on(dir: TempDir, world: PathBuf, faults: Faults) -> Self {
        let options = SimOptions {
            token: None,
            settle: SETTLE,
            faults,
        };
        let sim = spawn(world.clone(), "127.0.0.1:0".parse().unwrap(), options)
            .await
            .unwrap();
        Harness {
            sim,
            client: reqwest::Client::new(),
            world,
            dir,
        }
    }

    /// Shuts the simulator down and starts a new one on the same world file.
    async fn restart(self) -> Self {
        self.sim.shutdown().await.unwrap();
        Self::start_on(self.dir, self.world, Faults::default()).await
    }

    /// `/_sim/requests`, or `/_sim/requests/reset` with `/reset`.
    fn requests_url(&self, suffix: &str) -> String {
        format!("http://{}/_sim/requests{suffix}", self.sim.addr())
    }

    /// The request counters as served over HTTP.
    async fn requests_json(&self) -> Value {
        let response = self.client.get(self.requests_url("")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sim.base_url())
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let response = request.bearer_auth(DEFAULT_TOKEN).send().await.unwrap();
        let status = response.status();
        let bytes = response.bytes().await.unwrap();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (status, body)
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.client.get(self.url(path))).await
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.client.post(self.url(path)).json(&body))
            .await
    }

    async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.client.patch(self.url(path)).json(&body))
            .await
    }

    async fn delete(&self, path: &str) -> StatusCode {
        self.send(self.client.delete(self.url(path))).await.0
    }

    /// Creates a load balancer with a VIP in the default subnet and returns it.
    async fn create_lb(&self, name: &str, tags: Value) -> Value {
        let body = json!({
            "name": name, "flavor": "lb-standard", "zone": "lpg1", "tags": tags,
            "vip_addresses": [{"subnet": DEFAULT_SUBNET_UUID}],
        });
        let (status, lb) = self.post("/load-balancers", body).await;
        assert_eq!(status, StatusCode::CREATED, "{lb}");
        lb
    }

    async fn create_pool(&self, lb: &Value) -> Value {
        let body = json!({"name": "tcp", "load_balancer": lb["uuid"], "algorithm": "round_robin", "protocol": "tcp"});
        let (status, pool) = self.post("/load-balancers/pools", body).await;
        assert_eq!(status, StatusCode::CREATED, "{pool}");
        pool
    }

    async fn wait_running(&self, lb: &Value) {
        let path = format!("/load-balancers/{}", lb["uuid"].as_str().unwrap());
        for _ in 0..100 {
            if self.get(&path).await.1["status"] == "running" {
                return;
            }
            tokio::time::sleep(SETTLE / 3).await;
        }
        panic!("load balancer never became running");
    }

    /// The `monitor_status` of every member of `pool`, in creation order.
    async fn member_statuses(&self, pool: &str) -> Vec<String> {
        let (status, members) = self
            .get(&format!("/load-balancers/pools/{pool}/members"))
            .await;
        assert_eq!(status, StatusCode::OK, "{members}");
        let members = members.as_array().unwrap();
        members
            .iter()
            .map(|m| m["monitor_status"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Waits until every member of `pool` reports `expected`; returns the statuses seen.
    async fn wait_members(&self, pool: &str, expected: &str) -> Vec<Vec<String>> {
        let mut seen = Vec::new();
        for _ in 0..100 {
            let statuses = self.member_statuses(pool).await;
            let done = !statuses.is_empty() && statuses.iter().all(|s| s == expected);
            if seen.last() != Some(&statuses) {
                seen.push(statuses);
            }
            if done {
                return seen;
            }
            tokio::time::sleep(SETTLE / 3).await;
        }
        panic!("the members of pool {pool} never were all {expected}: {seen:?}");
    }
}

fn uuid(object: &Value) -> &str {
    object["uuid"].as_str().unwrap()
}
