//! Taking over a CloudStack estate made out of band, against `skyplan sim serve --provider
//! cloudstack` called with signed requests as an operator's tool would: a CKS cluster, LB
//! rules made by hand for two VMs and for the cluster's workers, and the rules the simulated
//! CloudStack CCM makes for a Service written to the cluster. `discover` lists each with who
//! made it, `import --generate-config --all` adopts them all, the next plan is empty and an
//! apply sends no mutating command.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cloudstack::support::{text, CsProject, CsSimServer};
use crate::support::http;

/// The answer of `command`; an async command's job result once the job ended well.
fn run(sim: &CsSimServer, command: &str, params: &[(&str, &str)]) -> Value {
    let answer = sim.call(command, params);
    let body = answer
        .as_object()
        .and_then(|o| o.values().next())
        .cloned()
        .unwrap_or_else(|| panic!("{command}: {answer}"));
    assert!(body.get("errortext").is_none(), "{command}: {answer}");
    let Some(job) = body["jobid"].as_str() else {
        return body;
    };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        let result = sim.call("queryAsyncJobResult", &[("jobid", job)]);
        let result = &result["queryasyncjobresultresponse"];
        match result["jobstatus"].as_i64() {
            Some(0) => std::thread::sleep(Duration::from_millis(50)),
            Some(1) => return result["jobresult"].clone(),
            _ => panic!("{command}: {result}"),
        }
    }
    panic!("{command}: job {job} did not end");
}

/// The items a list command returns.
fn list(sim: &CsSimServer, command: &str, item: &str) -> Vec<Value> {
    let answer = sim.call(command, &[]);
    let body = answer.as_object().and_then(|o| o.values().next()).cloned();
    body.and_then(|b| b[item].as_array().cloned())
        .unwrap_or_default()
}

fn id_named(items: &[Value], field: &str, name: &str) -> String {
    let found = items
        .iter()
        .find(|i| text(i, field).starts_with(name))
        .unwrap_or_else(|| panic!("no {name} in {items:#?}"));
    text(found, "id")
}

/// A new public address in the network, with one rule per `(name, port, node port)`, its
/// members and a firewall rule per port open to `cidrs`.
fn rules_by_hand(
    sim: &CsSimServer,
    network: &str,
    rules: &[(&str, u16, u16)],
    members: &[String],
    cidrs: &str,
) -> String {
    let ip = run(sim, "associateIpAddress", &[("networkid", network)]);
    let ip_id = text(&ip["ipaddress"], "id");
    for (name, port, node_port) in rules {
        let (port, node_port) = (port.to_string(), node_port.to_string());
        let rule = run(
            sim,
            "createLoadBalancerRule",
            &[
                ("name", name),
                ("publicipid", &ip_id),
                ("publicport", &port),
                ("privateport", &node_port),
                ("algorithm", "roundrobin"),
                ("openfirewall", "false"),
            ],
        );
        let rule_id = text(&rule["loadbalancer"], "id");
        if !members.is_empty() {
            let vms = members.join(",");
            run(
                sim,
                "assignToLoadBalancerRule",
                &[("id", &rule_id), ("virtualmachineids", &vms)],
            );
        }
        run(
            sim,
            "createFirewallRule",
            &[
                ("ipaddressid", &ip_id),
                ("protocol", "tcp"),
                ("startport", &port),
                ("endport", &port),
                ("cidrlist", cidrs),
            ],
        );
    }
    text(&ip["ipaddress"], "ipaddress")
}

/// The cluster's API server, from the kubeconfig CloudStack gives for it.
fn cluster_api(sim: &CsSimServer, cluster_id: &str) -> String {
    let config = run(sim, "getKubernetesClusterConfig", &[("id", cluster_id)]);
    let data = text(&config["clusterconfig"], "configdata");
    data.lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("a server in the kubeconfig")
        .trim()
        .to_string()
}

/// Waits until the account holds a rule the CCM named `a<Service UID>-<suffix>`.
fn wait_for_rule(sim: &CsSimServer, api: &str, suffix: &str) -> Value {
    let started = Instant::now();
    let ccm = |name: &str| name.ends_with(suffix) && name.len() == 32 + suffix.len();
    while started.elapsed() < Duration::from_secs(60) {
        let rules = list(sim, "listLoadBalancerRules", "loadbalancerrule");
        if let Some(rule) = rules.iter().find(|r| ccm(&text(r, "name"))) {
            return rule.clone();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let service = http::get(&format!("{api}/api/v1/namespaces/default/services/shop")).ok();
    panic!("the CCM made no rule *{suffix}; the Service: {service:?}");
}

/// The estate: the CKS cluster `lab` (2 workers on k8s-net); `web-tcp-80` and `web-tcp-443`
/// for web-1 and web-2; `edge-tcp-8443` for the cluster's workers, open to 10.0.0.0/8; the
/// Service `default/shop` and the CCM's rule for it. Returns the cluster's API server and
/// the addresses of the web and edge rules.
fn estate(sim: &CsSimServer) -> (String, String, String) {
    let zone = id_named(&list(sim, "listZones", "zone"), "name", "");
    let offerings = list(sim, "listServiceOfferings", "serviceoffering");
    let offering = id_named(&offerings, "name", "Medium Instance");
    let versions = list(
        sim,
        "listKubernetesSupportedVersions",
        "kubernetessupportedversion",
    );
    let version = id_named(&versions, "semanticversion", "1.30.");
    let network = id_named(&list(sim, "listNetworks", "network"), "name", "k8s-net");
    let cluster = run(
        sim,
        "createKubernetesCluster",
        &[
            ("name", "lab"),
            ("zoneid", &zone),
            ("kubernetesversionid", &version),
            ("serviceofferingid", &offering),
            ("size", "2"),
            ("networkid", &network),
        ],
    );
    let cluster_id = text(&cluster["kubernetescluster"], "id");
    let vms = list(sim, "listVirtualMachines", "virtualmachine");
    let ids = |prefix: &str| -> Vec<String> {
        vms.iter()
            .filter(|vm| text(vm, "name").starts_with(prefix))
            .map(|vm| text(vm, "id"))
            .collect()
    };
    let web = rules_by_hand(
        sim,
        &network,
        &[("web-tcp-80", 80, 30080), ("web-tcp-443", 443, 30443)],
        &ids("web-"),
        "0.0.0.0/0",
    );
    let workers = ids("lab-node-");
    assert_eq!(workers.len(), 2, "{vms:#?}");
    let edge = rules_by_hand(
        sim,
        &network,
        &[("edge-tcp-8443", 8443, 31443)],
        &workers,
        "10.0.0.0/8",
    );
    let api = cluster_api(sim, &cluster_id);
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "shop", "namespace": "default"},
        "spec": {"type": "LoadBalancer", "selector": {"app": "shop"},
                 "ports": [{"name": "tcp-80", "protocol": "TCP", "port": 80, "targetPort": 80}]}
    });
    http::request("POST", &format!("{api}/api/v1/namespaces/default/services"))
        .json(&service)
        .ok()
        .expect("the Service is created");
    wait_for_rule(sim, &api, "-tcp-80");
    (api, web, edge)
}

/// Every command the simulator answered since its counters were reset, by name.
fn commands(sim: &CsSimServer) -> Vec<String> {
    let root = sim.base_url.trim_end_matches("/client/api");
    let body = http::get(&format!("{root}/_sim/requests"))
        .ok()
        .expect("request counters");
    let counts: Value = serde_json::from_str(&body).expect("JSON");
    counts["by_command"]
        .as_object()
        .expect("by_command")
        .keys()
        .cloned()
        .collect()
}

fn reset_commands(sim: &CsSimServer) {
    let root = sim.base_url.trim_end_matches("/client/api");
    http::request("POST", &format!("{root}/_sim/requests/reset"))
        .ok()
        .expect("reset");
}

fn service_version(api: &str) -> String {
    let body = http::get(&format!("{api}/api/v1/namespaces/default/services/shop"))
        .ok()
        .expect("the Service");
    let service: Value = serde_json::from_str(&body).expect("JSON");
    text(&service["metadata"], "resourceVersion")
}

#[test]
fn cs_an_estate_made_out_of_band_is_discovered_adopted_and_then_plans_nothing() {
    let project = CsProject::new();
    let sim = CsSimServer::start(&project.project.path().join("cloudstack.json"));
    let (api, web, edge) = estate(&sim);
    project.config_served(&sim.base_url, "");

    // discover, as text and as JSON (each object judged as the import judges it, from what
    // the import reads: a rule's instances too).
    let out = project.run(&["discover"]);
    assert_eq!(out.code, 0, "{out:?}");
    for line in [
        "cluster.lab",
        "load-balancer.web",
        "load-balancer.edge",
        "load-balancer.shop",
        "CloudStack CCM",
        "Service default/shop in cluster.lab",
    ] {
        assert!(out.stdout.contains(line), "{line} missing:\n{out:?}");
    }
    let out = project.run(&["discover", "--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let found = out.json();
    let objects = found["unmanaged"].as_array().expect("unmanaged");
    let object = |address: &str| {
        objects
            .iter()
            .find(|o| o["address"] == address)
            .unwrap_or_else(|| panic!("no {address}: {found:#}"))
            .clone()
    };
    assert_eq!(objects.len(), 4, "{found:#}");
    assert_eq!(object("cluster.lab")["made_by"]["by"], "unknown");
    assert_eq!(object("cluster.lab")["kind"], "cluster");
    let web_lb = object("load-balancer.web");
    assert_eq!(web_lb["made_by"]["by"], "unknown");
    assert!(text(&web_lb, "summary").starts_with(&web), "{web_lb:#}");
    // k8s-net holds web-1 and web-2 beside the cluster: which cluster rules there serve is
    // known only from their members, which discovery does not read.
    assert_eq!(object("load-balancer.edge")["cluster"], Value::Null);
    let shop = object("load-balancer.shop");
    assert_eq!(shop["made_by"]["by"], "controller", "{shop:#}");
    assert_eq!(shop["made_by"]["name"], "CloudStack CCM");
    assert_eq!(shop["service"]["service"], "default/shop");
    assert_eq!(shop["service"]["cluster"], "cluster.lab");
    assert!(objects.iter().all(|o| o["importable"] == true), "{found:#}");

    // import --generate-config --all: one file, every object adopted.
    let file = project.project.path().join("adopted.toml");
    let out = project.run(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let adopted = std::fs::read_to_string(&file).expect("the generated file");
    for table in [
        "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\n",
        "workers = 2\nservice-offering = \"Medium Instance\"\nnetwork = \"k8s-net\"\n",
        &format!("[load-balancer.web]\nprovider = \"cloudstack\"\npublic-ip = \"{web}\"\nmembers = [\"web-1\", \"web-2\"]\n"),
        &format!("[load-balancer.edge]\nprovider = \"cloudstack\"\npublic-ip = \"{edge}\"\ncluster = \"lab\"\nfirewall-cidrs = [\"10.0.0.0/8\"]\n"),
        "[load-balancer.shop]\nprovider = \"cloudstack\"\nmode = \"ccm\"\nservice = \"default/shop\"\ncluster = \"lab\"\nfirewall-cidrs = []\n",
    ] {
        assert!(adopted.contains(table), "{table} missing:\n{adopted}");
    }
    let listed = project.run(&["state", "list"]);
    for address in [
        "cluster.lab",
        "load-balancer.web",
        "load-balancer.edge",
        "load-balancer.shop",
    ] {
        assert!(listed.stdout.contains(address), "{listed:?}");
    }

    // The next plan is empty; an apply writes nothing, to the cloud or to the Service.
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "{out:?}\n{adopted}");
    let out = project.run(&["discover", "--format", "json"]);
    assert_eq!(out.json()["unmanaged"], json!([]), "{out:?}");
    let before = service_version(&api);
    reset_commands(&sim);
    let out = project.run(&["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let read_only = ["list", "get", "query"];
    let writes: Vec<String> = commands(&sim)
        .into_iter()
        .filter(|c| !read_only.iter().any(|r| c.starts_with(r)))
        .collect();
    assert_eq!(writes, Vec::<String>::new(), "{out:?}");
    assert_eq!(service_version(&api), before, "the Service was not written");
    sim.terminate();
}

#[test]
fn cs_a_load_balancer_whose_state_was_lost_is_skyplans_and_what_the_config_cannot_say_is_refused() {
    let project = CsProject::new();
    let sim = CsSimServer::start(&project.project.path().join("cloudstack.json"));
    let old = "[load-balancer.old]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n\
               members = [\"web-1\", \"web-2\"]\nalgorithm = \"source\"\n\n\
               [[load-balancer.old.ports]]\nport = 80\nnode-port = 30080\n";
    project.config_served(&sim.base_url, old);
    project.apply_converges();
    // The state is lost and the table removed: the tagged IP and rule are left.
    let out = project.run(&["state", "rm", "load-balancer.old"]);
    assert_eq!(out.code, 0, "{out:?}");
    project.config_served(&sim.base_url, "");
    // Rules made by hand whose algorithms differ: the config gives a load balancer one.
    let network = id_named(&list(&sim, "listNetworks", "network"), "name", "k8s-net");
    let mixed = rules_by_hand(
        &sim,
        &network,
        &[("mixed-tcp-80", 80, 30080), ("mixed-tcp-81", 81, 30081)],
        &[],
        "0.0.0.0/0",
    );
    let rules = list(&sim, "listLoadBalancerRules", "loadbalancerrule");
    let second = id_named(&rules, "name", "mixed-tcp-81");
    run(
        &sim,
        "updateLoadBalancerRule",
        &[("id", &second), ("algorithm", "source")],
    );

    let out = project.run(&["discover", "--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let found = out.json();
    let objects = found["unmanaged"].as_array().expect("unmanaged");
    assert_eq!(objects.len(), 2, "{found:#}");
    let lost = objects
        .iter()
        .find(|o| o["address"] == "load-balancer.old")
        .unwrap_or_else(|| panic!("{found:#}"));
    assert_eq!(lost["made_by"]["by"], "skyplan", "{lost:#}");
    assert_eq!(lost["made_by"]["name"], "load-balancer.old", "{lost:#}");
    // Judged as the import judges it: the rules whose algorithms differ are listed not
    // importable, saying why; the import refuses them for that reason.
    let refused = objects
        .iter()
        .find(|o| o["address"] != "load-balancer.old")
        .unwrap_or_else(|| panic!("{found:#}"));
    assert_eq!(refused["importable"], false, "{refused:#}");
    let why = refused["why_not_importable"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("algorithm: rule mixed-tcp-80 has \"roundrobin\""),
        "{refused:#}"
    );

    let file = project.project.path().join("adopted.toml");
    let out = project.run(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(out.code, 1, "a refusal: {out:?}");
    assert!(out.stderr.contains(why), "{out:?}");
    let adopted = std::fs::read_to_string(&file).expect("the generated file");
    assert!(adopted.contains("[load-balancer.old]"), "{adopted}");
    assert!(!adopted.contains(&mixed), "{adopted}");
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "{out:?}\n{adopted}");
    sim.terminate();
}

/// A served account with one rule made by hand, `web-tcp-80` (round robin) on a new public IP
/// to web-1: the project, the simulator and the address.
fn web_rule_by_hand() -> (CsProject, CsSimServer, String) {
    let project = CsProject::new();
    let sim = CsSimServer::start(&project.project.path().join("cloudstack.json"));
    let network = id_named(&list(&sim, "listNetworks", "network"), "name", "k8s-net");
    let vms = list(&sim, "listVirtualMachines", "virtualmachine");
    let web_1 = id_named(&vms, "name", "web-1");
    let address = rules_by_hand(
        &sim,
        &network,
        &[("web-tcp-80", 80, 30080)],
        &[web_1],
        "0.0.0.0/0",
    );
    (project, sim, address)
}

#[test]
fn cs_import_records_what_the_cloud_holds_so_drift_is_quiet_and_the_plan_shows_the_config() {
    let (project, sim, address) = web_rule_by_hand();
    // Made by hand with round robin; the config asks for source.
    project.config_served(
        &sim.base_url,
        &format!(
            "[load-balancer.web]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\npublic-ip = \"{address}\"\n\
             members = [\"web-1\"]\nalgorithm = \"source\"\n\n\
             [[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n"
        ),
    );

    let out = project.run(&["import", "load-balancer.web", &address]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = project.run(&["drift"]);
    assert_eq!(
        out.code, 0,
        "nothing changed behind skyplan's back since the import: {out:?}"
    );
    let plan = project.plan(&[]);
    let web = crate::cloudstack::support::change(&plan, "load-balancer.web");
    assert!(
        crate::cloudstack::support::paths(web)
            .iter()
            .any(|p| p.ends_with("algorithm")),
        "the config's algorithm is a change: {web:#}"
    );
    project.apply_ok();
    let out = project.run(&["drift"]);
    assert_eq!(out.code, 0, "drift is quiet once applied: {out:?}");
    sim.terminate();
}

#[test]
fn cs_an_imported_load_balancer_is_found_again_after_a_lost_state() {
    let (project, sim, address) = web_rule_by_hand();
    let web = |public_ip: &str| {
        format!(
            "[load-balancer.web]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n{public_ip}\
             members = [\"web-1\"]\n\n[[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n"
        )
    };
    // public-ip = "auto" finds an address only by skyplan's tag, which this one lacks: after
    // a lost state the next plan would associate another, so the import says what to write.
    project.config_served(&sim.base_url, &web(""));
    let out = project.run(&["import", "load-balancer.web", &address]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("public-ip: \"auto\"")
            && out
                .stderr
                .contains(&format!("write public-ip = \"{address}\" to import it")),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("skyplan.toml:"),
        "at the table: {out:?}"
    );

    project.config_served(&sim.base_url, &web(&format!("public-ip = \"{address}\"\n")));
    let out = project.run(&["import", "load-balancer.web", &address]);
    assert_eq!(out.code, 0, "{out:?}");
    let ips = || list(&sim, "listPublicIpAddresses", "publicipaddress").len();
    let before = ips();
    let out = project.run(&["state", "rm", "load-balancer.web"]);
    assert_eq!(out.code, 0, "{out:?}");
    let plan = project.plan(&[]);
    let change = crate::cloudstack::support::change(&plan, "load-balancer.web");
    assert_eq!(
        change["action"], "no-op",
        "found again by its address: {plan:#}"
    );
    project.apply_ok();
    assert_eq!(ips(), before, "no second address");
    sim.terminate();
}
