//! The PhoenixNAP sections: the provider table and kube-vip load balancers.

use super::*;
use super::{errors, load_str};
use crate::model::{Address, PnapLocation, ResourceKind};

const BASE: &str = "[provider.phoenixnap]\nendpoint = \"embedded\"\nlocation = \"PHX\"\n\n\
                    [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

/// The load balancer `api` starts on line 9.
fn with_lb(extra: &str) -> String {
    format!(
        "{BASE}\n[load-balancer.api]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"default/api\"\npublic-network = \"k8s-public\"\n{extra}"
    )
}

#[test]
fn a_load_balancer_resolves_with_the_provider_s_location() {
    let config = load_str(&with_lb("")).unwrap();
    let lb = config
        .resource(&Address::new(ResourceKind::LoadBalancer, "api"))
        .unwrap();
    assert_eq!(lb.provider, "phoenixnap");
    assert_eq!(lb.depends_on, [Address::new(ResourceKind::Cluster, "prod")]);
    let ResourceSpec::PnapLoadBalancer(spec) = &lb.spec else {
        panic!("a PhoenixNAP load balancer: {:?}", lb.spec);
    };
    assert_eq!(spec.location, PnapLocation::Phx);
    assert_eq!(spec.service_ref(), "default/api");
    assert_eq!(spec.public_network, "k8s-public");
    let provider = config.providers.phoenixnap.unwrap();
    assert_eq!(provider.endpoint, Endpoint::Embedded);
    assert_eq!(provider.location, Some(PnapLocation::Phx));
}

#[test]
fn a_load_balancer_may_name_its_own_location() {
    let config = load_str(&with_lb("location = \"ASH\"\n")).unwrap();
    let lb = &config.resources[1];
    let ResourceSpec::PnapLoadBalancer(spec) = &lb.spec else {
        panic!("a PhoenixNAP load balancer");
    };
    assert_eq!(spec.location, PnapLocation::Ash);
}

#[test]
fn bad_values_name_their_place() {
    let text = with_lb("location = \"MARS\"\n").replace("default/api", "default/API");
    let errors = errors(&text);
    assert!(
        errors.iter().any(|e| e.starts_with("a.toml:12:11:")
            && e.contains("`API` is not a valid Kubernetes name")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("a.toml:14:12:") && e.contains("MARS")),
        "{errors:?}"
    );
}

#[test]
fn an_unknown_cluster_is_refused_at_its_key() {
    let errors =
        errors(&with_lb("").replace("cluster = \"prod\"\nservice", "cluster = \"lab\"\nservice"));
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("a.toml:11:11:") && e.contains("no [cluster.lab]")),
        "{errors:?}"
    );
}

#[test]
fn credentials_in_the_file_are_refused_without_showing_them() {
    let text = with_lb("").replace(
        "location = \"PHX\"\n",
        "location = \"PHX\"\nclient-secret = \"hunter2\"\n",
    );
    let error = load_str(&text).unwrap_err();
    let rendered = format!("{:?}", miette::Report::new(error));
    assert!(rendered.contains("credentials do not belong"), "{rendered}");
    assert!(!rendered.contains("hunter2"), "{rendered}");
}

#[test]
fn a_location_is_required_somewhere() {
    let text = with_lb("").replace("location = \"PHX\"\n", "");
    let errors = errors(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("no location for the IP block")),
        "{errors:?}"
    );
}

#[test]
fn two_blocks_for_one_service_are_refused() {
    let text = format!(
        "{}\n[load-balancer.api2]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"default/api\"\npublic-network = \"k8s-public\"\n",
        with_lb("")
    );
    let errors = errors(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("already has a load balancer")),
        "{errors:?}"
    );
}

#[test]
fn a_name_is_one_load_balancer_across_providers() {
    let text = format!(
        "{}\n[provider.cloudscale]\n\n[load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
         members = [\"10.0.0.1\"]\n[[load-balancer.api.ports]]\nport = 80\nnode-port = 30080\n",
        with_lb("")
    );
    let load = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = text.split_at(text.find("\n[provider.cloudscale]").unwrap());
        std::fs::write(dir.path().join("a.toml"), first).unwrap();
        std::fs::write(dir.path().join("b.toml"), second).unwrap();
        load(dir.path()).unwrap_err().lines()
    };
    let errors = load(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("load-balancer.api is defined twice")),
        "{errors:?}"
    );
}
