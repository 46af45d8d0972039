//! The Kubernetes sections → resolved values: `[cluster.NAME]` with provider "kubernetes" (how
//! skyplan reaches the cluster) and `[nodes.NAME]` policies. Each bad value is reported at its
//! position; resolving goes on so one run reports everything.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_spanned::Spanned;

use super::check::Checker;
use super::diagnostics::{Problem, Problems};
use super::parse::{RawConfig, Sourced};
use super::raw_kubernetes::{RawKubeCluster, RawNodePolicy, RawTaint};
use super::types::{Resource, ResourceSpec};
use super::values::expand_path;
use super::values::{self, Invalid};
use crate::model::labels::{check_key, check_value, LabelSelector};
use crate::model::{
    Address, KubeAccess, KubernetesClusterSpec, NodePolicySpec, NodeSelection, ResourceKind,
    TaintEffect, TaintSpec,
};

/// The provider name of clusters skyplan connects to and of node policies.
pub(super) const PROVIDER: &str = "kubernetes";

pub(super) fn cluster(
    root: &Path,
    key: &str,
    raw: &Sourced<'_, RawKubeCluster>,
    problems: &mut Problems,
) -> Resource {
    let mut check = Checker::new(raw.file, problems);
    Resource {
        address: Address::new(ResourceKind::Cluster, key),
        provider: PROVIDER.to_string(),
        location: raw.file.location(&raw.span()),
        keys: Default::default(),
        spec: ResourceSpec::KubernetesCluster(KubernetesClusterSpec {
            access: access(root, raw.get(), &mut check),
        }),
        depends_on: vec![],
    }
}

fn access(root: &Path, raw: &RawKubeCluster, check: &mut Checker<'_, '_>) -> KubeAccess {
    if let Some(endpoint) = &raw.endpoint {
        if endpoint.get_ref() != "embedded" {
            let invalid = Invalid::new(format!("`{}` is not an endpoint", endpoint.get_ref()))
                .help(
                "write endpoint = \"embedded\", or reach the cluster with kubeconfig and context",
            );
            check.report(endpoint.span(), invalid);
        }
        for other in [&raw.kubeconfig, &raw.context].into_iter().flatten() {
            let invalid = Invalid::new("endpoint = \"embedded\" excludes kubeconfig and context")
                .help("the embedded cluster needs no kubeconfig; keep one of the two");
            check.report(other.span(), invalid);
        }
        return KubeAccess::Embedded;
    }
    KubeAccess::Kubeconfig {
        path: raw
            .kubeconfig
            .as_ref()
            .map(|p| expand_path(root, p.get_ref())),
        context: raw.context.as_ref().map(|c| c.get_ref().clone()),
    }
}

pub(super) fn node_policy(
    key: &str,
    raw: &Sourced<'_, RawNodePolicy>,
    problems: &mut Problems,
) -> Resource {
    let mut check = Checker::new(raw.file, problems);
    let section = raw.get();
    let cluster = Address::new(ResourceKind::Cluster, section.cluster.get_ref());
    let spec = NodePolicySpec {
        cluster: cluster.clone(),
        selection: selection(raw, &mut check),
        labels: labels(&section.labels, &mut check),
        taints: taints(&section.taints, &mut check),
    };
    Resource {
        address: Address::new(ResourceKind::Nodes, key),
        provider: PROVIDER.to_string(),
        location: raw.file.location(&raw.span()),
        keys: Default::default(),
        spec: ResourceSpec::NodePolicy(spec),
        depends_on: vec![cluster],
    }
}

/// A load balancer that depends on a cluster also depends on that cluster's node policies: its
/// members follow the nodes (a label can exclude a node or change what a node-selector picks),
/// so apply patches the nodes first and the load balancer, or its controller, then sees them.
pub(super) fn order_after_node_policies(resources: &mut [Resource]) {
    let policies: Vec<(Address, Address)> = resources
        .iter()
        .filter_map(|r| match &r.spec {
            ResourceSpec::NodePolicy(policy) => Some((r.address.clone(), policy.cluster.clone())),
            _ => None,
        })
        .collect();
    for resource in resources.iter_mut() {
        if resource.address.kind != ResourceKind::LoadBalancer {
            continue;
        }
        for (policy, cluster) in &policies {
            if resource.depends_on.contains(cluster) && !resource.depends_on.contains(policy) {
                resource.depends_on.push(policy.clone());
            }
        }
    }
}

/// Exactly one of `selector` and `names`.
fn selection(raw: &Sourced<'_, RawNodePolicy>, check: &mut Checker<'_, '_>) -> NodeSelection {
    let section = raw.get();
    match (&section.selector, &section.names) {
        (Some(selector), None) => {
            let parse = |text: &str| {
                LabelSelector::parse(text).map_err(|why| {
                    Invalid::new(format!("not a label selector: {why}")).help(SELECTOR_HELP)
                })
            };
            check.text(selector, parse);
            NodeSelection::Selector(selector.get_ref().clone())
        }
        (None, Some(names)) => NodeSelection::Names(globs(names, check)),
        (Some(_), Some(names)) => {
            let invalid = Invalid::new("selector and names exclude each other")
                .help("select the nodes by labels (selector) or by name (names), not both");
            check.report(names.span(), invalid);
            NodeSelection::Names(vec![])
        }
        (None, None) => {
            let problem = Problem::at(
                check.file,
                raw.span(),
                "a node policy needs selector or names",
            )
            .with_help(
                "add selector = \"node-role.kubernetes.io/worker\" or names = [\"worker-*\"]",
            );
            check.push(problem);
            NodeSelection::Names(vec![])
        }
    }
}

const SELECTOR_HELP: &str =
    "kubectl's syntax: `key`, `!key`, `key=value`, `key!=value`, `key in (a,b)`, `key notin (a)`, joined by commas";

fn globs(names: &Spanned<Vec<Spanned<String>>>, check: &mut Checker<'_, '_>) -> Vec<String> {
    if names.get_ref().is_empty() {
        let invalid = Invalid::new("names selects no node")
            .help("list node names or globs, e.g. [\"worker-*\"]");
        check.report(names.span(), invalid);
    }
    let glob = |text: &str| match text.is_empty() {
        true => Err(Invalid::new("an empty name matches no node")),
        false => Ok(text.to_string()),
    };
    check.texts(names.get_ref(), glob)
}

fn labels(
    raw: &BTreeMap<Spanned<String>, Spanned<String>>,
    check: &mut Checker<'_, '_>,
) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    for (key, value) in raw {
        let key_ok = check.text(key, label_key).is_some();
        let value_ok = check.text(value, label_value).is_some();
        if key_ok && value_ok {
            labels.insert(key.get_ref().clone(), value.get_ref().clone());
        }
    }
    labels
}

fn label_key(text: &str) -> Result<(), Invalid> {
    check_key(text).map_err(|why| {
        Invalid::new(format!("`{text}` is not a label key: {why}")).help(
            "a key is [prefix/]name: the prefix a DNS subdomain, the name at most 63 characters",
        )
    })
}

fn label_value(text: &str) -> Result<(), Invalid> {
    check_value(text).map_err(|why| {
        Invalid::new(format!("`{text}` is not a label value: it {why}")).help(
            "at most 63 characters: alphanumerics, '-', '_', '.', starting and ending alphanumeric",
        )
    })
}

fn taints(raw: &[Spanned<RawTaint>], check: &mut Checker<'_, '_>) -> Vec<TaintSpec> {
    let mut seen: HashMap<(String, TaintEffect), ()> = HashMap::new();
    let mut taints = Vec::new();
    for taint in raw {
        let section = taint.get_ref();
        let key = check
            .text(&section.key, label_key)
            .map(|()| section.key.get_ref().clone());
        let value = match &section.value {
            Some(value) => check
                .text(value, label_value)
                .map(|()| Some(value.get_ref().clone())),
            None => Some(None),
        };
        let effect = check.text(&section.effect, values::choice::<TaintEffect>);
        let (Some(key), Some(value), Some(effect)) = (key, value, effect) else {
            continue;
        };
        if seen.insert((key.clone(), effect), ()).is_some() {
            let invalid = Invalid::new(format!("taint `{key}:{effect}` is listed twice"))
                .help("a node holds one taint per key and effect; keep one");
            check.report(taint.span(), invalid);
            continue;
        }
        taints.push(TaintSpec { key, value, effect });
    }
    taints
}

/// Rules that need the whole config: a policy's cluster is declared (a cluster skyplan
/// connects to, or a CKS cluster, reached with its own kubeconfig).
pub(super) fn validate(raw: &RawConfig<'_>, problems: &mut Problems) {
    for policy in raw.node_policies.values() {
        let mut check = Checker::new(policy.file, problems);
        let cluster = &policy.get().cluster;
        let name = cluster.get_ref();
        // A CloudStack (CKS) cluster is reached through the kubeconfig CloudStack gives.
        let names = raw.cluster_names();
        if names.contains(&name.as_str()) {
            continue;
        }
        let invalid = Invalid::new(format!(
            "cluster `{name}` is not a [cluster.NAME] in this config"
        ))
        .help(match names.is_empty() {
            true => "declare it: [cluster.NAME] with provider = \"kubernetes\"".to_string(),
            false => format!("declared clusters: {}", names.join(", ")),
        });
        check.report(cluster.span(), invalid);
    }
}
