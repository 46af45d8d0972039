//! PhoenixNAP controller mode against the real kube-apiserver: `skyplan sim serve --provider
//! phoenixnap --kubeconfig` runs the simulated PhoenixNAP CCM v1.0.0 against the real server
//! beside the served cloud. It initialises the test's node from its BMC server; skyplan makes
//! the block as the CCM makes it and writes the Service's address to the real server; the CCM
//! adopts the block.

use serde_json::{json, Value};

use crate::kubernetes::real_apiserver::cloudscale_controller::{initialised, CloudWithCcm};
use crate::kubernetes::real_apiserver::RealCluster;
use crate::phoenixnap::support::{tags, third_address, USAGE};
use crate::support::http;
use crate::support::{run, Output, Project};

const CLIENT: (&str, &str) = ("skyplan-sim-pnap-client", "skyplan-sim-pnap-secret");

/// The served cloud's API with a token from its token endpoint.
struct Api<'a> {
    cloud: &'a CloudWithCcm,
    token: String,
}

impl<'a> Api<'a> {
    fn new(cloud: &'a CloudWithCcm) -> Api<'a> {
        let url = format!(
            "{}/auth/realms/BMC/protocol/openid-connect/token",
            cloud.base_url.trim_end_matches('/')
        );
        let grant = "grant_type=client_credentials";
        let body = http::request("POST", &url)
            .basic_auth(CLIENT.0, CLIENT.1)
            .form(grant)
            .ok()
            .expect("token");
        let token: Value = serde_json::from_str(&body).unwrap();
        Api {
            cloud,
            token: token["access_token"].as_str().unwrap().to_string(),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let url = format!("{}{path}", self.cloud.base_url.trim_end_matches('/'));
        let request = http::request(method, &url).bearer(&self.token);
        let request = match body {
            Some(body) => request.json(body),
            None => request.header("Content-Type", "application/json"),
        };
        let out = request
            .ok()
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        serde_json::from_str(&out).unwrap_or(Value::Null)
    }

    fn network_id(&self, name: &str) -> String {
        let networks = self.call("GET", "/networks/v1/public-networks", None);
        let found = networks
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name);
        found.expect("the public network")["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn blocks(&self) -> Vec<Value> {
        let path = format!("/ips/v1/ip-blocks?tag=usage.{USAGE}");
        self.call("GET", &path, None)
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn the_pnap_ccm_initialises_the_node_and_adopts_the_planned_block() {
    let cluster = RealCluster::get();
    let namespace = cluster.namespace("ns");
    let project = Project::new();
    let world = project.path().join("pnap.json");
    // The CCM's load balancer names the public network by id: read it from a first run.
    let network = {
        let cloud = CloudWithCcm::start_provider("phoenixnap", &cluster, &world, &namespace, &[]);
        Api::new(&cloud).network_id("k8s-public")
    };
    let lb = format!("kube-vip://{network}");
    let flags = ["--ccm-location", "PHX", "--ccm-load-balancer", &lb];
    let cloud = CloudWithCcm::start_provider("phoenixnap", &cluster, &world, &namespace, &flags);
    let api = Api::new(&cloud);
    let name = cluster.name("node-1");
    let server = api.call(
        "POST",
        "/bmc/v1/servers",
        Some(
            &json!({"hostname": name, "os": "ubuntu/jammy", "type": "s1.c1.small",
                     "location": "PHX", "networkType": "PUBLIC_AND_PRIVATE"}),
        ),
    );
    let node = cluster.cloud_node("node-1");
    let node = initialised(&cluster, &cloud, &node);
    let id = server["id"].as_str().unwrap();
    assert!(
        node["spec"]["providerID"].as_str().unwrap().ends_with(id),
        "{node:#}"
    );

    // A ClusterIP Service, as the PhoenixNAP binding takes it: skyplan makes it a
    // LoadBalancer once its block exists, so the CCM never races skyplan for it.
    let _service = ServiceGuard {
        cluster: &cluster,
        namespace: &namespace,
    };
    cluster.create(&json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "api", "namespace": namespace},
        "spec": {"selector": {"app": "api"},
                 "ports": [{"name": "http", "port": 80}]}}));
    project.config(&format!(
        "[provider.phoenixnap]\nendpoint = \"{}\"\nlocation = \"PHX\"\n\n{}\n\
         [load-balancer.api]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"{namespace}/api\"\npublic-network = \"k8s-public\"\n",
        cloud.base_url,
        cluster.cluster_toml()
    ));
    let apply = skyplan(&project, &["apply", "--auto-approve"]);
    assert_eq!(apply.code, 0, "{apply:?}\n{}", cloud.log.lock().unwrap());
    let again = skyplan(&project, &["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "apply then plan is empty: {again:?}");
    let blocks = api.blocks();
    assert_eq!(blocks.len(), 1, "{blocks:#?}");
    assert!(tags(&blocks[0]).contains(&format!("serviceNamespace={namespace}")));
    let address = third_address(blocks[0]["cidr"].as_str().unwrap());
    let service = service(&cluster, &namespace);
    assert_eq!(service["spec"]["loadBalancerIP"], address.as_str());
    // The CCM adopted the block: the Service's status shows its address.
    let started = std::time::Instant::now();
    loop {
        let service = self::service(&cluster, &namespace);
        if service["status"]["loadBalancer"]["ingress"][0]["ip"] == address.as_str() {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "not adopted: {service:#}\n{}",
            cloud.log.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Deletes the Service while the CCM still runs (it holds a finalizer on it); if that fails,
/// takes the finalizer off so nothing is left behind.
struct ServiceGuard<'a> {
    cluster: &'a RealCluster,
    namespace: &'a str,
}

impl Drop for ServiceGuard<'_> {
    fn drop(&mut self) {
        let ns = format!("--namespace={}", self.namespace);
        let delete = ["delete", "service", "api", &ns, "--timeout=15s"];
        if self.cluster.kubectl(&delete).code != 0 {
            let clear = r#"{"metadata":{"finalizers":null}}"#;
            let patch = ["patch", "service", "api", &ns, "--type=merge", "-p", clear];
            let _ = self.cluster.kubectl(&patch);
        }
    }
}

fn skyplan(project: &Project, args: &[&str]) -> Output {
    let mut command = project.command(args);
    command
        .env("PNAP_CLIENT_ID", "skyplan-sim-pnap-client")
        .env("PNAP_CLIENT_SECRET", "skyplan-sim-pnap-secret");
    run(&mut command)
}

fn service(cluster: &RealCluster, namespace: &str) -> Value {
    let ns = format!("--namespace={namespace}");
    let out = cluster.kubectl_ok(&["get", "service", "api", &ns, "-o", "json"]);
    serde_json::from_str(&out).unwrap()
}
