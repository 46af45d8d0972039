//! Taking over a cloudscale estate made without skyplan: load balancers made through the
//! API (one by hand, one skyplan made before its state was lost) and one the cloudscale CCM
//! made for a LoadBalancer Service, in a served cloud whose simulated CCM reconciles a served
//! cluster (`sim serve --provider cloudscale --kubeconfig`), as in production. `discover` lists
//! them with who made each, `import --generate-config --all` adopts them, and then the only
//! write left is the `skyplan.address` tag of the one made by hand (impact none).

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::import_by_id::{made_by_hand, made_by_hand_naming};
use crate::support::kube_sim::KubeSim;
use crate::support::served::ServedCloud;
use crate::support::{create_server, http, run, sim_serve, Output, Project, SIM_TOKEN};

/// `sim serve --provider cloudscale --kubeconfig`: the cloud and its CCM reconciling the
/// served cluster; killed on drop.
struct CloudWithCcm {
    child: Child,
    base_url: String,
}

impl CloudWithCcm {
    fn start(project: &Project) -> CloudWithCcm {
        let mut command = sim_serve("cloudscale", &project.path().join("cloud.json"));
        command
            .arg("--kubeconfig")
            .arg(project.path().join("kubeconfig.yaml"))
            .args(["--context", "sim"])
            .env("SKYPLAN_SIM_SETTLE_MS", "0")
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
        std::thread::spawn(move || stderr.lines().map_while(Result::ok).for_each(drop));
        CloudWithCcm { child, base_url }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let request = http::request(method, &format!("{}{path}", self.base_url)).bearer(SIM_TOKEN);
        let request = match &body {
            Some(body) => request.json(body),
            None => request,
        };
        let answer = request
            .ok()
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        serde_json::from_str(&answer).unwrap_or(Value::Null)
    }

    fn root(&self) -> String {
        self.base_url.trim_end_matches("/v1").to_string()
    }
}

impl Drop for CloudWithCcm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A load balancer with one port served by pool `pool` on `node_port` of `members`, made
/// through the API call by call, as an operator (or another tool) makes one.
struct ByHand<'a> {
    name: &'a str,
    tags: Value,
    algorithm: &'a str,
    members: &'a [&'a str],
    port: u16,
    node_port: u16,
    monitor: Value,
}

fn make(cloud: &CloudWithCcm, lb: ByHand) -> String {
    let made = cloud.call(
        "POST",
        "/load-balancers",
        Some(json!({"name": lb.name, "flavor": "lb-standard", "zone": "lpg1", "tags": lb.tags})),
    );
    let uuid = made["uuid"].as_str().expect("a load balancer").to_string();
    let pool = cloud.call(
        "POST",
        "/load-balancers/pools",
        Some(json!({"name": "tcp/http", "load_balancer": uuid, "algorithm": lb.algorithm, "protocol": "tcp"})),
    );
    let pool = pool["uuid"].as_str().expect("a pool").to_string();
    let subnets = cloud.call("GET", "/subnets", None);
    let subnet = subnets[0]["uuid"].as_str().expect("the private subnet");
    for address in lb.members {
        cloud.call(
            "POST",
            &format!("/load-balancers/pools/{pool}/members"),
            Some(json!({
                "name": format!("{address}:{}", lb.node_port), "protocol_port": lb.node_port,
                "monitor_port": lb.node_port, "address": address, "subnet": subnet,
            })),
        );
    }
    let mut monitor = lb.monitor;
    monitor["pool"] = json!(pool);
    cloud.call("POST", "/load-balancers/health-monitors", Some(monitor));
    cloud.call(
        "POST",
        "/load-balancers/listeners",
        Some(
            json!({"name": format!("tcp/{}", lb.port), "pool": pool, "protocol": "tcp",
                    "protocol_port": lb.port, "allowed_cidrs": ["192.0.2.0/24"]}),
        ),
    );
    uuid
}

/// A LoadBalancer Service `default/shop` with the CCM's annotations, which the CCM builds a
/// load balancer for; waits until it has (its uuid annotation and the pool's listener).
fn served_by_the_ccm(kube: &KubeSim, cloud: &CloudWithCcm) -> (String, Value) {
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "shop", "namespace": "default", "annotations": {
            "k8s.cloudscale.ch/loadbalancer-pool-algorithm": "source_ip",
            "k8s.cloudscale.ch/loadbalancer-health-monitor-delay-s": "5",
        }},
        "spec": {"type": "LoadBalancer", "selector": {"app": "shop"},
                 "ports": [{"name": "http", "port": 80, "targetPort": 80, "protocol": "TCP"}]},
    });
    let url = format!("{}/api/v1/namespaces/default/services", kube.url);
    let created = http::request("POST", &url).json(&service).ok();
    assert!(created.is_ok(), "POST service: {created:?}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let service: Value =
            serde_json::from_str(&http::get(&format!("{url}/shop")).ok().expect("GET service"))
                .unwrap();
        let uuid = service["metadata"]["annotations"]["k8s.cloudscale.ch/loadbalancer-uuid"]
            .as_str()
            .map(String::from);
        let listeners = cloud.call("GET", "/load-balancers/listeners", None);
        let listening = |uuid: &str| {
            listeners
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["load_balancer"]["uuid"] == uuid && l["pool"].is_object())
        };
        if let Some(uuid) = uuid.filter(|u| listening(u)) {
            return (uuid, service);
        }
        assert!(
            Instant::now() < deadline,
            "the CCM built no load balancer for default/shop: {service:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The requests that change something (POST, PUT, PATCH, DELETE), by route.
fn writes(requests: &Value) -> Vec<String> {
    let routes = requests["by_route"].as_object().expect("requests by route");
    routes
        .keys()
        .filter(|route| {
            ["POST", "PUT", "PATCH", "DELETE"]
                .iter()
                .any(|m| route.starts_with(m))
        })
        .cloned()
        .collect()
}

fn reset(root: &str) {
    let reset = http::request("POST", &format!("{root}/_sim/requests/reset")).ok();
    assert!(reset.is_ok(), "reset: {reset:?}");
}

fn requests(root: &str) -> Value {
    serde_json::from_str(
        &http::get(&format!("{root}/_sim/requests"))
            .ok()
            .expect("requests"),
    )
    .expect("requests JSON")
}

struct Estate {
    project: Project,
    kube: KubeSim,
    cloud: CloudWithCcm,
    legacy: String,
    lost: String,
    shop: String,
}

impl Estate {
    /// A cluster with three nodes (and their servers), the CCM's load balancer for
    /// default/shop, one made by hand and one skyplan made as load-balancer.store; a config
    /// that declares only the provider and the cluster.
    fn made() -> Estate {
        let project = Project::new();
        let kube = KubeSim::start(&project);
        kube.write_kubeconfig(&project);
        let cloud = CloudWithCcm::start(&project);
        for node in ["node-1", "node-2", "node-3"] {
            create_server(&cloud.base_url, node);
        }
        let legacy = make(
            &cloud,
            ByHand {
                name: "legacy web",
                tags: json!({}),
                algorithm: "least_connections",
                members: &["10.0.0.21", "10.0.0.22"],
                port: 80,
                node_port: 30080,
                monitor: json!({"type": "http", "delay_s": 5, "http": {"url_path": "/healthz"}}),
            },
        );
        let lost = make(
            &cloud,
            ByHand {
                name: "store",
                tags: json!({"skyplan.address": "load-balancer.store"}),
                algorithm: "round_robin",
                members: &["10.0.0.31"],
                port: 443,
                node_port: 30443,
                monitor: json!({"type": "tcp"}),
            },
        );
        let (shop, _) = served_by_the_ccm(&kube, &cloud);
        project.config(&format!(
            "[provider.cloudscale]\nendpoint = \"{}\"\n\n\
             [cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"kubeconfig.yaml\"\ncontext = \"sim\"\n",
            cloud.base_url
        ));
        Estate {
            project,
            kube,
            cloud,
            legacy,
            lost,
            shop,
        }
    }

    fn skyplan(&self, args: &[&str]) -> Output {
        run(self
            .project
            .command(args)
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }
}

#[test]
fn an_estate_made_without_skyplan_is_discovered_adopted_and_then_left_alone() {
    let estate = Estate::made();

    let out = estate.skyplan(&["discover"]);
    assert_eq!(out.code, 0, "{out:?}");
    let text = &out.stdout;
    for (address, made_by) in [
        (
            "load-balancer.legacy-web",
            "made by unknown; bound to no cluster",
        ),
        (
            "load-balancer.store",
            "made by skyplan (as load-balancer.store)",
        ),
        (
            "load-balancer.shop",
            "made by cloudscale CCM; serves Service default/shop in cluster.prod",
        ),
    ] {
        let block = text
            .split("\n\n")
            .find(|b| b.contains(&format!("? {address} ")))
            .unwrap_or_else(|| panic!("no {address} in {out:?}"));
        assert!(block.contains(made_by), "{block}");
    }
    assert!(
        !text.contains("? load-balancer.shop-2") && !text.contains("kubernetes"),
        "the Service is not listed beside its load balancer: {text}"
    );

    let json = estate.skyplan(&["discover", "--format", "json"]).json();
    let found = json["unmanaged"].as_array().expect("unmanaged objects");
    assert_eq!(found.len(), 3, "{json:#}");
    let by_id = |uuid: &str| {
        found
            .iter()
            .find(|o| o["id"] == uuid)
            .unwrap_or_else(|| panic!("{uuid} not in {json:#}"))
    };
    let legacy = by_id(&estate.legacy);
    assert_eq!(legacy["made_by"], json!({"by": "unknown"}));
    assert_eq!(legacy["address"], "load-balancer.legacy-web");
    assert_eq!(legacy["importable"], true);
    assert!(
        legacy["summary"]
            .as_str()
            .unwrap()
            .contains("lpg1, lb-standard, port 80/tcp"),
        "{legacy:#}"
    );
    let lost = by_id(&estate.lost);
    assert_eq!(
        lost["made_by"],
        json!({"by": "skyplan", "name": "load-balancer.store"})
    );
    let shop = by_id(&estate.shop);
    assert_eq!(
        shop["made_by"],
        json!({"by": "controller", "name": "cloudscale CCM"})
    );
    assert_eq!(shop["cluster"], "cluster.prod");
    assert_eq!(shop["service"]["service"], "default/shop");
    assert_eq!(shop["address"], "load-balancer.shop");

    let file = estate.project.path().join("adopted.toml");
    let out = estate.skyplan(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let adopted = std::fs::read_to_string(&file).expect("the generated config");
    for expected in [
        "[load-balancer.legacy-web]\nprovider = \"cloudscale\"\nname = \"legacy web\"\nzone = \"lpg1\"\n",
        "algorithm = \"least_connections\"\nallowed-cidrs = [\"192.0.2.0/24\"]\n",
        "health-monitor = { type = \"http\", delay-s = 5, http = { url-path = \"/healthz\" } }\n",
        "members = [\"10.0.0.21\", \"10.0.0.22\"]\n",
        "[load-balancer.store]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n",
        "[[load-balancer.store.ports]]\nname = \"http\"\nport = 443\nnode-port = 30443\n",
        "[load-balancer.shop]\nprovider = \"cloudscale\"\n",
        "cluster = \"prod\"\nservice = \"default/shop\"\nmode = \"ccm\"\nalgorithm = \"source_ip\"\n",
        "health-monitor = { delay-s = 5 }\n",
        "[[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n",
    ] {
        assert!(adopted.contains(expected), "no {expected:?} in\n{adopted}");
    }
    let state = estate.skyplan(&["state", "list"]);
    for address in [
        "load-balancer.legacy-web",
        "load-balancer.shop",
        "load-balancer.store",
    ] {
        assert!(state.stdout.contains(address), "{state:?}");
    }

    // Once adopted, the plan has only the skyplan.address tag of the one made by hand to add
    // (impact none); the one skyplan made has it, the CCM's is found by its Service.
    let plan = estate.skyplan(&["plan", "--json"]).json();
    let pending: Vec<(&Value, &Value, Vec<&Value>)> = (plan["changes"].as_array().unwrap())
        .iter()
        .filter(|c| c["action"] != "no-op")
        .map(|c| {
            let paths = c["attributes"].as_array().unwrap();
            (
                &c["address"],
                &c["impact"],
                paths.iter().map(|a| &a["path"]).collect(),
            )
        })
        .collect();
    assert_eq!(
        pending,
        [(
            &json!("load-balancer.legacy-web"),
            &json!("none"),
            vec![&json!("tags.skyplan.address")]
        )],
        "{plan:#}"
    );
    let again = estate.skyplan(&["discover"]);
    assert!(again.stdout.contains("Nothing unmanaged"), "{again:?}");

    reset(&estate.cloud.root());
    reset(&estate.kube.url);
    let out = estate.skyplan(&["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let cloud = requests(&estate.cloud.root());
    assert_eq!(
        writes(&cloud),
        ["PATCH /v1/load-balancers/{uuid}"],
        "the cloud was written more than the tag: {cloud:#}"
    );
    assert_eq!(cloud["by_route"]["PATCH /v1/load-balancers/{uuid}"], 1);
    let legacy = estate
        .cloud
        .call("GET", &format!("/load-balancers/{}", estate.legacy), None);
    assert_eq!(
        legacy["tags"],
        json!({"skyplan.address": "load-balancer.legacy-web"})
    );
    let out = estate.skyplan(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "nothing left to plan: {out:?}");
    assert!(
        cloud["total"].as_u64().unwrap() > 0,
        "the apply read the cloud: {cloud:#}"
    );
    let cluster = requests(&estate.kube.url);
    assert_eq!(
        writes(&cluster),
        Vec::<String>::new(),
        "the cluster was written: {cluster:#}"
    );
}

#[test]
fn a_load_balancer_the_config_cannot_say_is_refused_and_the_others_adopted() {
    let cloud = ServedCloud::start();
    cloud.configure("");
    let made = |name: &str| {
        let body = format!(r#"{{"name": "{name}", "flavor": "lb-standard", "zone": "lpg1"}}"#);
        let made: Value =
            serde_json::from_str(&cloud.call("POST", "/load-balancers", Some(&body))).unwrap();
        made["uuid"].as_str().unwrap().to_string()
    };
    let bare = made("bare");
    let listed = cloud.skyplan(&["discover", "--format", "json"]).json();
    assert_eq!(listed["unmanaged"][0]["id"], bare.as_str());
    let summary = listed["unmanaged"][0]["summary"].as_str().unwrap();
    assert!(
        summary.ends_with(", lpg1, lb-standard, no ports"),
        "{summary}"
    );
    let file = cloud.project.path().join("adopted.toml");
    let out = cloud.skyplan(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("ports: the load balancer has no pools"),
        "{out:?}"
    );
    assert!(!file.exists(), "nothing to write: {out:?}");
}

#[test]
fn discover_and_import_share_one_judgement_and_discover_says_why_not() {
    let cloud = ServedCloud::start();
    cloud.configure("");
    let plain = made_by_hand(&cloud, "plain", "round_robin", &["10.0.0.21"]);
    // Members named otherwise than skyplan and the CCM name them: a plan would recreate them.
    let odd = made_by_hand_naming(&cloud, "odd", "round_robin", &["10.0.0.31"], |address| {
        format!("m-{address}")
    });

    let listed = cloud.skyplan(&["discover", "--format", "json"]).json();
    let found = listed["unmanaged"].as_array().expect("unmanaged objects");
    let by_id = |uuid: &str| {
        (found.iter())
            .find(|o| o["id"] == uuid)
            .unwrap_or_else(|| panic!("{uuid} not in {listed:#}"))
    };
    assert_eq!(by_id(&plain)["importable"], true, "{listed:#}");
    assert!(by_id(&plain)["why_not_importable"].is_null(), "{listed:#}");
    let refused = by_id(&odd);
    assert_eq!(refused["importable"], false, "{listed:#}");
    let why = refused["why_not_importable"]
        .as_str()
        .unwrap_or_else(|| panic!("discover says why not: {refused:#}"));
    assert!(
        why.starts_with("ports.http.members: member m-10.0.0.31 of pool tcp/http is not named as skyplan and the CCM name members"),
        "{why}"
    );
    let text = cloud.skyplan(&["discover"]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(
        text.stdout
            .contains(&format!("    not importable: {why}\n")),
        "{text:?}"
    );

    let file = cloud.project.path().join("adopted.toml");
    let out = cloud.skyplan(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    // What discover listed importable is adopted; the other is refused for the reason discover
    // gave.
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("load-balancer odd (cloudscale {odd}): {why}")),
        "{out:?}"
    );
    let state = cloud.skyplan(&["state", "list"]);
    assert!(state.stdout.contains("load-balancer.plain"), "{state:?}");
    assert!(!state.stdout.contains("load-balancer.odd"), "{state:?}");
}
