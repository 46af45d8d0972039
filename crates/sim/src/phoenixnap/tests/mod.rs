//! Tests over real HTTP with reqwest, each against its own simulator on a free port with its
//! own world file.

mod auth;
mod blocks;
mod networks;
mod servers;
mod tags;

use std::path::PathBuf;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tempfile::TempDir;

use super::{
    spawn, Faults, PnapSimHandle, PnapSimOptions, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET,
};

const TRANSITION: Duration = Duration::from_millis(150);
const TOKEN_PATH: &str = "/auth/realms/BMC/protocol/openid-connect/token";

struct Harness {
    sim: PnapSimHandle,
    client: reqwest::Client,
    token: String,
    world: PathBuf,
    dir: TempDir,
}

impl Harness {
    async fn start() -> Self {
        Self::start_with(None, Faults::default()).await
    }

    /// `world`: the world file's text, or `None` for a fresh account.
    async fn start_with(world: Option<&str>, faults: Faults) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        if let Some(text) = world {
            std::fs::write(&path, text).unwrap();
        }
        Self::start_on(dir, path, faults).await
    }

    async fn start_on(dir: TempDir, world: PathBuf, faults: Faults) -> Self {
        let options = PnapSimOptions {
            transition: TRANSITION,
            faults,
            ..PnapSimOptions::default()
        };
        let sim = spawn(world.clone(), "127.0.0.1:0".parse().unwrap(), options)
            .await
            .unwrap();
        let client = reqwest::Client::new();
        let mut harness = Harness {
            sim,
            client,
            token: String::new(),
            world,
            dir,
        };
        harness.token = harness.token_for(None).await;
        harness
    }

    /// Shuts the simulator down and starts a new one on the same world file.
    async fn restart(self) -> Self {
        self.sim.shutdown().await.unwrap();
        Self::start_on(self.dir, self.world, Faults::default()).await
    }

    /// A token for the default client by form fields, with `scope` if given.
    async fn token_for(&self, scope: Option<&str>) -> String {
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("client_id", DEFAULT_CLIENT_ID),
            ("client_secret", DEFAULT_CLIENT_SECRET),
        ];
        form.extend(scope.map(|s| ("scope", s)));
        let (status, body) = self
            .token_request(self.client.post(self.url(TOKEN_PATH)).form(&form))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["access_token"].as_str().unwrap().to_owned()
    }

    async fn token_request(&self, request: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let response = request.send().await.unwrap();
        (response.status(), response.json().await.unwrap())
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sim.base_url())
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        self.call_as(&self.token, method, path, body).await
    }

    async fn call_as(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap()
        };
        (status, value)
    }

    async fn get(&self, path: &str) -> Value {
        let (status, body) = self.call(Method::GET, path, None).await;
        assert_eq!(status, StatusCode::OK, "GET {path}: {body}");
        body
    }

    /// Creates the tag names (201 each).
    async fn tag_names(&self, names: &[&str]) {
        for name in names {
            let body = json!({ "name": name, "isBillingTag": false });
            let (status, answer) = self
                .call(Method::POST, "/tag-manager/v1/tags", Some(body))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
        }
    }

    /// A /29 in `location` with the CCM's four tags for `service`; its JSON.
    async fn ccm_block(&self, location: &str, service: &str) -> Value {
        let body = json!({
            "location": location,
            "cidrBlockSize": "/29",
            "tags": [
                {"name": "usage", "value": "cloud-provider-phoenixnap-auto"},
                {"name": "cluster", "value": "uid-1"},
                {"name": "serviceNamespace", "value": "default"},
                {"name": "serviceName", "value": service},
            ],
        });
        let (status, block) = self
            .call(Method::POST, "/ips/v1/ip-blocks", Some(body))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{block}");
        block
    }

    /// The id of the public network named `name`.
    async fn network_id(&self, name: &str) -> String {
        let networks = self.get("/networks/v1/public-networks").await;
        let network = networks
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap();
        network["id"].as_str().unwrap().to_owned()
    }

    async fn attach(&self, network: &str, block: &str) -> (StatusCode, Value) {
        let path = format!("/networks/v1/public-networks/{network}/ip-blocks");
        self.call(Method::POST, &path, Some(json!({ "id": block })))
            .await
    }

    async fn detach(&self, network: &str, block: &str) -> (StatusCode, Value) {
        let path = format!("/networks/v1/public-networks/{network}/ip-blocks/{block}");
        self.call(Method::DELETE, &path, None).await
    }

    async fn block(&self, id: &str) -> Value {
        self.get(&format!("/ips/v1/ip-blocks/{id}")).await
    }

    /// Waits out a transition (with a margin for a slow machine).
    async fn settle(&self) {
        tokio::time::sleep(TRANSITION * 2).await;
    }
}

const USAGE_TAGS: [&str; 5] = [
    "usage",
    "cluster",
    "serviceNamespace",
    "serviceName",
    "delete",
];
