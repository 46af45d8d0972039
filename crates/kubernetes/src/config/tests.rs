//! The Kubernetes section read through the whole config stage: clusters skyplan connects to
//! and node policies.

use std::path::{Path, PathBuf};

use skyplan_core::config::{Config, ConfigError};

use super::*;
use crate::spec::{KubeAccess, NodeSelection, TaintEffect, TaintSpec};

fn load_files(files: &[(&str, &str)]) -> Result<Config, ConfigError> {
    skyplan_core::config::load_texts(Path::new("cfg"), files, &[&KubernetesConfig])
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

const PROD: &str = "[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

/// A valid policy `web` over `prod` whose table starts on line 4.
fn web(extra: &str) -> String {
    format!("{PROD}[nodes.web]\ncluster = \"prod\"\n{extra}\n")
}

#[test]
fn an_embedded_cluster_and_a_policy_resolve() {
    let text = web(
        "selector = \"node-role.kubernetes.io/worker\"\nlabels = { tier = \"web\" }\n\
         taints = [{ key = \"dedicated\", value = \"web\", effect = \"NoSchedule\" }]",
    );
    let config = load_str(&text).unwrap();
    let [cluster, policy] = &config.resources[..] else {
        panic!("two resources: {:?}", config.resources);
    };
    assert_eq!(cluster.address.to_string(), "cluster.prod");
    assert_eq!(cluster.provider, "kubernetes");
    let spec: &KubernetesClusterSpec = cluster.spec.get().expect("a kubernetes cluster");
    assert_eq!(spec.access, KubeAccess::Embedded);
    assert_eq!(policy.provider, "kubernetes");
    assert_eq!(
        policy.depends_on,
        [Address::new(ResourceKind::Cluster, "prod")]
    );
    let spec: &NodePolicySpec = policy.spec.get().expect("a node policy");
    assert_eq!(
        spec.selection,
        NodeSelection::Selector("node-role.kubernetes.io/worker".into())
    );
    assert_eq!(spec.labels["tier"], "web");
    assert_eq!(
        spec.taints,
        [TaintSpec {
            key: "dedicated".into(),
            value: Some("web".into()),
            effect: TaintEffect::NoSchedule
        }]
    );
}

#[test]
fn a_kubeconfig_path_is_relative_to_the_config() {
    let text = "[cluster.prod]\nprovider = \"kubernetes\"\nkubeconfig = \"kube/config\"\ncontext = \"prod\"\n";
    let config = load_str(text).unwrap();
    let spec: &KubernetesClusterSpec = config.resources[0]
        .spec
        .get()
        .expect("a kubernetes cluster");
    assert_eq!(
        spec.access,
        KubeAccess::Kubeconfig {
            path: Some(PathBuf::from("cfg/kube/config")),
            context: Some("prod".into())
        }
    );
}

#[test]
fn embedded_excludes_a_kubeconfig_and_other_endpoints_are_refused() {
    let text =
        "[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\ncontext = \"x\"\n";
    assert_eq!(
        errors(text),
        ["a.toml:4:11: endpoint = \"embedded\" excludes kubeconfig, context and in-cluster"]
    );
    let text = "[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"https://k8s\"\n";
    assert_eq!(
        errors(text),
        ["a.toml:3:12: `https://k8s` is not an endpoint"]
    );
}

#[test]
fn in_cluster_uses_the_pods_service_account_and_excludes_a_kubeconfig() {
    let text = "[cluster.prod]\nprovider = \"kubernetes\"\nin-cluster = true\n";
    let config = load_str(text).unwrap();
    let spec: &KubernetesClusterSpec = config.resources[0].spec.get().unwrap();
    assert_eq!(spec.access, KubeAccess::InCluster);
    let text = "[cluster.prod]\nprovider = \"kubernetes\"\nin-cluster = true\nkubeconfig = \"k\"\n";
    assert_eq!(
        errors(text),
        ["a.toml:4:14: in-cluster = true excludes kubeconfig and context"]
    );
}

/// `[backend.kubernetes]` is core's table; its errors are checked here, beside the cluster's.
#[test]
fn the_kubernetes_backend_resolves_and_its_mistakes_are_placed() {
    use skyplan_core::config::{Backend, KubernetesAccess};
    let text = "[backend.kubernetes]\nin-cluster = true\nworkspace = \"nightly\"\n";
    let backend = load_str(text).unwrap().settings.backend;
    let Backend::Kubernetes(kube) = backend else {
        panic!("{backend:?}")
    };
    assert_eq!(kube.access, KubernetesAccess::InCluster);
    assert_eq!(
        (kube.namespace, kube.workspace, kube.lease_seconds),
        (None, "nightly".into(), 15)
    );

    let text = "[backend.kubernetes]\nin-cluster = true\nnamespace = \"ops\"\ncontext = \"c\"\n";
    assert_eq!(
        errors(text),
        ["a.toml:4:11: in-cluster = true excludes kubeconfig and context"]
    );
    let text = "[backend.kubernetes]\nworkspace = \"Prod_1\"\n";
    let lines = errors(text);
    assert!(
        lines[0].starts_with("a.toml:1:1: [backend.kubernetes] needs a namespace"),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        "a.toml:2:13: `Prod_1` cannot name Secrets and a Lease"
    );
    let text = "[backend.postgres]\nurl = \"postgres://u@db/s\"\n[backend.kubernetes]\nnamespace = \"ops\"\n";
    let lines = errors(text);
    assert!(
        lines[0].starts_with("a.toml:3:1: a second state backend"),
        "{lines:?}"
    );
}

#[test]
fn a_kubernetes_cluster_has_its_own_keys() {
    let text = "[cluster.prod]\nprovider = \"kubernetes\"\nworkers = 3\n";
    let lines = errors(text);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("a.toml:3:1: unknown key `workers`"),
        "{lines:?}"
    );
}

#[test]
fn a_policy_names_a_declared_kubernetes_cluster() {
    let text = "[nodes.web]\ncluster = \"prod\"\nnames = [\"*\"]\n";
    assert_eq!(
        errors(text),
        ["a.toml:2:11: cluster `prod` is not a [cluster.NAME] in this config"]
    );
}

#[test]
fn a_policy_needs_exactly_one_selection() {
    assert_eq!(
        errors(&web("")),
        ["a.toml:4:1: a node policy needs selector or names"]
    );
    assert_eq!(
        errors(&web("selector = \"a\"\nnames = [\"n\"]")),
        ["a.toml:7:9: selector and names exclude each other"]
    );
}

#[test]
fn selectors_and_names_are_checked_where_they_are_written() {
    assert_eq!(
        errors(&web("selector = \"zone in lpg1\"")),
        ["a.toml:6:12: not a label selector: `lpg1`: a set needs parentheses, e.g. (a,b)"]
    );
    assert_eq!(
        errors(&web("names = []")),
        ["a.toml:6:9: names selects no node"]
    );
}

#[test]
fn labels_and_taints_are_checked_where_they_are_written() {
    let text = web(
        "names = [\"*\"]\nlabels = { \"Bad/x\" = \"ok\", tier = \"no spaces\" }\n\
         taints = [{ key = \"a\", effect = \"Evict\" }]",
    );
    let lines = errors(&text);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with("a.toml:7:12: `Bad/x` is not a label key"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("a.toml:7:35: `no spaces` is not a label value"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("a.toml:8:33: `Evict` is not a valid taint effect"),
        "{lines:?}"
    );
}

#[test]
fn a_taint_key_and_effect_appear_once() {
    let text = web(
        "names = [\"*\"]\ntaints = [{ key = \"a\", effect = \"NoSchedule\" },\n\
         { key = \"a\", value = \"b\", effect = \"NoSchedule\" }, { key = \"a\", effect = \"NoExecute\" }]",
    );
    assert_eq!(
        errors(&text),
        ["a.toml:8:1: taint `a:NoSchedule` is listed twice"]
    );
}

#[test]
fn service_refs_are_namespace_and_name() {
    assert_eq!(
        service_ref("default/shop").unwrap(),
        ("default".into(), "shop".into())
    );
    assert!(service_ref("shop").is_err());
    assert!(service_ref("default/Shop").is_err());
    assert!(service_ref("default/-x").is_err());
    assert!(service_ref("/x").is_err());
}

#[test]
fn ignore_changes_on_a_node_policy_names_each_nodes_attributes_or_one_nodes() {
    let text = web(concat!(
        "selector = \"a=b\"\nlabels = { tier = \"web\" }\n",
        "ignore-changes = [\"labels.tier\", \"taints.dedicated:NoSchedule\", ",
        "\"nodes.ip-10-0-0-1.internal\", \"nodes.node-1.labels\"]"
    ));
    let config = load_str(&text).unwrap();
    let origin = &config.resources[1].origin;
    let read: Vec<(&str, Option<&str>)> = (origin.ignore_changes.iter())
        .map(|i| (i.path.as_str(), i.on_each))
        .collect();
    assert_eq!(
        read,
        [
            ("labels.tier", Some("nodes")),
            ("taints.dedicated:NoSchedule", Some("nodes")),
            ("nodes.ip-10-0-0-1.internal", None),
            ("nodes.node-1.labels", None),
        ]
    );
    assert!(origin.ignores("nodes.node-7.labels.tier"));
    assert!(origin.ignores("nodes.ip-10-0-0-1.internal.taints.x:NoExecute"));
    assert!(origin.ignores("nodes.node-1.labels.zone"));
    assert!(!origin.ignores("nodes.node-2.labels.zone"));
}

#[test]
fn an_ignore_changes_path_a_node_policy_has_not_is_refused_at_its_place() {
    let problems = errors(&web(
        "selector = \"a=b\"\nignore-changes = [\"labels\", \"taints.dedicated\", \"colour\", \"nodes.labels.tier\"]",
    ));
    assert_eq!(
        problems,
        [
            "a.toml:7:29: `taints.dedicated` is not an attribute of nodes.web",
            "a.toml:7:49: `colour` is not an attribute of nodes.web",
            "a.toml:7:59: `nodes.labels.tier` is not an attribute of nodes.web",
        ]
    );
}

#[test]
fn node_policies_inherit_defaults_and_a_for_each_cluster_is_named_with_its_key() {
    let text = "[defaults.nodes]\ncluster = 'fleet[\"a\"]'\nlabels = { tier = \"web\" }\n\
                [cluster.fleet]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\nfor-each = [\"a\", \"b\"]\n\
                [nodes.web]\nselector = \"node-role.kubernetes.io/worker\"\nlabels = { zone = \"lpg1\" }\n";
    let config = load_str(text).unwrap();
    let addresses: Vec<_> = (config.resources.iter())
        .map(|r| r.address.to_string())
        .collect();
    assert_eq!(
        addresses,
        [
            r#"cluster.fleet["a"]"#,
            r#"cluster.fleet["b"]"#,
            "nodes.web"
        ]
    );
    let policy = &config.resources[2];
    assert_eq!(
        policy.depends_on,
        [Address::instance(ResourceKind::Cluster, "fleet", "a")]
    );
    let spec: &NodePolicySpec = policy.spec.get().expect("a node policy");
    assert_eq!(spec.labels["tier"], "web", "inherited key by key");
    assert_eq!(spec.labels["zone"], "lpg1");
}
