//! Taking over a PhoenixNAP estate made out of band: a block the CCM made for a LoadBalancer
//! Service, a block skyplan made before its state was lost, a LoadBalancer Service no cloud
//! serves, and a block made by hand through the API. `skyplan discover` lists each once (a
//! Service a block serves is that block), `import --generate-config --all` adopts what the
//! config can say, and from then on plan and apply have nothing to do — the simulators'
//! request logs show no write.

use serde_json::{json, Value};

use crate::phoenixnap::support::{project_with_service, third_address, with_cloud, Pnap};
use crate::support::http;
use crate::support::kube_sim::{with_cluster, KubeSim};
use crate::support::Project;

/// The provider and the cluster, nothing to manage yet.
const BASE: &str = "[provider.phoenixnap]\nendpoint = \"embedded\"\nlocation = \"PHX\"\n\n\
                    [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

/// A LoadBalancer Service `default/NAME` on port 80, with `spec` merged in.
fn load_balancer_service(kube_url: &str, name: &str, spec: Value) {
    let mut body = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"type": "LoadBalancer", "selector": {"app": name},
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    });
    for (key, value) in spec.as_object().unwrap() {
        body["spec"][key] = value.clone();
    }
    let url = format!("{kube_url}/api/v1/namespaces/default/services");
    let result = http::request("POST", &url).json(&body).ok();
    assert!(result.is_ok(), "POST service {name}: {result:?}");
}

/// The estate: skyplan's block for Service `api`, whose state and config are then lost; a
/// LoadBalancer Service `web`, whose block the CCM makes; a LoadBalancer Service `other` of
/// another class, which no controller here serves.
fn estate() -> Project {
    let project = project_with_service();
    project.apply_ok();
    let forgotten = project.run(&["state", "rm", "load-balancer.api"]);
    assert_eq!(forgotten.code, 0, "{forgotten:?}");
    project.config(BASE);
    with_cluster(&project, |kube| {
        load_balancer_service(&kube.url, "web", json!({}));
        let class = json!({"loadBalancerClass": "example.com/other"});
        load_balancer_service(&kube.url, "other", class);
    });
    // A run starts the embedded CCM, which makes web's block and gives web its address.
    let drift = project.run(&["drift"]);
    assert_eq!(drift.code, 0, "{drift:?}");
    settled(&project);
    project
}

/// Waits (through runs of the embedded CCM) until every block is attached and `web` has the
/// address of its block.
fn settled(project: &Project) {
    for _ in 0..20 {
        let blocks = with_cloud(project, |cloud| cloud.blocks());
        let web = with_cluster(project, |kube| kube.service("web"));
        let attached = blocks.len() == 2 && blocks.iter().all(|b| b["status"] == "assigned");
        if attached && web["spec"]["loadBalancerIP"].is_string() {
            return;
        }
        project.run(&["drift"]);
    }
    panic!("the CCM did not make web's block");
}

fn block_for(project: &Project, service: &str) -> Value {
    let blocks = with_cloud(project, |cloud| cloud.blocks());
    let tag = json!({"name": "serviceName", "value": service});
    let found = blocks.iter().find(|b| {
        b["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == tag["name"] && t["value"] == tag["value"])
    });
    found
        .unwrap_or_else(|| panic!("no block for {service}: {blocks:#?}"))
        .clone()
}

/// The entry of `discover --format json` at `address`.
fn entry<'a>(listed: &'a Value, address: &str) -> &'a Value {
    let entries = listed["unmanaged"].as_array().unwrap();
    entries
        .iter()
        .find(|e| e["address"] == address)
        .unwrap_or_else(|| panic!("{address} not listed: {listed:#}"))
}

/// Every write (not GET) the simulator at `root` answered since its counters were reset,
/// the token requests apart; it must have answered reads.
fn writes(root: &str) -> Vec<String> {
    let body = http::get(&format!("{root}/_sim/requests"))
        .ok()
        .expect("requests");
    let counts: Value = serde_json::from_str(&body).unwrap();
    assert!(counts["total"].as_u64() > Some(0), "{counts:#}");
    counts["by_route"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|route| !route.starts_with("GET ") && !route.contains("openid-connect/token"))
        .cloned()
        .collect()
}

#[test]
fn an_estate_made_out_of_band_is_listed_adopted_and_then_planned_as_it_is() {
    let project = estate();
    let web_block = block_for(&project, "web");
    let api_block = block_for(&project, "api");

    let text = project.run(&["discover"]);
    assert_eq!(text.code, 0, "{text:?}");
    for line in [
        format!(
            "? load-balancer.web (phoenixnap {})",
            web_block["id"].as_str().unwrap()
        ),
        "made by PhoenixNAP CCM; serves Service default/web in cluster.prod".to_string(),
        format!(
            "? load-balancer.api (phoenixnap {})",
            api_block["id"].as_str().unwrap()
        ),
        "made by skyplan (as load-balancer.api); serves Service default/api in cluster.prod"
            .to_string(),
        "? load-balancer.other (kubernetes default/other) other".to_string(),
        "pending; port 80/TCP; loadBalancerClass example.com/other".to_string(),
        "3 objects that no resource manages.".to_string(),
    ] {
        assert!(text.stdout.contains(&line), "{line}\n{text:?}");
    }

    let json = project.run(&["discover", "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    let listed = json.json();
    assert_eq!(
        listed["unmanaged"].as_array().unwrap().len(),
        3,
        "{listed:#}"
    );
    let web = entry(&listed, "load-balancer.web");
    assert_eq!(web["provider"], "phoenixnap");
    assert_eq!(web["id"], web_block["id"]);
    assert_eq!(
        web["made_by"],
        json!({"by": "controller", "name": "PhoenixNAP CCM"})
    );
    assert_eq!(
        web["service"],
        json!({"cluster": "cluster.prod", "service": "default/web"})
    );
    assert_eq!(web["importable"], true);
    let cidr = web_block["cidr"].as_str().unwrap();
    assert_eq!(
        web["summary"],
        format!(
            "{cidr} in PHX, assigned to public network k8s-public; PhoenixNAP CCM's tags: \
             Service default/web of cluster.prod; Service address {}",
            third_address(cidr)
        )
    );
    let api = entry(&listed, "load-balancer.api");
    assert_eq!(
        api["made_by"],
        json!({"by": "skyplan", "name": "load-balancer.api"})
    );
    let other = entry(&listed, "load-balancer.other");
    assert_eq!(other["provider"], "kubernetes");
    assert_eq!(other["id"], "default/other");
    assert_eq!(other["made_by"], json!({"by": "unknown"}));
    assert_eq!(other["importable"], false);
    // The Services the blocks serve are the blocks: not listed a second time.
    let kubernetes: Vec<&Value> = listed["unmanaged"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["provider"] == "kubernetes")
        .collect();
    assert_eq!(kubernetes.len(), 1, "{listed:#}");

    let file = project.path().join("adopted.toml");
    let import = project.run(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(import.code, 0, "{import:?}");
    assert!(import.stdout.contains("Wrote 2 resources"), "{import:?}");
    assert!(
        import
            .stderr
            .contains("1 object that cannot be adopted on its own"),
        "{import:?}"
    );
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains(
            "[load-balancer.web]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
             service = \"default/web\"\npublic-network = \"k8s-public\"\n"
        ),
        "{written}"
    );
    assert!(written.contains("[load-balancer.api]"), "{written}");
    assert!(!written.contains("location"), "the provider's: {written}");
    let state = project.run(&["state", "list"]);
    assert_eq!(
        state.stdout, "cluster.prod\nload-balancer.api\nload-balancer.web\n",
        "{state:?}"
    );

    let plan = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.code, 0, "no changes: {plan:?}");
    let again = project.run(&["discover", "--format", "json"]).json();
    let left: Vec<&Value> = again["unmanaged"].as_array().unwrap().iter().collect();
    assert_eq!(left.len(), 1, "only the Service no cloud serves: {again:#}");
    assert_eq!(left[0]["address"], "load-balancer.other");

    // The same project on the same worlds, served: apply changes nothing, in the cloud or in
    // the cluster.
    let cloud = Pnap::start(&project.path().join("state/embedded/phoenixnap.json"));
    let cluster = KubeSim::start_on(&project.path().join("state/embedded/kubernetes/prod.json"));
    cluster.write_kubeconfig(&project);
    project.config(&format!(
        "[provider.phoenixnap]\nendpoint = \"{}\"\nlocation = \"PHX\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"kubeconfig.yaml\"\ncontext = \"sim\"\n",
        cloud.url
    ));
    let project = project
        .with_env("PNAP_CLIENT_ID", "skyplan-sim-pnap-client")
        .with_env("PNAP_CLIENT_SECRET", "skyplan-sim-pnap-secret");
    for root in [&cloud.url, &cluster.url] {
        let reset = http::request("POST", &format!("{root}/_sim/requests/reset")).ok();
        assert!(reset.is_ok(), "{reset:?}");
    }
    let plan = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.code, 0, "no changes, served: {plan:?}");
    let apply = project.apply(&[]);
    assert_eq!(apply.code, 0, "{apply:?}");
    assert!(
        apply
            .stdout
            .contains("Apply complete: 0 changes, 0 operations"),
        "{apply:?}"
    );
    assert_eq!(
        writes(&cloud.url),
        Vec::<String>::new(),
        "no write to PhoenixNAP"
    );
    assert_eq!(
        writes(&cluster.url),
        Vec::<String>::new(),
        "no write to the cluster"
    );
    let blocks = cloud.blocks();
    assert_eq!(blocks.len(), 2, "{blocks:#?}");
    assert!(blocks.contains(&web_block), "as it was: {blocks:#?}");
}

#[test]
fn a_block_made_by_hand_for_no_service_is_listed_and_refused() {
    let project = Project::new();
    project.config(BASE);
    let drift = project.run(&["drift"]);
    assert_eq!(drift.code, 2, "{drift:?}");
    let made = with_cloud(&project, |cloud| {
        let body = json!({"location": "PHX", "cidrBlockSize": "/29",
                          "description": "Legacy ingress"});
        cloud
            .send("POST", "/ips/v1/ip-blocks", Some(body))
            .expect("POST ip-block")
    });
    let id = made["id"].as_str().unwrap();

    let listed = project.run(&["discover", "--format", "json"]).json();
    let block = entry(&listed, "load-balancer.legacy-ingress");
    assert_eq!(block["id"], id);
    assert_eq!(block["made_by"], json!({"by": "unknown"}));
    assert!(block["service"].is_null(), "{block:#}");
    assert!(
        block["summary"]
            .as_str()
            .unwrap()
            .ends_with("in PHX, unassigned; no Service's tags"),
        "{block:#}"
    );
    // Judged as the import judges it: listed not importable, saying why.
    assert_eq!(block["importable"], false, "{block:#}");
    let why = block["why_not_importable"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("service: the block is tied to no Service"),
        "{block:#}"
    );

    let file = project.path().join("adopted.toml");
    let import = project.run(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(import.code, 1, "{import:?}");
    assert!(
        import.stderr.contains(&format!("(phoenixnap {id}): {why}")),
        "the import refuses it for the reason discover gave: {import:?}"
    );
    assert!(!file.exists(), "nothing to write");
    let state = project.run(&["state", "list"]);
    assert!(!state.stdout.contains("load-balancer"), "{state:?}");
}
