//! A Service binding is checked at plan time: a namespace that does not exist, or (in direct
//! mode, which reads the Service's node ports) a Service that does not exist, is a plan error
//! at the `service` key's file:line:col — never an apply that fails on the apiserver's 404.

use crate::support::Project;

/// A cloudscale load balancer bound to `service` of the embedded cluster in `mode`; the
/// `service` key is on line 11, column 1.
fn config(service: &str, mode: &str) -> String {
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n\
         [load-balancer.shop]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
         service = \"{service}\"\ncluster = \"prod\"\nmode = \"{mode}\"\n\n\
         [[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n"
    )
}

/// Plan and apply both fail at the `service` key with `message`, and nothing is written to
/// the cluster (the Service is still absent afterwards).
fn refused_at_the_service_key(project: &Project, message: &str) {
    for command in [&["plan"][..], &["apply", "--auto-approve"]] {
        let out = project.run(command);
        assert_eq!(out.code, 1, "{command:?}: {out:?}");
        let expected = format!("skyplan.toml:11:1: load-balancer.shop: {message}");
        assert!(out.stderr.contains(&expected), "{command:?}: {out:?}");
        assert!(
            !out.stderr.contains("404"),
            "not the apiserver's error: {out:?}"
        );
    }
    assert_eq!(
        project.run(&["state", "list"]).stdout,
        "",
        "nothing applied"
    );
}

#[test]
fn a_missing_namespace_is_a_plan_error_in_controller_mode() {
    let project = Project::new();
    project.config(&config("nons/web3", "ccm"));
    refused_at_the_service_key(&project, "namespace `nons` does not exist in cluster.prod");
}

#[test]
fn a_missing_namespace_is_a_plan_error_in_direct_mode() {
    let project = Project::new();
    project.config(&config("nons/web3", "direct"));
    refused_at_the_service_key(&project, "namespace `nons` does not exist in cluster.prod");
}

#[test]
fn a_missing_service_is_a_plan_error_at_its_key_in_direct_mode() {
    let project = Project::new();
    project.config(&config("default/web3", "direct"));
    refused_at_the_service_key(
        &project,
        "Service default/web3 does not exist in cluster.prod",
    );
}

/// CloudStack controller mode on a CKS cluster: the same plan-time error, at the `service`
/// key (line 15: the provider table, the cluster, then the load balancer).
#[test]
fn cs_a_missing_namespace_is_a_plan_error_in_controller_mode() {
    use crate::cloudstack::controller::{config, CLUSTER, HTTP};
    let project = crate::cloudstack::support::CsProject::new();
    project.config(CLUSTER);
    project.apply_converges();
    project.config(&config("", HTTP).replace("default/shop", "nons/shop"));
    let out = project.run(&["plan"]);
    assert_eq!(out.code, 1, "{out:?}");
    let expected =
        "skyplan.toml:15:1: load-balancer.shop: namespace `nons` does not exist in cluster.lab";
    assert!(out.stderr.contains(expected), "{out:?}");
}
