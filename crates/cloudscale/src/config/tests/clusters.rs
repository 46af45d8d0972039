//! cloudscale load balancers on a Kubernetes cluster: applied after the cluster's node
//! policies, and controller mode that can never converge refused.

use super::*;
use skyplan_core::model::{Address, ResourceKind};

const PROD: &str = "[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

/// A valid policy `web` over `prod` whose table starts on line 4.
fn web(extra: &str) -> String {
    format!("{PROD}[nodes.web]\ncluster = \"prod\"\n{extra}\n")
}

#[test]
fn a_load_balancer_on_a_cluster_is_applied_after_its_node_policies() {
    let text = format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n{}\n\
         [load-balancer.shop]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
         service = \"default/shop\"\nmode = \"ccm\"\n\n\
         [[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n",
        web("names = [\"node-1\"]\nlabels = { tier = \"web\" }")
    );
    let config = load_str(&text).unwrap();
    let shop = config
        .resources
        .iter()
        .find(|r| r.address.kind == ResourceKind::LoadBalancer)
        .unwrap();
    assert_eq!(
        shop.depends_on,
        [
            Address::new(ResourceKind::Cluster, "prod"),
            Address::new(ResourceKind::Nodes, "web"),
        ]
    );
}

/// A controller-mode load balancer of `provider` with `cloud` as its provider table, bound to
/// `cluster` (the cluster table's body): `mode = "ccm"` is on line 12.
fn controller_mode(provider: &str, cloud: &str, cluster: &str, lb_keys: &str) -> String {
    format!(
        "[provider.{provider}]\n{cloud}\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\n{cluster}\n\n\
         [load-balancer.shop]\nprovider = \"{provider}\"\ncluster = \"prod\"\n\
         service = \"default/shop\"\nmode = \"ccm\"\n{lb_keys}\n\
         [[load-balancer.shop.ports]]\nport = 80\n"
    )
}

const REAL: &str = "kubeconfig = \"kc.yaml\"";
const EMBEDDED_CLUSTER: &str = "endpoint = \"embedded\"";

#[test]
fn controller_mode_with_an_embedded_cloud_and_a_real_cluster_is_refused() {
    for (provider, cloud, lb_keys) in [
        ("cloudscale", "endpoint = \"embedded\"", "zone = \"lpg1\""),
        // The embedded cloud is cloudscale's default.
        ("cloudscale", "", "zone = \"lpg1\""),
    ] {
        let text = controller_mode(provider, cloud, REAL, lb_keys);
        let lines = errors(&text);
        let [line] = &lines[..] else {
            panic!("one error for {provider}: {lines:?}");
        };
        assert!(line.starts_with("a.toml:12:1: "), "the mode key: {line}");
        assert!(
            line.contains(&format!("[provider.{provider}]"))
                && line.contains("[cluster.prod]")
                && line.contains("embedded"),
            "{line}"
        );
        let error = load_str(&text).unwrap_err();
        let help = error.problems()[0].help_text().unwrap_or_default();
        assert!(
            help.contains("endpoint") && help.contains("mode = \"direct\""),
            "the ways out: {help}"
        );
    }
}

#[test]
fn controller_mode_that_can_converge_is_accepted() {
    // The embedded cluster's simulated controllers reach the embedded cloud.
    let embedded = controller_mode(
        "cloudscale",
        "endpoint = \"embedded\"",
        EMBEDDED_CLUSTER,
        "zone = \"lpg1\"",
    );
    assert!(
        load_str(&embedded).is_ok(),
        "{:?}",
        load_str(&embedded).err()
    );
    // A real cloud is reachable from a real cluster's controller.
    let real = controller_mode(
        "cloudscale",
        "endpoint = \"https://api.cloudscale.ch/v1\"",
        REAL,
        "zone = \"lpg1\"",
    );
    assert!(load_str(&real).is_ok(), "{:?}", load_str(&real).err());
    // Direct mode: skyplan itself talks to the embedded cloud.
    let direct = controller_mode("cloudscale", "", REAL, "zone = \"lpg1\"")
        .replace("mode = \"ccm\"", "mode = \"direct\"");
    assert!(load_str(&direct).is_ok(), "{:?}", load_str(&direct).err());
}
