//! Controller mode against the real kube-apiserver: `skyplan sim serve --provider cloudscale
//! --kubeconfig` serves a simulated cloudscale and runs its simulated CCM against the real
//! server, as the CCM runs in a real cluster. skyplan plans a Service-bound load balancer,
//! writes the Service to the real server, and the CCM — reading what the real apiserver
//! defaulted and allocated — builds it in the cloud; the apply then holds the cloud to the
//! plan. The CCM is held to this test's namespace and nodes (the server is shared).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::kubernetes::real_apiserver::RealCluster;
use crate::support::http;
use crate::support::{run, sim_serve, Output, Project, SIM_TOKEN};

/// `sim serve --provider P --kubeconfig`: the cloud and its CCM; killed on drop.
pub struct CloudWithCcm {
    child: Child,
    pub base_url: String,
    /// What it printed after its first line, for a failing test's message.
    pub log: Arc<Mutex<String>>,
}

impl CloudWithCcm {
    fn start(cluster: &RealCluster, world: &Path, namespace: &str) -> CloudWithCcm {
        CloudWithCcm::start_provider("cloudscale", cluster, world, namespace, &[])
    }

    /// The CCM of `provider` held to this test's `namespace` and nodes, with `extra` flags.
    pub fn start_provider(
        provider: &str,
        cluster: &RealCluster,
        world: &Path,
        namespace: &str,
        extra: &[&str],
    ) -> CloudWithCcm {
        let mut command = sim_serve(provider, world);
        command
            .args(extra)
            .args(["--kubeconfig"])
            .arg(&cluster.kubeconfig)
            .args(["--context", "real", "--ccm-namespace", namespace])
            .args(["--ccm-node-selector", &cluster.node_selector()])
            .env("SKYPLAN_SIM_SETTLE_MS", "5")
            .env("SKYPLAN_SIM_CCM_PASS_MS", "100")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start sim serve");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).expect("sim output");
        let base_url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        // Drained to the end: a closed pipe would fail the server's next line.
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        CloudWithCcm {
            child,
            base_url,
            log,
        }
    }

    fn get(&self, path: &str) -> Value {
        let body = http::get(&format!("{}{path}", self.base_url))
            .bearer(SIM_TOKEN)
            .ok()
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        serde_json::from_str(&body).expect("the cloud's JSON")
    }

    /// A server `name` with a public and a private interface, as the embedded cluster's.
    fn create_server(&self, name: &str) -> Value {
        crate::support::create_server(&self.base_url, name)
    }

    /// The one pool's members as `address:port` with their monitor port.
    fn members(&self) -> Vec<(String, u64)> {
        let pools = self.get("/load-balancers/pools");
        let pools = pools.as_array().unwrap();
        assert_eq!(pools.len(), 1, "one pool: {pools:?}");
        let uuid = pools[0]["uuid"].as_str().unwrap();
        let members = self.get(&format!("/load-balancers/pools/{uuid}/members"));
        let mut members: Vec<(String, u64)> = members
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let name = format!("{}:{}", m["address"].as_str().unwrap(), m["protocol_port"]);
                (name, m["monitor_port"].as_u64().unwrap())
            })
            .collect();
        members.sort();
        members
    }
}

impl Drop for CloudWithCcm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One test: its namespace and nodes on the real server, a served cloud with their servers
/// and its CCM, and a project pointed at both.
struct Setup {
    cloud: CloudWithCcm,
    project: Project,
    namespace: String,
    /// The nodes' private (member) addresses, in name order.
    addresses: Vec<String>,
    cluster: RealCluster,
}

impl Setup {
    fn new(cluster: RealCluster, nodes: usize) -> Setup {
        let namespace = cluster.namespace("ns");
        let project = Project::new();
        let cloud = CloudWithCcm::start(&cluster, &project.path().join("cloud.json"), &namespace);
        let mut addresses = Vec::new();
        for i in 1..=nodes {
            let name = format!("node-{i}");
            let server = cloud.create_server(&cluster.name(&name));
            let node = cluster.cloud_node(&name);
            let node = initialised(&cluster, &cloud, &node);
            assert_eq!(
                node["spec"]["providerID"],
                format!("cloudscale://{}", server["uuid"].as_str().unwrap()),
                "the CCM matched the node to its server by name"
            );
            addresses.push(private_address(&server));
            let internal = node_addresses(&node, "InternalIP");
            assert_eq!(internal, [private_address(&server)], "{node:#}");
        }
        Setup {
            cloud,
            project,
            namespace,
            addresses,
            cluster,
        }
    }

    fn config(&self, extra: &str, port_name: &str) {
        self.project.config(&format!(
            "[provider.cloudscale]\nendpoint = \"{}\"\n\n{}\n\
             [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
             service = \"{}/web\"\nmode = \"ccm\"\nnode-selector = \"{}\"\n{extra}\n\n\
             [[load-balancer.web.ports]]\nname = \"{port_name}\"\nport = 80\n",
            self.cloud.base_url,
            self.cluster.cluster_toml(),
            self.namespace,
            self.cluster.node_selector(),
        ));
    }

    fn skyplan(&self, args: &[&str]) -> Output {
        let mut command = self.project.command(args);
        run(command.env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }

    /// The plan's entry for the load balancer.
    fn plan(&self) -> Value {
        let out = self.skyplan(&["plan", "--json"]);
        assert_eq!(out.code, 0, "{out:?}");
        let plan = out.json();
        let changes = plan["changes"].as_array().unwrap();
        let web = changes.iter().find(|c| c["address"] == "load-balancer.web");
        web.cloned()
            .unwrap_or_else(|| panic!("no load-balancer.web in {plan:#}"))
    }

    /// Applies, which waits for the CCM and holds the cloud to the plan; then nothing is left
    /// to plan.
    fn apply_as_predicted(&self) {
        let out = self.skyplan(&["apply", "--auto-approve"]);
        assert_eq!(out.code, 0, "{out:?}\n--- sim serve\n{}", self.log());
        assert!(
            out.stdout.contains("load-balancer.web: as predicted"),
            "{out:?}"
        );
        let again = self.skyplan(&["plan", "--detailed-exitcode"]);
        assert_eq!(again.code, 0, "apply then plan is empty: {again:?}");
        self.settle();
    }

    /// Waits (5 s at most) until the CCM stopped writing the Service: apply returns once the
    /// load balancer is built, but the CCM still writes its record after the status, and a
    /// plan read before that write would be refused at apply as "changed since the plan" (a
    /// write skyplan refuses today even though the key is not one it manages).
    fn settle(&self) {
        let version = |s: &Value| s["metadata"]["resourceVersion"].clone();
        let started = Instant::now();
        let mut last = version(&self.service());
        while started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(300));
            let now = version(&self.service());
            if now == last {
                return;
            }
            last = now;
        }
    }

    /// Waits (30 s at most) until the CCM carried out a patch to `Local`: the members moved to
    /// the health check node port the apiserver allocated.
    fn reconciled_to_the_health_check_node_port(&self) {
        let started = Instant::now();
        loop {
            let health = self.service()["spec"]["healthCheckNodePort"].as_u64();
            let members = self.cloud.members();
            let moved = members.iter().all(|(_, port)| Some(*port) == health);
            if health.is_some() && !members.is_empty() && moved {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the CCM did not move the members to the health check node port: {members:?}\n--- sim serve\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    fn service(&self) -> Value {
        let ns = format!("--namespace={}", self.namespace);
        let out = self
            .cluster
            .kubectl_ok(&["get", "service", "web", &ns, "-o", "json"]);
        serde_json::from_str(&out).expect("kubectl's JSON")
    }

    fn log(&self) -> String {
        self.cloud.log.lock().unwrap().clone()
    }
}

/// The CCM put a finalizer on the Service: it is deleted while the CCM still runs (which
/// deletes the load balancer and lets it go), or the namespace could never be deleted.
impl Drop for Setup {
    fn drop(&mut self) {
        let ns = format!("--namespace={}", self.namespace);
        let deleted = self
            .cluster
            .kubectl(&["delete", "service", "web", &ns, "--timeout=15s"]);
        if deleted.code != 0 && !deleted.stderr.contains("NotFound") {
            let finalizers = r#"{"metadata":{"finalizers":null}}"#;
            let _ = self.cluster.kubectl(&[
                "patch",
                "service",
                "web",
                &ns,
                "--type=merge",
                "-p",
                finalizers,
            ]);
        }
    }
}

/// Waits (10 s at most) until the CCM initialised `node`; returns it.
pub fn initialised(cluster: &RealCluster, cloud: &CloudWithCcm, node: &str) -> Value {
    let started = Instant::now();
    loop {
        let object = cluster.node(node);
        let tainted = object["spec"]["taints"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["key"] == UNINITIALIZED));
        // The CCM writes the node, then its addresses: both are done.
        let addressed = !node_addresses(&object, "InternalIP").is_empty();
        if !tainted && object["spec"]["providerID"].is_string() && addressed {
            return object;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the CCM did not initialise {node}: {object:#}\n--- sim serve\n{}",
            cloud.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

const UNINITIALIZED: &str = "node.cloudprovider.kubernetes.io/uninitialized";

fn private_address(server: &Value) -> String {
    let interfaces = server["interfaces"].as_array().unwrap();
    let private = interfaces.iter().find(|i| i["type"] != "public").unwrap();
    private["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_string()
}

fn node_addresses(node: &Value, kind: &str) -> Vec<String> {
    let addresses = node["status"]["addresses"].as_array().cloned();
    addresses
        .unwrap_or_default()
        .iter()
        .filter(|a| a["type"] == kind)
        .map(|a| a["address"].as_str().unwrap().to_string())
        .collect()
}

fn operations(change: &Value) -> Vec<String> {
    let operations = change["operations"].as_array().unwrap();
    operations
        .iter()
        .map(|o| o.as_str().unwrap().to_string())
        .collect()
}

fn node_port(service: &Value) -> u64 {
    service["spec"]["ports"][0]["nodePort"]
        .as_u64()
        .expect("the apiserver allocated a nodePort")
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn the_ccm_initialises_the_nodes_and_builds_the_planned_load_balancer() {
    let cluster = RealCluster::get();
    let setup = Setup::new(cluster, 2);
    setup.config("", "http");
    let web = setup.plan();
    assert_eq!(web["action"], "create", "{web:#}");
    let planned = operations(&web);
    let service = format!("create service {}/web", setup.namespace);
    assert_eq!(planned[0], service, "{planned:#?}");
    for address in &setup.addresses {
        let member = format!("controller: create member {address}:<new node port>");
        assert!(planned.contains(&member), "{member} in {planned:#?}");
    }
    setup.apply_as_predicted();

    // The members are the nodes' servers on the nodePort the real apiserver allocated.
    let port = node_port(&setup.service());
    let expected: Vec<(String, u64)> = setup
        .addresses
        .iter()
        .map(|a| (format!("{a}:{port}"), port))
        .collect();
    assert_eq!(setup.cloud.members(), expected);
    let service = setup.service();
    let uuid = &service["metadata"]["annotations"]["k8s.cloudscale.ch/loadbalancer-uuid"];
    let lbs = setup.cloud.get("/load-balancers");
    assert_eq!(lbs.as_array().unwrap().len(), 1, "{lbs:#}");
    assert_eq!(
        &lbs[0]["uuid"], uuid,
        "the CCM wrote its uuid on the Service"
    );
    let ingress = &service["status"]["loadBalancer"]["ingress"][0]["ip"];
    let vip = &lbs[0]["vip_addresses"][0]["address"];
    assert_eq!(
        ingress, vip,
        "the Service's status shows the VIP: {service:#}"
    );
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_port_rename_recreates_the_pool_as_predicted() {
    let cluster = RealCluster::get();
    let setup = Setup::new(cluster, 1);
    setup.config("", "http");
    setup.apply_as_predicted();
    let before = setup.cloud.get("/load-balancers/pools");
    let port = node_port(&setup.service());

    setup.config("", "web");
    let web = setup.plan();
    assert_eq!(web["impact"], "pool-recreate", "{web:#}");
    let planned = operations(&web);
    let new_member = format!("create member {}:<new node port>", setup.addresses[0]);
    for op in ["delete pool tcp/http", "create pool tcp/web", &new_member] {
        let op = format!("controller: {op}");
        assert!(planned.contains(&op), "{op} in {planned:#?}");
    }
    setup.apply_as_predicted();
    let after = setup.cloud.get("/load-balancers/pools");
    assert_eq!(after[0]["name"], "tcp/web");
    assert_ne!(after[0]["uuid"], before[0]["uuid"], "a new pool");
    // The apiserver keeps an omitted nodePort by port *name*: the renamed port has a new one,
    // and the new pool's members are on it.
    let renamed = node_port(&setup.service());
    assert_ne!(renamed, port, "a new nodePort for a new port name");
    let member = format!("{}:{renamed}", setup.addresses[0]);
    assert_eq!(setup.cloud.members(), [(member, renamed)]);
}

/// Local makes the apiserver allocate a healthCheckNodePort, which the CCM's members monitor;
/// back to Cluster releases it and the members monitor the nodePort again.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn local_traffic_policy_and_back_allocate_and_release_the_health_check_node_port() {
    let cluster = RealCluster::get();
    let setup = Setup::new(cluster, 1);
    setup.config("", "http");
    setup.apply_as_predicted();
    let port = node_port(&setup.service());
    let member = format!("{}:{port}", setup.addresses[0]);

    setup.config("traffic-policy = \"Local\"", "http");
    let web = setup.plan();
    assert_eq!(web["impact"], "minimal", "{web:#}");
    let planned = operations(&web);
    for op in [
        format!("delete member {member}"),
        format!("create member {member}"),
        "create health monitor http of pool tcp/http".to_string(),
    ] {
        let op = format!("controller: {op}");
        assert!(planned.contains(&op), "{op} in {planned:#?}");
    }
    setup.apply_as_predicted();
    let service = setup.service();
    let health = service["spec"]["healthCheckNodePort"]
        .as_u64()
        .expect("the apiserver allocated a healthCheckNodePort");
    assert_ne!(health, port);
    assert_eq!(setup.cloud.members(), [(member.clone(), health)]);
    let monitors = setup.cloud.get("/load-balancers/health-monitors");
    assert_eq!(monitors[0]["type"], "http", "{monitors:#}");

    setup.config("traffic-policy = \"Cluster\"", "http");
    let web = setup.plan();
    assert_eq!(web["impact"], "minimal", "{web:#}");
    setup.apply_as_predicted();
    let service = setup.service();
    assert!(
        service["spec"].get("healthCheckNodePort").is_none(),
        "released: {service:#}"
    );
    assert_eq!(setup.cloud.members(), [(member, port)]);
    let monitors = setup.cloud.get("/load-balancers/health-monitors");
    assert_eq!(monitors[0]["type"], "tcp", "{monitors:#}");
}

/// A kubectl edit of a key skyplan writes is drift; one of a key it does not write is not.
#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_kubectl_patch_of_the_service_is_drift() {
    let cluster = RealCluster::get();
    let setup = Setup::new(cluster, 1);
    setup.config("", "http");
    setup.apply_as_predicted();
    let ns = format!("--namespace={}", setup.namespace);
    setup
        .cluster
        .kubectl_ok(&["label", "service", "web", &ns, "team=theirs"]);
    assert_eq!(web_drift(&setup)["status"], "in-sync");

    let local = r#"{"spec":{"externalTrafficPolicy":"Local"}}"#;
    setup
        .cluster
        .kubectl_ok(&["patch", "service", "web", &ns, "-p", local]);
    setup.reconciled_to_the_health_check_node_port();
    let web = web_drift(&setup);
    assert_eq!(web["status"], "drifted", "{web:#}");
    let items = web["items"].as_array().unwrap();
    let policy = items
        .iter()
        .find(|i| i["path"] == "traffic-policy")
        .unwrap_or_else(|| panic!("no traffic-policy in {web:#}"));
    assert_eq!(
        (&policy["expected"], &policy["actual"]),
        (&json!("Cluster"), &json!("Local"))
    );
    // As plan would restore it, once the CCM has carried the patch out: it recreates the
    // members and the monitor, minimal. (Read before the CCM acts, the cloud still matches
    // `Cluster` and restoring it is rightly none: the class is read from the cloud as it is.)
    assert_eq!(policy["impact"], "minimal", "{web:#}");
}

/// `drift --format json`'s entry for the load balancer (other tests' nodes on the shared
/// server may make the cluster drift, so only this entry is read).
fn web_drift(setup: &Setup) -> Value {
    let out = setup.skyplan(&["drift", "--format", "json"]);
    assert!(matches!(out.code, 0 | 2), "{out:?}");
    let report = out.json();
    let resources = report["resources"].as_array().unwrap();
    let web = resources
        .iter()
        .find(|r| r["address"] == "load-balancer.web");
    web.cloned()
        .unwrap_or_else(|| panic!("no load-balancer.web in {report:#}"))
}
