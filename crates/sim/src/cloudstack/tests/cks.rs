//! CKS clusters: the lifecycle and every refusal, delivered as failed jobs (530).

use std::time::Duration;

use serde_json::Value;

use super::{id, TestSim};
use crate::cloudstack::SimOptions;

struct Catalog {
    zone: String,
    small: String,
    medium: String,
    v1_28: String,
    network: String,
}

async fn catalog(sim: &TestSim) -> Catalog {
    let zones = sim.list("listZones", "zone", &[]).await;
    Catalog {
        zone: id(&zones[0]),
        small: sim.offering("Small Instance").await,
        medium: sim.offering("Medium Instance").await,
        v1_28: sim.version("1.28.15").await,
        network: sim.network().await,
    }
}

/// The create parameters for a cluster `name` of `size` workers on Small, version 1.28.
fn create_params<'a>(c: &'a Catalog, name: &'a str, size: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("name", name),
        ("zoneid", &c.zone),
        ("kubernetesversionid", &c.v1_28),
        ("serviceofferingid", &c.small),
        ("size", size),
    ]
}

async fn running_cluster(sim: &TestSim, c: &Catalog, name: &str, size: &str) -> Value {
    let mut params = create_params(c, name, size);
    params.push(("networkid", &c.network));
    let result = sim.done("createKubernetesCluster", &params).await;
    result["kubernetescluster"].clone()
}

async fn cluster(sim: &TestSim, id: &str) -> Value {
    let clusters = sim
        .list("listKubernetesClusters", "kubernetescluster", &[("id", id)])
        .await;
    clusters[0].clone()
}

async fn create_error(sim: &TestSim, params: &[(&str, &str)]) -> String {
    sim.job_error("createKubernetesCluster", params).await
}

#[tokio::test]
async fn a_cluster_without_a_network_gets_its_own_and_runs() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let mut params = create_params(&c, "prod", "2");
    params.extend([
        ("keypair", "ops"),
        ("controlnodes", "1"),
        ("etcdnodes", "1"),
    ]);
    let started = sim.ok("createKubernetesCluster", &params).await;
    let cluster_id = started["id"].as_str().unwrap().to_owned();
    // Listed while its job runs: not yet Running (how far it got depends on the machine's load).
    let state = cluster(&sim, &cluster_id).await["state"].clone();
    assert!(
        matches!(state.as_str(), Some("Created" | "Starting")),
        "{state}"
    );
    let job = sim.wait(started["jobid"].as_str().unwrap()).await;
    assert_eq!(job["jobstatus"], 1, "{job}");
    let listed = cluster(&sim, &cluster_id).await;
    assert_eq!(listed["state"], "Running");
    assert_eq!(listed["size"], 2);
    assert_eq!(listed["controlnodes"], 1);
    assert_eq!(listed["etcdnodes"], 1);
    assert_eq!(listed["associatednetworkname"], "prod-network");
    assert_eq!(listed["serviceofferingname"], "Small Instance");
    assert_eq!(listed["kubernetesversionname"], "v1.28.15");
    assert_eq!(listed["keypair"], "ops");
    let vms = listed["virtualmachines"].as_array().unwrap();
    assert_eq!(vms.len(), 4);
    let names: Vec<&str> = vms.iter().map(|vm| vm["name"].as_str().unwrap()).collect();
    assert!(names[0].starts_with("prod-control-") && names[0].len() == "prod-control-".len() + 6);
    assert!(names[1].starts_with("prod-etcd-"));
    assert!(names[2].starts_with("prod-node-") && names[3].starts_with("prod-node-"));
    let ip = listed["ipaddress"].as_str().unwrap();
    assert_eq!(listed["endpoint"], format!("https://{ip}:6443/"));
    let vm = sim
        .list(
            "listVirtualMachines",
            "virtualmachine",
            &[("name", names[2])],
        )
        .await;
    assert_eq!(vm[0]["state"], "Running");
    assert_eq!(vm[0]["hypervisor"], "KVM");
    assert_eq!(vm[0]["nic"][0]["networkid"], listed["networkid"]);
    let config = sim
        .ok("getKubernetesClusterConfig", &[("id", &cluster_id)])
        .await;
    let kubeconfig = config["clusterconfig"]["configdata"].as_str().unwrap();
    assert!(kubeconfig.contains(&format!("server: https://{ip}:6443")));
    assert!(kubeconfig.contains("name: prod"));
}

#[tokio::test]
async fn create_refusals_fail_the_job() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let tiny = sim.offering("Tiny Instance").await;
    let custom = sim.offering("Custom Instance").await;
    let disabled = sim.version("1.31.1").await;
    let with = |extra: &[(&'static str, &str)]| {
        let mut params: Vec<(&str, String)> = create_params(&c, "c", "1")
            .into_iter()
            .map(|(k, v)| (k, v.to_owned()))
            .collect();
        for (k, v) in extra {
            params.retain(|(key, _)| key != k);
            params.push((k, v.to_string()));
        }
        params
    };
    let cases = [
        (
            with(&[("serviceofferingid", &tiny)]),
            "needs minimum 2 vCPUs and 2048 MB RAM",
        ),
        (
            with(&[("serviceofferingid", &custom)]),
            "Custom service offerings are not supported",
        ),
        (with(&[("size", "0")]), "Invalid cluster size: 0"),
        (
            with(&[("size", "10")]),
            "Maximum cluster size can not exceed 10",
        ),
        (
            with(&[("kubernetesversionid", &disabled)]),
            "is in Disabled state",
        ),
        (
            with(&[("keypair", "nope")]),
            "SSH key pair with name: nope was not found",
        ),
    ];
    for (params, expected) in cases {
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let text = create_error(&sim, &params).await;
        assert!(text.contains(expected), "{expected}: {text}");
    }
    let missing = sim.call("createKubernetesCluster", &[("name", "x")]).await;
    assert_eq!(missing.status, 431);
    let bad_id = sim
        .call(
            "createKubernetesCluster",
            &with(&[("zoneid", "nope")])
                .iter()
                .map(|(k, v)| (*k, v.as_str()))
                .collect::<Vec<_>>(),
        )
        .await;
    assert_eq!(bad_id.status, 431);
    running_cluster(&sim, &c, "twice", "1").await;
    let text = create_error(&sim, &create_params(&c, "twice", "1")).await;
    assert!(text.contains("already exists"), "{text}");
    assert!(sim
        .list(
            "listKubernetesClusters",
            "kubernetescluster",
            &[("keyword", "c")]
        )
        .await
        .iter()
        .all(|c| c["name"] != "c"));
}

#[tokio::test]
async fn scaling_workers_up_and_down_removes_their_lb_mappings() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let cl = running_cluster(&sim, &c, "k", "1").await;
    let cl_id = id(&cl);
    let up = sim
        .done("scaleKubernetesCluster", &[("id", &cl_id), ("size", "3")])
        .await;
    assert_eq!(up["kubernetescluster"]["size"], 3);
    assert_eq!(up["kubernetescluster"]["state"], "Running");
    let vms = up["kubernetescluster"]["virtualmachines"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(vms.len(), 4);
    let ip = id(&sim.new_ip().await);
    let rule = sim
        .done(
            "createLoadBalancerRule",
            &[
                ("name", "r"),
                ("publicipid", &ip),
                ("publicport", "80"),
                ("privateport", "30080"),
                ("algorithm", "roundrobin"),
            ],
        )
        .await;
    let rule_id = id(&rule["loadbalancer"]);
    let workers = format!("{},{},{}", id(&vms[1]), id(&vms[2]), id(&vms[3]));
    sim.done(
        "assignToLoadBalancerRule",
        &[("id", &rule_id), ("virtualmachineids", &workers)],
    )
    .await;
    let down = sim
        .done("scaleKubernetesCluster", &[("id", &cl_id), ("size", "1")])
        .await;
    assert_eq!(down["kubernetescluster"]["size"], 1);
    let members = sim
        .list(
            "listLoadBalancerRuleInstances",
            "loadbalancerruleinstance",
            &[("id", &rule_id)],
        )
        .await;
    assert_eq!(members.len(), 1);
    assert_eq!(members[0]["id"], vms[1]["id"]);
    let gone = sim
        .list(
            "listVirtualMachines",
            "virtualmachine",
            &[("id", &id(&vms[3]))],
        )
        .await;
    assert!(gone.is_empty());
}

#[tokio::test]
async fn scale_refusals_in_the_servers_words() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let cl = id(&running_cluster(&sim, &c, "k", "2").await);
    let tiny = sim.offering("Tiny Instance").await;
    let custom = sim.offering("Custom Instance").await;
    let cases: Vec<(Vec<(&str, &str)>, String)> = vec![
        (vec![], "Kubernetes cluster k cannot be scaled, either service offering or cluster size or nodeids to be removed or autoscaling must be passed".into()),
        (vec![("size", "0")], "Kubernetes cluster : k cannot be scaled for size, 0".into()),
        (vec![("size", "10")], "Maximum cluster size can not exceed 10. Please contact your administrator".into()),
        (vec![("serviceofferingid", &tiny)], "Kubernetes cluster : k cannot be scaled with service offering : Tiny Instance, Kubernetes cluster template(CoreOS) needs minimum 2 vCPUs and 2048 MB RAM".into()),
        (vec![("serviceofferingid", &custom)], "Custom service offerings are not supported for Kubernetes clusters. Kubernetes cluster : k, service offering : Custom Instance".into()),
        (vec![("serviceofferingid", &c.medium)], "Scaling Kubernetes cluster : k failed, scaling Kubernetes cluster with running VMs on hypervisor KVM is not supported!".into()),
        (vec![("autoscalingenabled", "true"), ("size", "3")], "Autoscaling can not be passed along with nodeids or clustersize".into()),
        (vec![("autoscalingenabled", "true")], "Autoscaling requires minsize and maxsize to be passed".into()),
        (vec![("autoscalingenabled", "true"), ("minsize", "0"), ("maxsize", "3")], "Minsize must be at least than 1".into()),
        (vec![("autoscalingenabled", "true"), ("minsize", "3"), ("maxsize", "3")], "Maxsize must be greater than minsize".into()),
        (vec![("autoscalingenabled", "true"), ("minsize", "1"), ("maxsize", "10")], "Maximum cluster size can not exceed 10. Please contact your administrator".into()),
        (vec![("nodeids", "c5000000-0005-4000-8000-000000000001")], "Invalid node ids".into()),
        (vec![("nodeofferings[0].node", "gpu"), ("nodeofferings[0].offering", &c.small)], "The provided value 'gpu' for Node Type is invalid".into()),
    ];
    for (extra, expected) in cases {
        let mut params = vec![("id", cl.as_str())];
        params.extend(extra);
        let text = sim.job_error("scaleKubernetesCluster", &params).await;
        assert_eq!(text, expected);
        assert_eq!(cluster(&sim, &cl).await["state"], "Running", "{expected}");
    }
    let auto = sim
        .done(
            "scaleKubernetesCluster",
            &[
                ("id", &cl),
                ("autoscalingenabled", "true"),
                ("minsize", "1"),
                ("maxsize", "5"),
            ],
        )
        .await;
    assert_eq!(auto["kubernetescluster"]["autoscalingenabled"], true);
    assert_eq!(auto["kubernetescluster"]["maxsize"], 5);
}

#[tokio::test]
async fn offering_changes_need_a_stopped_cluster_on_kvm_and_no_scale_down_while_running() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let mut params = create_params(&c, "k", "1");
    params.push(("serviceofferingid", &c.medium));
    params.retain(|(k, v)| *k != "serviceofferingid" || *v == c.medium);
    let cl = id(&sim.done("createKubernetesCluster", &params).await["kubernetescluster"]);
    let down = sim
        .job_error(
            "scaleKubernetesCluster",
            &[("id", &cl), ("serviceofferingid", &c.small)],
        )
        .await;
    assert_eq!(down, "Kubernetes cluster cannot be scaled down for service offering. Service offering : Small Instance offers lesser resources as compared to service offering : Medium Instance of Kubernetes cluster : k");
    sim.done("stopKubernetesCluster", &[("id", &cl)]).await;
    let stopped = cluster(&sim, &cl).await;
    assert_eq!(stopped["state"], "Stopped");
    assert!(stopped["virtualmachines"]
        .as_array()
        .unwrap()
        .iter()
        .all(|vm| vm["state"] == "Stopped"));
    let size = sim
        .job_error("scaleKubernetesCluster", &[("id", &cl), ("size", "2")])
        .await;
    assert_eq!(size, "Kubernetes cluster : k is in Stopped state");
    let started = sim
        .ok(
            "scaleKubernetesCluster",
            &[("id", &cl), ("serviceofferingid", &c.small)],
        )
        .await;
    assert_eq!(cluster(&sim, &cl).await["state"], "ScalingStoppedCluster");
    let job = sim.wait(started["jobid"].as_str().unwrap()).await;
    assert_eq!(job["jobstatus"], 1, "{job}");
    let scaled = cluster(&sim, &cl).await;
    assert_eq!(scaled["state"], "Stopped");
    assert_eq!(scaled["serviceofferingname"], "Small Instance");
    let node = &scaled["virtualmachines"][1]["id"];
    let vm = sim
        .list(
            "listVirtualMachines",
            "virtualmachine",
            &[("id", node.as_str().unwrap())],
        )
        .await;
    assert_eq!(vm[0]["serviceofferingname"], "Small Instance");
    sim.done("startKubernetesCluster", &[("id", &cl)]).await;
    assert_eq!(cluster(&sim, &cl).await["state"], "Running");
}

#[tokio::test]
async fn size_down_with_an_offering_change_removes_nodes_then_fails_into_alert() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let cl = id(&running_cluster(&sim, &c, "k", "3").await);
    let text = sim
        .job_error(
            "scaleKubernetesCluster",
            &[("id", &cl), ("size", "1"), ("serviceofferingid", &c.medium)],
        )
        .await;
    assert!(text.contains("hypervisor KVM is not supported"), "{text}");
    let after = cluster(&sim, &cl).await;
    assert_eq!(after["state"], "Alert");
    assert_eq!(after["size"], 1);
    assert_eq!(after["virtualmachines"].as_array().unwrap().len(), 2);
    let refused = sim
        .job_error("scaleKubernetesCluster", &[("id", &cl), ("size", "2")])
        .await;
    assert_eq!(
        refused,
        "Kubernetes cluster k is in Alert state and can not be scaled"
    );
}

#[tokio::test]
async fn offering_changes_of_running_vms_work_on_xenserver() {
    let sim = TestSim::with(SimOptions {
        hypervisor: "XenServer".into(),
        ..SimOptions::default()
    })
    .await;
    let c = catalog(&sim).await;
    let cl = id(&running_cluster(&sim, &c, "k", "1").await);
    let scaled = sim
        .done(
            "scaleKubernetesCluster",
            &[("id", &cl), ("serviceofferingid", &c.medium)],
        )
        .await;
    assert_eq!(
        scaled["kubernetescluster"]["serviceofferingname"],
        "Medium Instance"
    );
    assert_eq!(scaled["kubernetescluster"]["state"], "Running");
}

#[tokio::test]
async fn upgrades_go_one_minor_at_a_time_and_never_down() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let cl = id(&running_cluster(&sim, &c, "k", "1").await);
    let v1_30 = sim.version("1.30.5").await;
    let v1_29 = sim.version("1.29.3").await;
    let v1_29_10 = sim.version("1.29.10").await;
    let disabled = sim.version("1.31.1").await;
    let skip = sim
        .job_error(
            "upgradeKubernetesCluster",
            &[("id", &cl), ("kubernetesversionid", &v1_30)],
        )
        .await;
    assert_eq!(skip, "Kubernetes clusters can be upgraded between next minor or patch version releases, current version: 1.28.15, upgrade version: 1.30.5");
    let off = sim
        .job_error(
            "upgradeKubernetesCluster",
            &[("id", &cl), ("kubernetesversionid", &disabled)],
        )
        .await;
    assert!(off.ends_with("for upgrade is in Disabled state"), "{off}");
    sim.done(
        "upgradeKubernetesCluster",
        &[("id", &cl), ("kubernetesversionid", &c.v1_28)],
    )
    .await;
    sim.done(
        "upgradeKubernetesCluster",
        &[("id", &cl), ("kubernetesversionid", &v1_29)],
    )
    .await;
    let patched = sim
        .done(
            "upgradeKubernetesCluster",
            &[("id", &cl), ("kubernetesversionid", &v1_29_10)],
        )
        .await;
    assert_eq!(
        patched["kubernetescluster"]["kubernetesversionname"],
        "v1.29.10"
    );
    let down = sim
        .job_error(
            "upgradeKubernetesCluster",
            &[("id", &cl), ("kubernetesversionid", &c.v1_28)],
        )
        .await;
    assert_eq!(down, "Kubernetes clusters can not be downgraded, current version: 1.29.10, upgrade version: 1.28.15");
    sim.done("stopKubernetesCluster", &[("id", &cl)]).await;
    let stopped = sim
        .job_error(
            "upgradeKubernetesCluster",
            &[("id", &cl), ("kubernetesversionid", &v1_30)],
        )
        .await;
    assert_eq!(stopped, "Kubernetes cluster : k is not in running state");
}

#[tokio::test]
async fn start_and_stop_are_idempotent() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let cl = id(&running_cluster(&sim, &c, "k", "1").await);
    sim.done("startKubernetesCluster", &[("id", &cl)]).await;
    sim.done("stopKubernetesCluster", &[("id", &cl)]).await;
    sim.done("stopKubernetesCluster", &[("id", &cl)]).await;
    assert_eq!(cluster(&sim, &cl).await["state"], "Stopped");
    let cloud = [("clustertype", "CloudManaged")];
    assert_eq!(
        sim.list("listKubernetesClusters", "kubernetescluster", &cloud)
            .await
            .len(),
        1
    );
    let external = [("clustertype", "ExternalManaged")];
    assert!(sim
        .list("listKubernetesClusters", "kubernetescluster", &external)
        .await
        .is_empty());
    let bad = sim
        .call("listKubernetesClusters", &[("clustertype", "Other")])
        .await;
    assert_eq!(bad.status, 431);
}

#[tokio::test]
async fn delete_is_refused_while_creating() {
    let sim = TestSim::with(SimOptions {
        job_time: Duration::from_millis(800),
        ..SimOptions::default()
    })
    .await;
    let c = catalog(&sim).await;
    let mut params = create_params(&c, "slow", "1");
    params.push(("networkid", &c.network));
    let started = sim.ok("createKubernetesCluster", &params).await;
    let cl = started["id"].as_str().unwrap();
    let text = sim
        .job_error("deleteKubernetesCluster", &[("id", cl)])
        .await;
    assert!(
        text.starts_with("Cannot perform delete operation on cluster KubernetesCluster {\"id\":"),
        "{text}"
    );
    assert!(
        text.contains(&format!("\"name\":\"slow\",\"uuid\":\"{cl}\"}} in state: ")),
        "{text}"
    );
}

#[tokio::test]
async fn delete_takes_the_network_only_when_cks_made_it() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let own = id(&running_cluster(&sim, &c, "shared", "1").await);
    let made = sim
        .done("createKubernetesCluster", &create_params(&c, "alone", "1"))
        .await;
    let made_id = id(&made["kubernetescluster"]);
    let made_network = made["kubernetescluster"]["networkid"]
        .as_str()
        .unwrap()
        .to_owned();
    let ip = id(&sim.new_ip().await);
    sim.done(
        "createLoadBalancerRule",
        &[
            ("name", "r"),
            ("publicipid", &ip),
            ("publicport", "80"),
            ("privateport", "30080"),
            ("algorithm", "roundrobin"),
        ],
    )
    .await;
    sim.done("deleteKubernetesCluster", &[("id", &own)]).await;
    assert_eq!(
        sim.list("listLoadBalancerRules", "loadbalancerrule", &[])
            .await
            .len(),
        1
    );
    assert_eq!(sim.list("listNetworks", "network", &[]).await.len(), 2);
    sim.done("deleteKubernetesCluster", &[("id", &made_id)])
        .await;
    let networks = sim.list("listNetworks", "network", &[]).await;
    assert!(networks.iter().all(|n| n["id"] != made_network.as_str()));
    assert!(sim
        .list("listKubernetesClusters", "kubernetescluster", &[])
        .await
        .is_empty());
    let vms = sim.list("listVirtualMachines", "virtualmachine", &[]).await;
    assert_eq!(vms.len(), 2, "only the standalone VMs are left");
    let ips = sim
        .list("listPublicIpAddresses", "publicipaddress", &[])
        .await;
    assert_eq!(
        ips.len(),
        2,
        "k8s-net's source NAT and the associated address"
    );
}

#[tokio::test]
async fn per_role_offerings_make_a_size_only_scale_change_offerings_too() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let mut params = create_params(&c, "k", "1");
    params.extend([
        ("networkid", c.network.as_str()),
        ("nodeofferings[0].node", "worker"),
        ("nodeofferings[0].offering", c.medium.as_str()),
    ]);
    let created = sim.done("createKubernetesCluster", &params).await;
    let cl = &created["kubernetescluster"];
    assert_eq!(cl["workerofferingid"], c.medium.as_str());
    assert_eq!(cl["controlofferingid"], c.small.as_str());
    let worker = cl["virtualmachines"][1]["id"].as_str().unwrap();
    let vm = sim
        .list("listVirtualMachines", "virtualmachine", &[("id", worker)])
        .await;
    assert_eq!(vm[0]["serviceofferingname"], "Medium Instance");
    // The worker's offering differs from the global one: the scale worker "changes" it back,
    // which KVM refuses with the VMs running (CS issue #11994).
    let text = sim
        .job_error("scaleKubernetesCluster", &[("id", &id(cl)), ("size", "2")])
        .await;
    assert!(text.contains("hypervisor KVM is not supported"), "{text}");
    assert_eq!(cluster(&sim, &id(cl)).await["state"], "Running");
}

#[tokio::test]
async fn named_nodes_are_removed() {
    let sim = TestSim::start().await;
    let c = catalog(&sim).await;
    let cl = running_cluster(&sim, &c, "k", "3").await;
    let vms = cl["virtualmachines"].as_array().unwrap().clone();
    let control = id(&vms[0]);
    let refused = sim
        .job_error(
            "scaleKubernetesCluster",
            &[("id", &id(&cl)), ("nodeids", &control)],
        )
        .await;
    assert_eq!(refused, "Can not remove all control nodes from a cluster");
    let with_size = sim
        .job_error(
            "scaleKubernetesCluster",
            &[("id", &id(&cl)), ("nodeids", &id(&vms[2])), ("size", "2")],
        )
        .await;
    assert_eq!(
        with_size,
        "nodeids can not be passed along with clustersize or service offering"
    );
    let done = sim
        .done(
            "scaleKubernetesCluster",
            &[("id", &id(&cl)), ("nodeids", &id(&vms[2]))],
        )
        .await;
    let after = &done["kubernetescluster"];
    assert_eq!(after["size"], 2);
    let left: Vec<&Value> = after["virtualmachines"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert!(left.iter().all(|vm| vm["id"] != vms[2]["id"]));
    assert_eq!(left.len(), 3);
}
