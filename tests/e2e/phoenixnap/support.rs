//! PhoenixNAP tests' harness: a project whose config binds `load-balancer.api` to the Service
//! `default/api` of the embedded cluster beside an embedded PhoenixNAP, and a reader of the
//! simulated cloud through its API (`sim serve` and HTTP), never the world file (the cluster's:
//! `support::kube_sim`).

use std::process::Child;

use serde_json::Value;

use crate::support::http;
use crate::support::kube_sim::with_cluster;
use crate::support::{serving, sim_serve, Project};

pub const USAGE: &str = "cloud-provider-phoenixnap-auto";

/// The config: the provider, the embedded cluster `prod` and the load balancer `api` with
/// `extra` keys.
pub fn config(extra: &str) -> String {
    format!(
        "[provider.phoenixnap]\nendpoint = \"embedded\"\nlocation = \"PHX\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n\
         [load-balancer.api]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"default/api\"\npublic-network = \"k8s-public\"\n{extra}"
    )
}

/// A project whose embedded cluster has the Service `default/api` (type ClusterIP), its cloud
/// and cluster made by a first run that changes nothing.
pub fn project_with_service() -> Project {
    let project = Project::new();
    project.config(&config(""));
    // Nothing is applied yet: drift says so (exit 2) and changes nothing.
    let drift = project.run(&["drift"]);
    assert_eq!(drift.code, 2, "{drift:?}");
    assert!(drift.stdout.contains("2 not applied"), "{drift:?}");
    with_cluster(&project, |kube| kube.create_service("api", &[80]));
    project
}

/// The embedded cloud's world, served while `read` runs.
pub fn with_cloud<T>(project: &Project, read: impl FnOnce(&Pnap) -> T) -> T {
    let mut sim = Pnap::start(&project.path().join("state/embedded/phoenixnap.json"));
    let result = read(&sim);
    crate::support::terminate(&mut sim.child);
    result
}

/// The plan's entry for `load-balancer.api`.
pub fn api_change(plan: &Value) -> Value {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "load-balancer.api")
        .cloned()
        .unwrap_or_else(|| panic!("no load-balancer.api in {plan:#}"))
}

/// `skyplan sim serve --provider phoenixnap` with a token from its token endpoint.
pub struct Pnap {
    child: Child,
    pub url: String,
    token: String,
}

impl Pnap {
    pub fn start(world: &std::path::Path) -> Pnap {
        let (child, url) = serving(&mut sim_serve("phoenixnap", world));
        let url = url.trim_end_matches('/').to_string();
        let token_url = format!("{url}/auth/realms/BMC/protocol/openid-connect/token");
        let body = http::request("POST", &token_url)
            .basic_auth("skyplan-sim-pnap-client", "skyplan-sim-pnap-secret")
            .form("grant_type=client_credentials")
            .ok()
            .expect("token");
        let token: Value = serde_json::from_str(&body).expect("token JSON");
        Pnap {
            child,
            url,
            token: token["access_token"].as_str().unwrap().to_string(),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let url = format!("{}{path}", self.url);
        let request = http::request(method, &url).bearer(&self.token);
        let request = match body {
            Some(body) => request.json(&body),
            None => request.header("Content-Type", "application/json"),
        };
        let out = request.ok()?;
        Ok(serde_json::from_str(&out).unwrap_or(Value::Null))
    }

    pub fn get(&self, path: &str) -> Value {
        self.call("GET", path, None).expect("GET")
    }

    pub fn send(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        self.call(method, path, body)
    }

    /// Every block with the CCM's usage tag.
    pub fn blocks(&self) -> Vec<Value> {
        self.get(&format!("/ips/v1/ip-blocks?tag=usage.{USAGE}"))
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    pub fn network(&self, name: &str) -> Value {
        self.get("/networks/v1/public-networks")
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no public network {name}"))
    }
}

impl Drop for Pnap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A block's tags as `name=value`, sorted.
pub fn tags(block: &Value) -> Vec<String> {
    let mut tags: Vec<String> = block["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{}={}",
                t["name"].as_str().unwrap(),
                t["value"].as_str().unwrap_or("")
            )
        })
        .collect();
    tags.sort();
    tags
}

/// The Service's address for a block: base + 2.
pub fn third_address(cidr: &str) -> String {
    let net: ipnet::Ipv4Net = cidr.parse().expect("a CIDR");
    std::net::Ipv4Addr::from(u32::from(net.network()) + 2).to_string()
}
