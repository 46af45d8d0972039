//! One test per row of impact.md's PhoenixNAP table on the embedded default: skyplan makes the
//! block the way the PhoenixNAP CCM does, the simulated CCM adopts it, and each change is
//! planned with its class and then shows exactly that effect in the simulated cloud.

use serde_json::{json, Value};

use crate::phoenixnap::support::{
    api_change, config, project_with_service, tags, third_address, with_cloud, USAGE,
};
use crate::support::kube_sim::with_cluster;
use crate::support::Project;

/// A project whose Service has its block, applied and adopted by the CCM; returns the block.
fn applied() -> (Project, Value) {
    let project = project_with_service();
    let apply = project.apply(&[]);
    assert_eq!(apply.code, 0, "{apply:?}");
    let blocks = with_cloud(&project, |cloud| cloud.blocks());
    assert_eq!(blocks.len(), 1, "one block: {blocks:#?}");
    // A second run starts the embedded CCM again, which reconciles the Service first.
    let again = api_change(&project.plan(&[]));
    assert_eq!(again["action"], "no-op", "{again:#}");
    (project, blocks[0].clone())
}

fn block_now(project: &Project) -> Vec<Value> {
    with_cloud(project, |cloud| cloud.blocks())
}

fn paths(change: &Value) -> Vec<String> {
    change["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn service_added_makes_the_ccm_s_block_and_the_third_address() {
    let project = project_with_service();
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["action"], "create", "{change:#}");
    assert_eq!(change["impact"], "none");
    let (project, block) = {
        let apply = project.apply(&[]);
        assert_eq!(apply.code, 0, "{apply:?}");
        let blocks = block_now(&project);
        assert_eq!(blocks.len(), 1, "{blocks:#?}");
        (project, blocks[0].clone())
    };
    let uid = with_cluster(&project, |kube| {
        let namespace = get_json(&format!("{}/api/v1/namespaces/kube-system", kube.url));
        namespace["metadata"]["uid"].as_str().unwrap().to_string()
    });
    assert_eq!(
        tags(&block),
        [
            format!("cluster={uid}"),
            "serviceName=api".into(),
            "serviceNamespace=default".into(),
            format!("usage={USAGE}"),
        ]
    );
    assert_eq!(block["cidrBlockSize"], "/29");
    assert_eq!(block["status"], "assigned");
    let network = with_cloud(&project, |cloud| cloud.network("k8s-public"));
    assert_eq!(block["assignedResourceId"], network["id"]);
    let address = third_address(block["cidr"].as_str().unwrap());
    // The CCM (running during this plan) adopts the block: the Service's status carries it.
    assert_eq!(api_change(&project.plan(&[]))["action"], "no-op");
    let service = with_cluster(&project, |kube| kube.service("api"));
    assert_eq!(service["spec"]["type"], "LoadBalancer");
    assert_eq!(service["spec"]["loadBalancerIP"], address.as_str());
    assert_eq!(
        service["status"]["loadBalancer"]["ingress"][0]["ip"],
        address.as_str(),
        "the CCM adopted the block: {service:#}"
    );
    assert_eq!(block_now(&project).len(), 1, "the CCM made no second block");
}

fn get_json(url: &str) -> Value {
    serde_json::from_str(&crate::support::http::get(url).ok().expect("GET")).expect("JSON")
}

#[test]
fn ports_selector_annotations_traffic_policy_and_nodes_change_nothing_on_phoenixnap() {
    let (project, block) = applied();
    with_cluster(&project, |kube| {
        kube.patch_service(
            "api",
            json!({
                "metadata": {"annotations": {"phoenixnap.com/ip-location": "ASH"}},
                "spec": {"ports": [{"name": "p443", "port": 443, "targetPort": 8443}],
                          "selector": {"app": "other"}, "externalTrafficPolicy": "Local",
                          "loadBalancerSourceRanges": ["192.0.2.0/24"]},
            }),
        );
        // A node joins: the CCM's UpdateLoadBalancer is kube-vip's no-op.
        let node = json!({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": "node-4"}, "spec": {"providerID": "phoenixnap://elsewhere"}});
        let url = format!("{}/api/v1/nodes", kube.url);
        crate::support::http::request("POST", &url)
            .json(&node)
            .ok()
            .expect("POST node");
    });
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["action"], "no-op", "{change:#}");
    let after = block_now(&project);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0]["id"], block["id"]);
    assert_eq!(after[0]["cidr"], block["cidr"]);
}

#[test]
fn a_cleared_address_comes_back_the_same() {
    let (project, block) = applied();
    let address = third_address(block["cidr"].as_str().unwrap());
    let clear = || {
        with_cluster(&project, |kube| {
            kube.patch_service("api", json!({"spec": {"loadBalancerIP": null}}))
        })
    };
    // With the controller off, skyplan sees the cleared address and writes it back.
    clear();
    let without_ccm = |args: &[&str]| {
        let mut command = project.command(args);
        command.env("SKYPLAN_SIM_PNAP_CCM", "off");
        crate::support::run(&mut command)
    };
    let plan = without_ccm(&["plan", "--json"]);
    let change = api_change(&plan.json());
    assert_eq!(change["impact"], "minimal", "{change:#}");
    assert_eq!(paths(&change), ["service.loadBalancerIP"]);
    let apply = without_ccm(&["apply", "--auto-approve"]);
    assert_eq!(apply.code, 0, "{apply:?}");
    let service = with_cluster(&project, |kube| kube.service("api"));
    assert_eq!(service["spec"]["loadBalancerIP"], address.as_str());
    // With the controller on, it puts the same address back itself (the prediction's reason),
    // here after a full replace that dropped the field.
    with_cluster(&project, |kube| {
        kube.replace_service_without_address("api");
        assert!(kube.service("api")["spec"]["loadBalancerIP"].is_null());
    });
    assert_eq!(api_change(&project.plan(&[]))["action"], "no-op");
    let service = with_cluster(&project, |kube| kube.service("api"));
    assert_eq!(service["spec"]["loadBalancerIP"], address.as_str());
    let blocks = block_now(&project);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0]["id"], block["id"]);
}

/// impact.md's deletion rule: the address is gone for good, so a load balancer removed from
/// the config is refused unless named with --allow-delete; then released in the CCM's order.
#[test]
fn removing_the_load_balancer_is_refused_unless_allowed_then_released_in_the_ccm_s_order() {
    let (project, block) = applied();
    project.config(config("").split("[load-balancer.api]").next().unwrap());
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["action"], "delete", "{change:#}");
    assert_eq!(change["impact"], "forbidden", "{change:#}");
    assert!(
        change["attributes"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("--allow-delete load-balancer.api"),
        "{change:#}"
    );
    let refused = project.apply(&[]);
    assert_eq!(refused.code, 1, "{refused:?}");
    let blocks = block_now(&project);
    assert_eq!(blocks.len(), 1, "nothing released: {blocks:#?}");
    assert_eq!(blocks[0]["id"], block["id"]);
    assert!(!tags(&blocks[0]).iter().any(|t| t.starts_with("delete=")));
    let service = with_cluster(&project, |kube| kube.service("api"));
    assert_eq!(service["spec"]["type"], "LoadBalancer", "{service:#}");

    let allowed = api_change(&project.plan(&["--allow-delete", "load-balancer.api"]));
    assert_eq!(allowed["action"], "delete", "{allowed:#}");
    assert_eq!(
        allowed["impact"], "forbidden",
        "the address is lost: {allowed:#}"
    );
    let apply = project.apply(&["--allow-delete", "load-balancer.api"]);
    assert_eq!(apply.code, 0, "{apply:?}");
    assert!(block_now(&project).is_empty(), "the block is deleted");
    let service = with_cluster(&project, |kube| kube.service("api"));
    assert_eq!(service["spec"]["type"], "ClusterIP");
    assert!(service["spec"]["loadBalancerIP"].is_null(), "{service:#}");
    assert_eq!(project.run(&["state", "list"]).stdout, "cluster.prod\n");
}

#[test]
fn a_renamed_service_gets_a_new_block_and_address() {
    let (project, block) = applied();
    with_cluster(&project, |kube| kube.create_service("web", &[80]));
    project.config(&config("").replace("default/api", "default/web"));
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["impact"], "pool-recreate", "{change:#}");
    assert_eq!(change["action"], "replace");
    let apply = project.apply(&[]);
    assert_eq!(apply.code, 0, "{apply:?}");
    let blocks = block_now(&project);
    assert_eq!(blocks.len(), 1, "{blocks:#?}");
    assert_ne!(blocks[0]["id"], block["id"]);
    assert!(tags(&blocks[0]).contains(&"serviceName=web".to_string()));
    let (old, new) = with_cluster(&project, |kube| (kube.service("api"), kube.service("web")));
    assert!(old["spec"]["loadBalancerIP"].is_null());
    assert_eq!(
        new["spec"]["loadBalancerIP"],
        third_address(blocks[0]["cidr"].as_str().unwrap()).as_str()
    );
}

#[test]
fn a_service_no_longer_of_type_load_balancer_is_released_and_made_again() {
    let (project, block) = applied();
    with_cluster(&project, |kube| {
        kube.patch_service(
            "api",
            json!({"spec": {"type": "ClusterIP", "loadBalancerIP": null}}),
        )
    });
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["impact"], "pool-recreate", "{change:#}");
    let apply = project.apply(&[]);
    assert_eq!(apply.code, 0, "{apply:?}");
    let active: Vec<Value> = block_now(&project)
        .into_iter()
        .filter(|b| !tags(b).iter().any(|t| t.starts_with("delete=")))
        .collect();
    assert_eq!(active.len(), 1, "{active:#?}");
    assert_ne!(active[0]["id"], block["id"], "a new block");
    assert_eq!(api_change(&project.plan(&[]))["action"], "no-op");
}

/// A forbidden row: refused with its reason, nothing sent, the block as it was.
fn assert_refused(project: &Project, path: &str, before: &[Value]) {
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["impact"], "forbidden", "{change:#}");
    assert!(paths(&change).contains(&path.to_string()), "{change:#}");
    let apply = project.apply(&[]);
    assert_ne!(apply.code, 0, "apply refuses: {apply:?}");
    let after = block_now(project);
    let ids = |blocks: &[Value]| blocks.iter().map(|b| b["id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(before), "nothing changed");
}

#[test]
fn another_location_is_forbidden() {
    let (project, block) = applied();
    project.config(&config("location = \"ASH\"\n"));
    assert_refused(&project, "location", &[block]);
}

#[test]
fn another_public_network_is_forbidden() {
    let (project, block) = applied();
    with_cloud(&project, |cloud| {
        let body = json!({"name": "second", "location": "PHX", "vlanId": 20});
        cloud
            .send("POST", "/networks/v1/public-networks", Some(body))
            .expect("POST network")
    });
    project.config(&config("").replace("\"k8s-public\"", "\"second\""));
    assert_refused(&project, "public-network", &[block]);
}

#[test]
fn an_address_set_by_hand_is_forbidden() {
    let (project, block) = applied();
    with_cluster(&project, |kube| {
        kube.patch_service("api", json!({"spec": {"loadBalancerIP": "203.0.113.77"}}))
    });
    let change = api_change(&project.plan(&[]));
    // The CCM errors forever on it and never rewrites it, so skyplan sees it too.
    assert_eq!(change["impact"], "forbidden", "{change:#}");
    assert_refused(&project, "service.loadBalancerIP", &[block]);
}

#[test]
fn a_block_retagged_by_hand_is_forbidden() {
    let (project, block) = applied();
    let id = block["id"].as_str().unwrap().to_string();
    with_cloud(&project, |cloud| {
        let kept: Vec<Value> = block["tags"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"] != "serviceName")
            .map(|t| json!({"name": t["name"], "value": t["value"]}))
            .collect();
        cloud
            .send(
                "PUT",
                &format!("/ips/v1/ip-blocks/{id}/tags"),
                Some(json!(kept)),
            )
            .expect("PUT tags")
    });
    // As the row says, the CCM (running during this plan) no longer finds the block and makes a
    // second one for the Service, which keeps its old address.
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["impact"], "forbidden", "{change:#}");
    let before = block_now(&project);
    assert_eq!(
        before.len(),
        2,
        "the CCM's orphan beside the re-tagged block: {before:#?}"
    );
    let service = with_cluster(&project, |kube| kube.service("api"));
    assert_eq!(
        service["spec"]["loadBalancerIP"],
        third_address(block["cidr"].as_str().unwrap()).as_str()
    );
    assert_refused(&project, "block.tags", &before);
}

#[test]
fn a_block_detached_by_hand_is_forbidden() {
    let (project, block) = applied();
    let id = block["id"].as_str().unwrap().to_string();
    let network = block["assignedResourceId"].as_str().unwrap().to_string();
    with_cloud(&project, |cloud| {
        cloud
            .send(
                "DELETE",
                &format!("/networks/v1/public-networks/{network}/ip-blocks/{id}"),
                None,
            )
            .expect("detach")
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    let before = block_now(&project);
    assert_refused(&project, "block.public-network", &before);
}

#[test]
fn another_cluster_gets_a_new_block_and_the_old_one_is_released() {
    let (project, block) = applied();
    let second = config("")
        .replace("cluster = \"prod\"\nservice", "cluster = \"prod2\"\nservice")
        .replace(
            "[load-balancer.api]",
            "[cluster.prod2]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n[load-balancer.api]",
        );
    project.config(second.split("[load-balancer.api]").next().unwrap());
    // A run that makes the second embedded cluster; drift says it was never applied.
    let drift = project.run(&["drift"]);
    assert_eq!(drift.code, 2, "{drift:?}");
    assert!(
        drift.stdout.contains("+ cluster.prod2") && drift.stdout.contains("1 not applied"),
        "{drift:?}"
    );
    let world = project.path().join("state/embedded/kubernetes/prod2.json");
    let sim = crate::support::kube_sim::KubeSim::start_on(&world);
    crate::support::kube_sim::Kube {
        url: sim.url.clone(),
    }
    .create_service("api", &[80]);
    sim.terminate();
    project.config(&second);
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["impact"], "pool-recreate", "{change:#}");
    assert_eq!(paths(&change), ["cluster"]);
    let apply = project.apply(&[]);
    assert_eq!(apply.code, 0, "{apply:?}");
    let blocks = block_now(&project);
    assert_eq!(blocks.len(), 1, "the old block is released: {blocks:#?}");
    assert_ne!(blocks[0]["id"], block["id"]);
}

#[test]
fn a_service_deleted_from_the_cluster_is_drift_and_the_ccm_releases_its_block() {
    let (project, block) = applied();
    with_cluster(&project, |kube| {
        let url = format!("{}/api/v1/namespaces/default/services/api", kube.url);
        crate::support::http::request("DELETE", &url)
            .ok()
            .expect("DELETE service")
    });
    let drift = project.run(&["drift", "--format", "json"]);
    assert_eq!(drift.code, 2, "{drift:?}");
    assert!(drift.stdout.contains("pool-recreate"), "{drift:?}");
    assert!(
        drift.stdout.contains("Service deleted from the cluster"),
        "{drift:?}"
    );
    // The CCM (running during drift) released the block as its code does: the Service's
    // tags replaced by delete=true; its reaper detaches and deletes it.
    let blocks = block_now(&project);
    let released = blocks.iter().find(|b| b["id"] == block["id"]);
    if let Some(released) = released {
        let tags = tags(released);
        assert!(tags.contains(&"delete=true".to_string()), "{tags:?}");
        assert!(
            !tags.iter().any(|t| t.starts_with("serviceName=")),
            "{tags:?}"
        );
    }
    let plan = project.run(&["plan"]);
    assert_eq!(plan.code, 1, "plan needs the Service: {plan:?}");
    assert!(
        plan.stderr.contains("Service default/api does not exist"),
        "{plan:?}"
    );
}

#[test]
fn several_services_applied_in_parallel_wait_for_the_busy_network() {
    let project = project_with_service();
    let names = ["b", "c", "d"];
    with_cluster(&project, |kube| {
        for name in names {
            kube.create_service(name, &[80]);
        }
    });
    let mut text = config("");
    for name in names {
        text.push_str(&format!(
            "\n[load-balancer.{name}]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
             service = \"default/{name}\"\npublic-network = \"k8s-public\"\n"
        ));
    }
    project.config(&text);
    // The network is BUSY while one block is attached: the others' attaches get 409 and wait.
    let mut command = project.command(&["apply", "--auto-approve", "--parallelism", "4"]);
    command.env("SKYPLAN_SIM_PNAP_TRANSITION_MS", "300");
    let apply = crate::support::run(&mut command);
    assert_eq!(apply.code, 0, "{apply:?}");
    let blocks = block_now(&project);
    assert_eq!(blocks.len(), 4, "{blocks:#?}");
    assert!(
        blocks.iter().all(|b| b["status"] == "assigned"),
        "{blocks:#?}"
    );
    assert_eq!(project.run(&["plan", "--detailed-exitcode"]).code, 0);
}

#[test]
fn an_unknown_public_network_is_a_plan_error_at_its_key_listing_the_networks() {
    let project = project_with_service();
    project.config(&config("").replace("\"k8s-public\"", "\"k8s-pub\""));
    let plan = project.run(&["plan"]);
    assert_eq!(plan.code, 1, "{plan:?}");
    // public-network is the key on line 13 of the config.
    assert!(
        plan.stderr.contains("skyplan.toml:13:1: load-balancer.api: public network `k8s-pub` does not exist; public networks: k8s-public ("),
        "{plan:?}"
    );
    assert!(block_now(&project).is_empty(), "nothing was made");
}

#[test]
fn a_block_deleted_by_hand_is_forbidden() {
    let (project, block) = applied();
    let id = block["id"].as_str().unwrap().to_string();
    let network = block["assignedResourceId"].as_str().unwrap().to_string();
    with_cloud(&project, |cloud| {
        let detach = format!("/networks/v1/public-networks/{network}/ip-blocks/{id}");
        cloud.send("DELETE", &detach, None).expect("detach");
        for _ in 0..50 {
            if cloud.get(&format!("/ips/v1/ip-blocks/{id}"))["status"] == "unassigned" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        cloud
            .send("DELETE", &format!("/ips/v1/ip-blocks/{id}"), None)
            .expect("delete block");
        // Someone else's block takes the freed range, so the CCM's new one has other addresses
        // (the simulator hands out the lowest free range first).
        let body = json!({"location": "PHX", "cidrBlockSize": "/29"});
        cloud
            .send("POST", "/ips/v1/ip-blocks", Some(body))
            .expect("another block")
    });
    // As the row says, the CCM (running during this plan) makes a new block but keeps the old
    // address on the Service.
    let change = api_change(&project.plan(&[]));
    assert_eq!(change["impact"], "forbidden", "{change:#}");
    let service = with_cluster(&project, |kube| kube.service("api"));
    assert_eq!(
        service["spec"]["loadBalancerIP"],
        third_address(block["cidr"].as_str().unwrap()).as_str()
    );
    let before = block_now(&project);
    assert_eq!(before.len(), 1, "the CCM's new block: {before:#?}");
    assert_ne!(before[0]["id"], block["id"]);
    assert_refused(&project, "block", &before);
}
