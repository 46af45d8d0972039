//! impact.md's deletion rule in controller mode: a load balancer removed from the config is
//! refused unless named with --allow-delete; then skyplan deletes the Service it wrote and the
//! cloud controller deletes the load balancer (skyplan never deletes it behind the
//! controller's back, which would only make the controller build a new one).

use crate::cloudscale::controller::{config, operations, shop, HTTP};
use crate::support::http;
use crate::support::kube_sim::with_cluster;
use crate::support::Project;

const WITHOUT_SHOP: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

/// Whether the embedded cluster still has the Service `default/shop`.
fn service_exists(project: &Project) -> bool {
    with_cluster(project, |kube| {
        let url = format!("{}/api/v1/namespaces/default/services/shop", kube.url);
        let status = http::get(&url).send().status;
        assert!(matches!(status, 200 | 404), "GET {url}: {status}");
        status == 200
    })
}

#[test]
fn a_controller_mode_load_balancer_removed_is_refused_then_deleted_through_its_service() {
    let project = Project::new();
    project.config(&config("", HTTP));
    project.apply_ok();
    assert_eq!(project.world().all("load_balancers").len(), 1);

    project.config(WITHOUT_SHOP);
    let change = shop(&project.plan(&[]));
    assert_eq!(
        (change["action"].as_str(), change["impact"].as_str()),
        (Some("delete"), Some("forbidden")),
        "{change:#}"
    );
    let reason = change["attributes"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("--allow-delete load-balancer.shop"),
        "{change:#}"
    );
    let refused = project.apply(&[]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert_eq!(
        project.world().all("load_balancers").len(),
        1,
        "nothing deleted"
    );
    assert!(service_exists(&project), "the Service is left alone");

    let allowed = shop(&project.plan(&["--allow-delete", "load-balancer.shop"]));
    assert_eq!(allowed["action"], "delete", "{allowed:#}");
    assert_eq!(
        allowed["impact"], "forbidden",
        "the address is lost: {allowed:#}"
    );
    let ops = operations(&allowed);
    assert!(
        ops.contains(&"delete service default/shop".to_string())
            && ops
                .iter()
                .any(|o| o.starts_with("controller: delete load balancer")),
        "{ops:?}"
    );
    let apply = project.apply(&["--allow-delete", "load-balancer.shop"]);
    assert_eq!(apply.code, 0, "{apply:?}");
    assert!(!service_exists(&project), "the Service is deleted");
    assert!(
        project.world().all("load_balancers").is_empty(),
        "the controller deleted the load balancer"
    );
    assert_eq!(project.run(&["state", "list"]).stdout, "cluster.prod\n");
    // The next run's controller has nothing to build again.
    let out = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(project.world().all("load_balancers").is_empty());
}
