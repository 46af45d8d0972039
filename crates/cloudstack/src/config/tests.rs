//! The CloudStack section read through the whole config stage: clusters, load-balancer rules,
//! the provider table, beside core's tables.

use std::path::Path;

use skyplan_core::config::{Config, ConfigError};

use super::*;

fn load_files(files: &[(&str, &str)]) -> Result<Config, ConfigError> {
    skyplan_core::config::load_texts(
        Path::new("cfg"),
        files,
        &[&skyplan_kubernetes::KubernetesConfig, &CloudstackConfig],
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

fn spec<T: std::any::Any>(resource: &Resource) -> &T {
    resource
        .spec
        .get()
        .unwrap_or_else(|| panic!("a CloudStack resource: {:?}", resource.spec))
}

const PROVIDER: &str = "[provider.cloudstack]\nendpoint = \"embedded\"\n";

const CLUSTER: &str = "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\n\
                       kubernetes-version = \"1.29.3\"\nservice-offering = \"Medium Instance\"\n";

fn with_provider(text: &str) -> String {
    format!("{PROVIDER}{text}")
}

#[test]
fn a_minimal_cluster_gets_the_cks_defaults() {
    let config = load_str(&with_provider(CLUSTER)).unwrap();
    let resource = &config.resources[0];
    assert_eq!(resource.address, Address::new(ResourceKind::Cluster, "lab"));
    let spec: &CloudstackClusterSpec = spec(resource);
    assert_eq!(spec.name, "lab");
    assert_eq!(
        (spec.control_nodes, spec.etcd_nodes, spec.workers),
        (1, 0, 1)
    );
    assert_eq!(spec.state, ClusterRunState::Running);
    assert_eq!(
        config
            .providers
            .get::<CloudstackSettings>("cloudstack")
            .unwrap()
            .endpoint,
        CloudstackEndpoint::Embedded
    );
}

#[test]
fn cluster_values_are_checked_where_they_are_written() {
    let text = with_provider(&format!(
        "{}workers = 0\nstate = \"paused\"\nautoscaling = {{ min = 3, max = 2 }}\n",
        CLUSTER.replace("1.29.3", "1.29")
    ));
    assert_eq!(
        errors(&text),
        [
            "a.toml:6:22: `1.29` is not a Kubernetes version",
            "a.toml:8:11: workers must be at least 1",
            "a.toml:9:9: `paused` is not a valid cluster state",
            "a.toml:10:15: autoscaling.max (2) must be greater than autoscaling.min (3)",
        ]
    );
}

#[test]
fn per_node_type_offerings_are_kept() {
    let text = with_provider(&format!(
        "{CLUSTER}node-offerings = {{ worker = \"Large Instance\" }}\n"
    ));
    let config = load_str(&text).unwrap();
    let spec: &CloudstackClusterSpec = spec(&config.resources[0]);
    assert_eq!(spec.offering_for(NodeType::Worker), "Large Instance");
    assert_eq!(spec.offering_for(NodeType::Control), "Medium Instance");
}

const EDGE: &str = "[load-balancer.edge]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\
                    [[load-balancer.edge.ports]]\nport = 80\nnode-port = 30080\n";

#[test]
fn a_cloudstack_load_balancer_depends_on_its_cluster() {
    let config = load_str(&with_provider(&format!("{CLUSTER}{EDGE}"))).unwrap();
    let lb = config
        .resource(&Address::new(ResourceKind::LoadBalancer, "edge"))
        .unwrap();
    assert_eq!(lb.depends_on, [Address::new(ResourceKind::Cluster, "lab")]);
    let spec: &CloudstackLoadBalancerSpec = spec(lb);
    assert_eq!(spec.members, CsMembers::Cluster("lab".into()));
    assert_eq!(spec.public_ip, PublicIp::Auto);
    assert_eq!(spec.algorithm, CsAlgorithm::RoundRobin);
    assert_eq!(spec.firewall_cidrs, ["0.0.0.0/0"]);
    assert_eq!(spec.ports[0].protocol, CsProtocol::Tcp);
    assert_eq!(spec.rule_name(&spec.ports[0]), "edge-tcp-80");
}

#[test]
fn a_load_balancer_needs_a_declared_cluster() {
    assert_eq!(
        errors(&with_provider(EDGE)),
        ["a.toml:5:11: cluster `lab` is not a [cluster.NAME] with provider \"cloudstack\" in this config"]
    );
}

#[test]
fn tcp_and_udp_on_one_public_port_is_a_config_error() {
    let text = format!(
        "{CLUSTER}{EDGE}[[load-balancer.edge.ports]]\nport = 80\nprotocol = \"udp\"\nnode-port = 30081\n"
    );
    let lines = errors(&with_provider(&text));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("a.toml:15:8: public port 80"),
        "{lines:?}"
    );
}

#[test]
fn keys_in_the_provider_table_are_refused_and_modes_checked() {
    let text = format!(
        "[provider.cloudstack]\nsecret-key = \"s3cret\"\n{CLUSTER}{}",
        EDGE.replace("cluster = \"lab\"\n", "cluster = \"lab\"\nmode = \"ccm\"\n")
    );
    let lines = errors(&text);
    // EDGE's node-port 30080 is in the node-port range: controller mode writes it.
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("CloudStack keys do not belong in config files"));
    assert!(!lines.concat().contains("s3cret"));
    assert!(
        lines[1].contains("mode = \"ccm\" needs `cluster` and `service`"),
        "{lines:?}"
    );
}

#[test]
fn a_load_balancer_defined_for_both_providers_is_defined_twice() {
    let cloudscale = "[load-balancer.edge]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                      [[load-balancer.edge.ports]]\nport = 80\nnode-port = 30080\n";
    let lines = load_files(&[
        ("a.toml", &with_provider(&format!("{CLUSTER}{EDGE}"))),
        ("b.toml", &format!("[provider.cloudscale]\n{cloudscale}")),
    ])
    .expect_err("defined twice")
    .lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("load-balancer.edge is defined twice")),
        "{lines:?}"
    );
}

const CCM_EDGE: &str = "[load-balancer.edge]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\
                        mode = \"ccm\"\nservice = \"default/edge\"\n\
                        [[load-balancer.edge.ports]]\nport = 443\nprotocol = \"tcp-proxy\"\n";

#[test]
fn controller_mode_with_cluster_and_service_binds_the_service() {
    let config = load_str(&with_provider(&format!("{CLUSTER}{CCM_EDGE}"))).unwrap();
    let lb = config
        .resource(&Address::new(ResourceKind::LoadBalancer, "edge"))
        .unwrap();
    let spec: &CloudstackLoadBalancerSpec = spec(lb);
    let binding = spec.binding.as_ref().expect("bound in controller mode");
    assert_eq!(binding.service_ref(), "default/edge");
    assert_eq!(binding.mode, LbMode::Ccm);
    assert_eq!(spec.ports[0].node_port, 0);
}

#[test]
fn controller_mode_refuses_what_the_ccm_cannot_express() {
    let leastconn = CCM_EDGE.replace(
        "mode = \"ccm\"\n",
        "mode = \"ccm\"\nalgorithm = \"leastconn\"\n",
    );
    let lines = errors(&with_provider(&format!("{CLUSTER}{leastconn}")));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("cannot express leastconn"), "{lines:?}");
    let mixed = format!("{CCM_EDGE}[[load-balancer.edge.ports]]\nport = 80\n");
    let lines = errors(&with_provider(&format!("{CLUSTER}{mixed}")));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("tcp and tcp-proxy"), "{lines:?}");
    let direct_service = EDGE.replace(
        "cluster = \"lab\"\n",
        "cluster = \"lab\"\nservice = \"default/edge\"\n",
    );
    let lines = errors(&with_provider(&format!("{CLUSTER}{direct_service}")));
    assert!(lines[0].contains("only for controller mode"), "{lines:?}");
}

#[test]
fn controller_mode_takes_a_node_port_inside_the_apiservers_range() {
    let fixed = CCM_EDGE.replace(
        "protocol = \"tcp-proxy\"\n",
        "protocol = \"tcp-proxy\"\nnode-port = 30443\n",
    );
    let config = load_str(&with_provider(&format!("{CLUSTER}{fixed}"))).unwrap();
    let lb = config
        .resource(&Address::new(ResourceKind::LoadBalancer, "edge"))
        .unwrap();
    let spec: &CloudstackLoadBalancerSpec = spec(lb);
    assert_eq!(spec.ports[0].node_port, 30443);
    let outside = CCM_EDGE.replace(
        "protocol = \"tcp-proxy\"\n",
        "protocol = \"tcp-proxy\"\nnode-port = 8443\n",
    );
    let text = with_provider(&format!("{CLUSTER}{outside}"));
    let lines = errors(&text);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("node-port 8443 is outside"), "{lines:?}");
    let line = text
        .lines()
        .position(|l| l == "node-port = 8443")
        .expect("the line")
        + 1;
    assert!(
        lines[0].contains(&format!(":{line}:13")),
        "file:line:col of the value: {lines:?}"
    );
}

#[test]
fn a_cluster_name_is_declared_once_across_providers() {
    let kubernetes = "[cluster.lab]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";
    let error =
        load_files(&[("a.toml", &with_provider(CLUSTER)), ("b.toml", kubernetes)]).unwrap_err();
    assert_eq!(
        error.lines(),
        ["b.toml:1:1: cluster.lab is defined twice"],
        "the first definition is a note"
    );
}

#[test]
fn a_cluster_of_another_provider_is_refused_saying_which_have_them() {
    // Read with CloudStack's section only: cloudscale is unknown here.
    let text = CLUSTER.replace("\"cloudstack\"", "\"cloudscale\"");
    let error = load_str(&text).unwrap_err();
    assert_eq!(
        error.lines(),
        ["a.toml:2:12: `cloudscale` is not a supported provider"]
    );
    assert_eq!(
        error.problems()[0].help_text(),
        Some("write provider = \"kubernetes\" (an existing cluster skyplan connects to) or \"cloudstack\" (a cluster skyplan creates)")
    );
}

/// A controller-mode load balancer with `cloud` as the provider table, bound to the Kubernetes
/// cluster `prod` (`cluster`, its table's body): `mode = "ccm"` is on line 12.
fn controller_mode(cloud: &str, cluster: &str) -> String {
    format!(
        "[provider.cloudstack]\n{cloud}\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\n{cluster}\n\n\
         [load-balancer.shop]\nprovider = \"cloudstack\"\ncluster = \"prod\"\n\
         service = \"default/shop\"\nmode = \"ccm\"\n\n\
         [[load-balancer.shop.ports]]\nport = 80\n"
    )
}

#[test]
fn controller_mode_with_the_embedded_cloud_and_a_real_cluster_is_refused() {
    let text = controller_mode("endpoint = \"embedded\"", "kubeconfig = \"kc.yaml\"");
    let lines = errors(&text);
    let [line] = &lines[..] else {
        panic!("one error: {lines:?}");
    };
    assert!(line.starts_with("a.toml:12:1: "), "the mode key: {line}");
    assert!(
        line.contains("[provider.cloudstack]") && line.contains("[cluster.prod]"),
        "{line}"
    );
    let error = load_str(&text).unwrap_err();
    let notes: Vec<_> = error.problems()[0]
        .notes()
        .iter()
        .map(|n| n.line())
        .collect();
    assert_eq!(
        notes[0],
        "a.toml:2:12: [provider.cloudstack] is embedded here"
    );
}

#[test]
fn controller_mode_that_can_converge_is_accepted() {
    let real_cloud = controller_mode("cloud-config = \"cloud.ini\"", "kubeconfig = \"kc.yaml\"");
    assert!(
        load_str(&real_cloud).is_ok(),
        "{:?}",
        load_str(&real_cloud).err()
    );
    let embedded_cluster = controller_mode("endpoint = \"embedded\"", "endpoint = \"embedded\"");
    let loaded = load_str(&embedded_cluster);
    assert!(loaded.is_ok(), "{:?}", loaded.err());
}

#[test]
fn ignore_changes_takes_the_paths_of_clusters_and_rules_and_refuses_others_at_their_place() {
    let config = load_str(&with_provider(&format!(
        "{CLUSTER}ignore-changes = [\"workers\", \"autoscaling.max\"]\n{}",
        EDGE.replace(
            "[[load-balancer.edge.ports]]",
            "ignore-changes = [\"allowed-cidrs\", \"ports.80.node-port\", \"algorithm\"]\n\
             [[load-balancer.edge.ports]]"
        )
    )))
    .unwrap();
    let edge = config
        .resource(&Address::new(ResourceKind::LoadBalancer, "edge"))
        .unwrap();
    assert!(edge.origin.ignores("ports.80.node-port"));
    assert!(!edge.origin.ignores("firewall-cidrs"));
    let lab = config
        .resource(&Address::new(ResourceKind::Cluster, "lab"))
        .unwrap();
    assert!(lab.origin.ignores("workers"));

    let problems = errors(&with_provider(&format!(
        "{CLUSTER}ignore-changes = [\"worker\"]\n"
    )));
    assert_eq!(
        problems,
        ["a.toml:8:19: `worker` is not an attribute of cluster.lab"]
    );
}
