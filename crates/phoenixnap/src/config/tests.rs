//! The PhoenixNAP section read through the whole config stage: the provider table and
//! kube-vip load balancers, beside core's tables.

use std::path::Path;

use skyplan_core::config::{Config, ConfigError};

use super::*;

fn load_files(files: &[(&str, &str)]) -> Result<Config, ConfigError> {
    skyplan_core::config::load_texts(
        Path::new("cfg"),
        files,
        &[&skyplan_kubernetes::KubernetesConfig, &PhoenixnapConfig],
    )
}

fn load_str(text: &str) -> Result<Config, ConfigError> {
    load_files(&[("a.toml", text)])
}

/// The `file:line:col: message` lines of a config that must fail.
fn errors(text: &str) -> Vec<String> {
    load_str(text)
        .expect_err("the config should be invalid")
        .lines()
}

fn spec(resource: &Resource) -> &PhoenixnapLoadBalancerSpec {
    resource
        .spec
        .get()
        .unwrap_or_else(|| panic!("a PhoenixNAP load balancer: {:?}", resource.spec))
}

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
    let spec = spec(lb);
    assert_eq!(spec.location, PnapLocation::Phx);
    assert_eq!(spec.service_ref(), "default/api");
    assert_eq!(spec.public_network, "k8s-public");
    let provider: &PhoenixnapSettings = config.providers.get("phoenixnap").unwrap();
    assert_eq!(provider.endpoint, Endpoint::Embedded);
    assert_eq!(provider.location, Some(PnapLocation::Phx));
}

#[test]
fn a_load_balancer_may_name_its_own_location() {
    let config = load_str(&with_lb("location = \"ASH\"\n")).unwrap();
    assert_eq!(spec(&config.resources[1]).location, PnapLocation::Ash);
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
    let (first, second) = text.split_at(text.find("\n[provider.cloudscale]").unwrap());
    let errors = load_files(&[("a.toml", first), ("b.toml", second)])
        .unwrap_err()
        .lines();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("load-balancer.api is defined twice")),
        "{errors:?}"
    );
}

#[test]
fn the_same_name_in_another_provider_is_refused_whichever_file_comes_first() {
    let cloudscale = "[provider.cloudscale]\n\n[load-balancer.api]\nprovider = \"cloudscale\"\n\
                      zone = \"lpg1\"\nmembers = [\"10.0.0.1\"]\n\
                      [[load-balancer.api.ports]]\nport = 80\nnode-port = 30080\n";
    let errors = load_files(&[("a.toml", cloudscale), ("b.toml", &with_lb(""))])
        .unwrap_err()
        .lines();
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("b.toml:9:1:")
                && e.contains("load-balancer.api is defined twice")),
        "{errors:?}"
    );
}

#[test]
fn a_load_balancer_without_the_provider_table_is_refused_at_its_provider() {
    let text = with_lb("").replace(
        "[provider.phoenixnap]\nendpoint = \"embedded\"\nlocation = \"PHX\"\n",
        "\n\n\n",
    );
    assert_eq!(
        errors(&text),
        ["a.toml:10:12: provider `phoenixnap` has no [provider.phoenixnap] table"]
    );
}

#[test]
fn the_schema_offers_the_section_s_tables() {
    let schema = skyplan_core::config::json_schema(&[&PhoenixnapConfig]);
    let entries = &schema["properties"]["load-balancer"]["additionalProperties"];
    assert_eq!(entries["$ref"], "#/$defs/RawPnapLoadBalancer", "{entries}");
    assert_eq!(
        schema["$defs"]["RawProviders"]["properties"]["phoenixnap"]["$ref"],
        "#/$defs/RawPhoenixnap"
    );
    let pnap = &schema["$defs"]["RawPhoenixnap"]["properties"];
    assert!(pnap.get("client-secret").is_none());
    assert_eq!(
        pnap["location"]["enum"],
        serde_json::json!(["PHX", "ASH", "SGP", "NLD", "CHI", "SEA", "AUS"])
    );
    assert!(!schema.to_string().contains("null"), "TOML has no null");
}

#[test]
fn unknown_keys_and_wrong_types_point_at_their_place() {
    let unknown = errors(&with_lb("zone = \"lpg1\"\n"));
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert!(
        unknown[0] == "a.toml:14:1: unknown key `zone`",
        "{unknown:?}"
    );
    let wrong_type = errors(&with_lb("").replace("\"k8s-public\"", "7"));
    assert!(
        wrong_type[0].starts_with("a.toml:13:18: invalid type: integer `7`, expected a string"),
        "{wrong_type:?}"
    );
}

#[test]
fn ignore_changes_takes_the_block_s_keys_and_refuses_others_at_their_place() {
    let config = load_str(&with_lb("ignore-changes = [\"public-network\"]\n")).unwrap();
    let lb = config
        .resource(&Address::new(ResourceKind::LoadBalancer, "api"))
        .unwrap();
    assert!(lb.origin.ignores("public-network"));
    let problems = errors(&with_lb("ignore-changes = [\"location\", \"size\"]\n"));
    assert_eq!(
        problems,
        ["a.toml:14:31: `size` is not an attribute of load-balancer.api"]
    );
}
