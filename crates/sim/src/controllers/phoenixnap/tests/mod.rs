//! Integration tests: the PhoenixNAP simulator and a Kubernetes simulator in-process (nodes
//! backed by the account's servers `node-1`..`node-3`), the CCM driven pass by pass and its
//! reaper tick by tick, the results read back over both APIs.

mod load_balancers;
mod nodes;
mod release;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;

use super::blocks::{IpBlock, TagAssignment};
use super::client::{Credentials, PnapApi};
use super::{
    cloud_backed_nodes, PnapController, PnapControllerOptions, PnapEndpoint, LAST_ERROR_ANNOTATION,
};
use crate::controllers::http::{Kube, MERGE_PATCH};
use crate::controllers::{ReconcileRecord, RECORD_ANNOTATION};
use crate::kubernetes::{self, KubeSimHandle, KubeSimOptions};
use crate::phoenixnap::{
    self, PnapSimHandle, PnapSimOptions, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET,
    DEFAULT_PUBLIC_NETWORK_ID,
};

const PASS: Duration = Duration::from_millis(20);
/// How long the simulated cloud takes to attach or detach a block.
const TRANSITION: Duration = Duration::from_millis(60);
const SERVICE: &str = "/api/v1/namespaces/default/services/web";

struct Harness {
    kube: Kube,
    api: PnapApi,
    options: PnapControllerOptions,
    controller: PnapController,
    history: Arc<Mutex<Vec<ReconcileRecord>>>,
    cloud_sim: PnapSimHandle,
    _kube_sim: KubeSimHandle,
    _dir: TempDir,
}

fn endpoint(base_url: &str, network: &str) -> PnapEndpoint {
    PnapEndpoint {
        base_url: base_url.to_owned(),
        client_id: DEFAULT_CLIENT_ID.into(),
        client_secret: DEFAULT_CLIENT_SECRET.into(),
        location: "PHX".into(),
        load_balancer: format!("kube-vip://{network}"),
    }
}

impl Harness {
    async fn start() -> Harness {
        Self::with_faults("").await
    }

    /// With faults injected by the simulated cloud (`tags-put-fail=1`).
    async fn with_faults(faults: &str) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let cloud_sim = phoenixnap::spawn(
            dir.path().join("pnap.json"),
            "127.0.0.1:0".parse().unwrap(),
            PnapSimOptions {
                transition: TRANSITION,
                faults: faults.parse().unwrap(),
                ..PnapSimOptions::default()
            },
        )
        .await
        .unwrap();
        let pnap = endpoint(&cloud_sim.base_url(), DEFAULT_PUBLIC_NETWORK_ID);
        let fresh_nodes = cloud_backed_nodes(&pnap).await.unwrap();
        let kube_sim = kubernetes::spawn(KubeSimOptions {
            fresh_nodes,
            ..KubeSimOptions::new(dir.path().join("kube.json"))
        })
        .await
        .unwrap();
        let options = PnapControllerOptions {
            kube: Kube::new(kube_sim.url()),
            pnap: pnap.clone(),
            pass: PASS,
            reaper: PASS * 10,
        };
        let history = Arc::new(Mutex::new(Vec::new()));
        let credentials = Credentials {
            client_id: pnap.client_id.clone(),
            client_secret: pnap.client_secret.clone(),
        };
        Harness {
            kube: Kube::new(kube_sim.url()),
            api: PnapApi::new(&pnap.base_url, &credentials),
            controller: PnapController::new(&options, history.clone()).unwrap(),
            options,
            history,
            cloud_sim,
            _kube_sim: kube_sim,
            _dir: dir,
        }
    }

    /// A new CCM on the same simulators with another `PNAP_LOAD_BALANCER`.
    fn restart_with_load_balancer(&mut self, setting: &str) {
        self.options.pnap.load_balancer = setting.to_owned();
        self.history = Arc::new(Mutex::new(Vec::new()));
        self.controller = PnapController::new(&self.options, self.history.clone()).unwrap();
    }

    async fn passes(&mut self, count: usize) {
        for _ in 0..count {
            self.controller.pass().await;
        }
    }

    /// Passes until `done` holds for the Service (or fails after a generous limit), letting
    /// the cloud's transitions and the backoff run out.
    async fn passes_until(&mut self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..200 {
            self.controller.pass().await;
            let service = self.service().await;
            if done(&service) {
                return service;
            }
            tokio::time::sleep(PASS).await;
        }
        panic!("never {what}: {}", self.service().await);
    }

    async fn create_service(&self, spec: Value) -> Value {
        let mut body = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"type": "LoadBalancer", "selector": {"app": "web"},
                     "ports": [{"port": 80, "targetPort": 8080}]},
        });
        for (key, value) in spec.as_object().unwrap() {
            body["spec"][key] = value.clone();
        }
        self.kube
            .post("/api/v1/namespaces/default/services", &body)
            .await
            .unwrap()
    }

    async fn merge_service(&self, patch: Value) {
        self.kube.patch(SERVICE, MERGE_PATCH, &patch).await.unwrap();
    }

    async fn service(&self) -> Value {
        self.kube.get(SERVICE).await.unwrap()
    }

    async fn record(&self) -> ReconcileRecord {
        let service = self.service().await;
        let text = service["metadata"]["annotations"][RECORD_ANNOTATION]
            .as_str()
            .unwrap_or_else(|| panic!("no record on {service}"));
        serde_json::from_str(text).unwrap()
    }

    async fn last_error(&self) -> Option<String> {
        let service = self.service().await;
        service["metadata"]["annotations"][LAST_ERROR_ANNOTATION]
            .as_str()
            .map(str::to_owned)
    }

    fn history(&self) -> Vec<ReconcileRecord> {
        self.history.lock().unwrap().clone()
    }

    async fn cluster_id(&self) -> String {
        let namespace = self
            .kube
            .get("/api/v1/namespaces/kube-system")
            .await
            .unwrap();
        namespace["metadata"]["uid"].as_str().unwrap().to_owned()
    }

    /// Every block of the account.
    async fn blocks(&self) -> Vec<IpBlock> {
        let raw = self.api.ips.list("/ip-blocks").await.unwrap();
        raw.into_iter()
            .map(|b| serde_json::from_value(b).unwrap())
            .collect()
    }

    async fn block(&self, id: &str) -> IpBlock {
        let raw = self.api.ips.get(&format!("/ip-blocks/{id}")).await.unwrap();
        serde_json::from_value(raw).unwrap()
    }

    /// Waits until the block's attach or detach is over.
    async fn settled(&self, id: &str) -> IpBlock {
        for _ in 0..100 {
            let block = self.block(id).await;
            if !block.status.ends_with("ing") {
                return block;
            }
            tokio::time::sleep(PASS).await;
        }
        panic!("block {id} never settled");
    }
}

/// `name=value` of each tag, sorted.
fn tag_pairs(tags: &[TagAssignment]) -> Vec<String> {
    let mut pairs: Vec<String> = tags
        .iter()
        .map(|t| format!("{}={}", t.name, t.value.as_deref().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs
}

fn ingress_ip(service: &Value) -> Option<&str> {
    service["status"]["loadBalancer"]["ingress"][0]["ip"].as_str()
}

fn load_balancer_ip(service: &Value) -> &str {
    service["spec"]["loadBalancerIP"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_configuration_the_real_ccm_dies_of_is_refused_with_its_reason() {
    let mut options = PnapControllerOptions {
        kube: Kube::new("http://127.0.0.1:1"),
        pnap: endpoint("http://127.0.0.1:1", "net"),
        pass: PASS,
        reaper: PASS,
    };
    options.pnap.location.clear();
    let history = Arc::new(Mutex::new(Vec::new()));
    let error = super::start(options.clone()).await.err().unwrap();
    assert_eq!(error, "no location specified, cannot proceed");
    options.pnap.location = "PHX".into();
    options.pnap.load_balancer = "kube-vip:///net".into();
    let error = PnapController::new(&options, history.clone())
        .err()
        .unwrap();
    assert_eq!(error, "invalid config: no public network provided");
    // Without a load balancer the location does not matter.
    options.pnap.load_balancer.clear();
    options.pnap.location.clear();
    assert!(PnapController::new(&options, history).is_ok());
}

#[tokio::test]
async fn one_token_per_api_client_is_fetched_and_reused() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    h.passes_until("published", |s| {
        ingress_ip(s).is_some_and(|ip| !ip.is_empty())
    })
    .await;
    h.passes(5).await;
    h.controller.reap().await;
    let tokens = h
        .cloud_sim
        .requests()
        .by_route
        .into_iter()
        .find(|(route, _)| route.contains("openid-connect/token"));
    // The harness's own client and the node setup took theirs too; the CCM's four clients
    // (bmc, ips, networks, tag-manager) one each, however many calls they made.
    let (_, count) = tokens.expect("token requests are counted");
    assert!((4..=8).contains(&count), "{count} token requests");
}

#[tokio::test]
async fn refused_credentials_are_tried_both_ways_and_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let sim = phoenixnap::spawn(
        dir.path().join("pnap.json"),
        "127.0.0.1:0".parse().unwrap(),
        PnapSimOptions::default(),
    )
    .await
    .unwrap();
    let credentials = Credentials {
        client_id: DEFAULT_CLIENT_ID.into(),
        client_secret: "not-the-secret-7731".into(),
    };
    let api = PnapApi::new(&sim.base_url(), &credentials);
    let error = api.bmc.list("/servers").await.unwrap_err();
    assert_eq!(error.status, Some(401), "{error}");
    assert!(
        error.message.starts_with("oauth2: cannot fetch token"),
        "{error}"
    );
    assert!(!error.to_string().contains("7731"), "{error}");
    let tokens: u64 = sim
        .requests()
        .by_route
        .iter()
        .filter(|(route, _)| route.contains("openid-connect/token"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(tokens, 2, "HTTP Basic first, then the form fields");
    sim.shutdown().await.unwrap();
}
