//! Integration tests: the CloudStack simulator and a Kubernetes simulator in-process (nodes
//! named after the account's VMs `web-1` and `web-2`), the controller driven pass by pass, the
//! results read back over both APIs.

mod cks;
mod rules;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;

use super::client::CsApi;
use super::{CloudStackEndpoint, CsController, CsControllerOptions, LAST_ERROR_ANNOTATION};
use crate::cloudstack::{self, SimHandle, SimOptions, DEFAULT_API_KEY, DEFAULT_SECRET_KEY};
use crate::controllers::http::{Kube, MERGE_PATCH};
use crate::controllers::{ReconcileRecord, RECORD_ANNOTATION};
use crate::kubernetes::{self, FreshNode, KubeSimHandle, KubeSimOptions};

const PASS: Duration = Duration::from_millis(20);
const SERVICE: &str = "/api/v1/namespaces/default/services/web";

struct Harness {
    kube: Kube,
    cloud: CsApi,
    controller: CsController,
    history: Arc<Mutex<Vec<ReconcileRecord>>>,
    _cloud_sim: SimHandle,
    _kube_sim: KubeSimHandle,
    _dir: TempDir,
}

impl Harness {
    async fn start() -> Harness {
        Self::with_version("4.22.0.0").await
    }

    async fn with_version(version: &str) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let options = SimOptions {
            job_time: Duration::from_millis(5),
            version: version.into(),
            ..SimOptions::default()
        };
        let cloud_sim = cloudstack::spawn(
            dir.path().join("cloudstack.json"),
            "127.0.0.1:0".parse().unwrap(),
            options,
        )
        .await
        .unwrap();
        let fresh_nodes = vec![
            FreshNode::ready("web-1", "10.1.1.11"),
            FreshNode::ready("web-2", "10.1.1.12"),
        ];
        let kube_sim = kubernetes::spawn(KubeSimOptions {
            fresh_nodes,
            ..KubeSimOptions::new(dir.path().join("kube.json"))
        })
        .await
        .unwrap();
        let endpoint = CloudStackEndpoint {
            api: cloud_sim.base_url(),
            api_key: DEFAULT_API_KEY.into(),
            secret_key: DEFAULT_SECRET_KEY.into(),
        };
        let options = CsControllerOptions {
            kube: Kube::new(kube_sim.url()),
            cloudstack: endpoint.clone(),
            pass: PASS,
        };
        let history = Arc::new(Mutex::new(Vec::new()));
        Harness {
            kube: Kube::new(kube_sim.url()),
            cloud: CsApi::new(&endpoint.api, &endpoint.api_key, &endpoint.secret_key),
            controller: CsController::new(&options, history.clone()),
            history,
            _cloud_sim: cloud_sim,
            _kube_sim: kube_sim,
            _dir: dir,
        }
    }

    async fn passes(&mut self, count: usize) {
        for _ in 0..count {
            self.controller.pass().await;
        }
    }

    /// `web`, type LoadBalancer, with these ports, annotations and extra spec fields.
    async fn create_service(&self, ports: Value, annotations: Value, spec: Value) -> Value {
        let mut body = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "annotations": annotations},
            "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": ports},
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

    async fn rules(&self) -> Vec<Value> {
        self.cloud
            .list(
                "listLoadBalancerRules",
                "loadbalancerrule",
                &[("listall", "true".into())],
            )
            .await
            .unwrap()
    }

    async fn rule(&self, suffix: &str) -> Value {
        let rules = self.rules().await;
        rules
            .into_iter()
            .find(|r| r["name"].as_str().unwrap().ends_with(suffix))
            .unwrap_or_else(|| panic!("no rule ending in {suffix}"))
    }

    async fn firewall(&self) -> Vec<(String, u64, String)> {
        let rules = self
            .cloud
            .list(
                "listFirewallRules",
                "firewallrule",
                &[("listall", "true".into())],
            )
            .await
            .unwrap();
        let mut found: Vec<(String, u64, String)> = rules
            .iter()
            .map(|r| {
                (
                    r["protocol"].as_str().unwrap().to_owned(),
                    r["startport"].as_u64().unwrap_or(0),
                    r["cidrlist"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        found.sort();
        found
    }

    async fn members(&self, rule: &Value) -> Vec<String> {
        let vms = self
            .cloud
            .list(
                "listLoadBalancerRuleInstances",
                "loadbalancerruleinstance",
                &[("id", rule["id"].as_str().unwrap().to_owned())],
            )
            .await
            .unwrap();
        let mut names: Vec<String> = vms
            .iter()
            .map(|vm| vm["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    }

    async fn allocated_ips(&self) -> Vec<String> {
        let ips = self
            .cloud
            .list(
                "listPublicIpAddresses",
                "publicipaddress",
                &[("issourcenat", "false".into())],
            )
            .await
            .unwrap();
        ips.iter()
            .map(|ip| ip["ipaddress"].as_str().unwrap().to_owned())
            .collect()
    }

    fn history(&self) -> Vec<ReconcileRecord> {
        self.history.lock().unwrap().clone()
    }
}

fn port(number: u16, node_port: u16) -> Value {
    json!({"name": format!("p{number}"), "protocol": "TCP", "port": number, "nodePort": node_port})
}
