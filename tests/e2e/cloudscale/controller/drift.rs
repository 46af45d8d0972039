//! One reading of each difference: `drift` classifies a difference exactly as `plan` would
//! classify restoring it. The quickstart's case: the controller-mode Service's port renamed
//! back in the cluster (by hand), the CCM rebuilt its pool; restoring the applied port name
//! recreates the pool again — pool-recreate in both, never "none" in drift.

use serde_json::{json, Value};

use crate::cloudscale::controller::{config, shop, HTTP};
use crate::support::kube_sim::with_cluster;
use crate::support::Project;

/// The shop's entry of `drift --format json`.
fn shop_drift(project: &Project) -> Value {
    let out = project.run(&["drift", "--format", "json"]);
    assert_eq!(out.code, 2, "drift present: {out:?}");
    let report = out.json();
    report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == "load-balancer.shop")
        .cloned()
        .unwrap_or_else(|| panic!("no load-balancer.shop in {report:#}"))
}

/// Runs skyplan (whose embedded cluster runs the CCM) until the cloud has `pool`.
fn until_the_ccm_built(project: &Project, pool: &str) {
    for _ in 0..20 {
        if project.world().named("pools", pool).is_some() {
            return;
        }
        project.plan(&[]);
    }
    panic!("the CCM never built pool {pool}");
}

#[test]
fn a_service_reverted_in_the_cluster_drifts_with_the_class_plan_restores_it_with() {
    let project = Project::new();
    project.config(&config("", HTTP));
    project.apply_ok();
    let web = config("", &HTTP.replace("\"http\"", "\"web\""));
    project.config(&web);
    project.apply_ok();
    assert!(project.world().named("pools", "tcp/web").is_some());

    // Someone puts the port's old name back on the Service; the CCM follows it.
    with_cluster(&project, |kube| {
        kube.patch_service(
            "shop",
            json!({"spec": {"ports": [
                {"name": "http", "port": 80, "targetPort": 80, "protocol": "TCP"}
            ]}}),
        );
    });
    until_the_ccm_built(&project, "tcp/http");

    let drift = shop_drift(&project);
    assert_eq!(drift["status"], "drifted", "{drift:#}");
    let items = drift["items"].as_array().unwrap();
    let ports = items
        .iter()
        .find(|i| i["path"] == "ports.web.name")
        .unwrap_or_else(|| panic!("no ports item in {drift:#}"));
    assert_eq!(ports["impact"], "pool-recreate", "{drift:#}");

    let plan = shop(&project.plan(&[]));
    assert_eq!(plan["impact"], "pool-recreate", "{plan:#}");
    for item in items {
        let path = item["path"].as_str().unwrap();
        let planned = plan["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["path"] == path)
            .unwrap_or_else(|| panic!("drift's {path} is not in the plan: {plan:#}"));
        assert_eq!(item["impact"], planned["impact"], "{path}");
        assert_eq!(item["expected"], planned["after"], "{path}");
        assert_eq!(item["actual"], planned["before"], "{path}");
    }

    let text = project.run(&["drift"]);
    assert!(
        !text.stdout.contains("finds nothing to change"),
        "{}",
        text.stdout
    );
}
