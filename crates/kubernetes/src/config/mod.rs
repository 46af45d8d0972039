//! Kubernetes' config section: `[cluster.NAME]` with provider "kubernetes" (how skyplan reaches
//! the cluster) and `[nodes.NAME]` policies (which name no provider: every one is Kubernetes').
//! Each bad value is reported at its position; resolving goes on so one run reports
//! everything.

mod raw;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use schemars::SchemaGenerator;
use serde_spanned::Spanned;
use skyplan_core::config::section::{
    self as values, Checker, ConfigSection, Declared, Invalid, PerObjectAttributes, Problem,
    Problems, Raw, Resolving, Resource, ResourceSpec, SectionSchema, Table,
};
use skyplan_core::model::{Address, ResourceKind};
use toml::de::ValueDeserializer;

use crate::labels::{check_key, check_value, LabelSelector};
use crate::spec::{
    KubeAccess, KubernetesClusterSpec, NodePolicySpec, NodeSelection, TaintEffect, TaintSpec,
};
use crate::PROVIDER;
use raw::{RawKubeCluster, RawNodePolicy, RawTaint};

/// The section the registry lists.
pub struct KubernetesConfig;

impl ConfigSection for KubernetesConfig {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn kinds(&self) -> &'static [ResourceKind] {
        &[ResourceKind::Cluster]
    }

    fn unnamed_kinds(&self) -> &'static [ResourceKind] {
        &[ResourceKind::Nodes]
    }

    fn has_settings(&self) -> bool {
        false
    }

    fn describe(&self, kind: ResourceKind) -> Option<&'static str> {
        (kind == ResourceKind::Cluster).then_some("an existing cluster skyplan connects to")
    }

    /// A node policy is planned per node: `nodes.NODE.labels.KEY`, `nodes.NODE.taints.ID`.
    fn attributes_per_object(&self, kind: ResourceKind) -> Option<PerObjectAttributes> {
        (kind == ResourceKind::Nodes).then_some(PerObjectAttributes {
            collection: "nodes",
            check: crate::nodes::diff::check_attribute_path,
        })
    }

    fn parse_resource(
        &self,
        kind: ResourceKind,
        table: ValueDeserializer<'_>,
    ) -> Result<Raw, toml::de::Error> {
        match kind {
            ResourceKind::Nodes => values::raw::<RawNodePolicy>(table),
            _ => values::raw::<RawKubeCluster>(table),
        }
    }

    fn resource(
        &self,
        kind: ResourceKind,
        key: &str,
        table: &Table<'_>,
        _context: &Resolving<'_>,
        problems: &mut Problems,
    ) -> Resource {
        match kind {
            ResourceKind::Nodes => node_policy(key, table, problems),
            _ => cluster(key, table, problems),
        }
    }

    fn validate(&self, declared: &Declared<'_, '_>, problems: &mut Problems) {
        validate(declared, problems)
    }

    fn real_cluster_at(&self, table: &Table<'_>) -> Option<Range<usize>> {
        let cluster = table.try_get::<RawKubeCluster>()?;
        if cluster.endpoint.is_some() {
            return None;
        }
        let kubeconfig = cluster.kubeconfig.as_ref();
        Some(kubeconfig.map_or_else(|| table.span(), |k| table.file.key_span(&k.span())))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> SectionSchema {
        SectionSchema {
            settings: None,
            resources: vec![
                (
                    ResourceKind::Cluster,
                    generator.subschema_for::<RawKubeCluster>(),
                ),
                (
                    ResourceKind::Nodes,
                    generator.subschema_for::<RawNodePolicy>(),
                ),
            ],
        }
    }
}

fn cluster(key: &str, raw: &Table<'_>, problems: &mut Problems) -> Resource {
    let mut check = Checker::new(raw.file, problems);
    Resource {
        address: Address::new(ResourceKind::Cluster, key),
        provider: PROVIDER.to_string(),
        location: raw.location(),
        keys: Default::default(),
        spec: ResourceSpec::new(KubernetesClusterSpec {
            access: access(raw.get(), &mut check),
        }),
        depends_on: vec![],
        origin: Default::default(),
    }
}

fn access(raw: &RawKubeCluster, check: &mut Checker<'_, '_>) -> KubeAccess {
    if let Some(endpoint) = &raw.endpoint {
        if endpoint.get_ref() != "embedded" {
            let invalid = Invalid::new(format!("`{}` is not an endpoint", endpoint.get_ref()))
                .help(
                "write endpoint = \"embedded\", or reach the cluster with kubeconfig and context",
            );
            check.report(endpoint.span(), invalid);
        }
        let others = [
            raw.kubeconfig.as_ref().map(|k| k.span()),
            raw.context.as_ref().map(|c| c.span()),
            raw.in_cluster.as_ref().map(|b| b.span()),
        ];
        for span in others.into_iter().flatten() {
            let invalid =
                Invalid::new("endpoint = \"embedded\" excludes kubeconfig, context and in-cluster")
                    .help("the embedded cluster needs no credentials; keep one of the two");
            check.report(span, invalid);
        }
        return KubeAccess::Embedded;
    }
    if raw.in_cluster.as_ref().is_some_and(|b| *b.get_ref()) {
        for other in [&raw.kubeconfig, &raw.context].into_iter().flatten() {
            let invalid = Invalid::new("in-cluster = true excludes kubeconfig and context")
                .help("in a pod, the service account is the credential; keep one of the two");
            check.report(other.span(), invalid);
        }
        return KubeAccess::InCluster;
    }
    KubeAccess::Kubeconfig {
        path: raw.kubeconfig.as_ref().map(|p| check.file.path_value(p)),
        context: raw.context.as_ref().map(|c| c.get_ref().clone()),
    }
}

fn node_policy(key: &str, raw: &Table<'_>, problems: &mut Problems) -> Resource {
    let mut check = Checker::new(raw.file, problems);
    let section: &RawNodePolicy = raw.get();
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
        location: raw.location(),
        keys: Default::default(),
        spec: ResourceSpec::new(spec),
        depends_on: vec![cluster],
        origin: Default::default(),
    }
}

/// Exactly one of `selector` and `names`.
fn selection(raw: &Table<'_>, check: &mut Checker<'_, '_>) -> NodeSelection {
    let section: &RawNodePolicy = raw.get();
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
fn validate(declared: &Declared<'_, '_>, problems: &mut Problems) {
    let names = declared.cluster_names();
    for (_, policy) in declared.tables(ResourceKind::Nodes) {
        let mut check = Checker::new(policy.file, problems);
        let cluster = &policy.get::<RawNodePolicy>().cluster;
        let name = cluster.get_ref();
        // A CloudStack (CKS) cluster is reached through the kubeconfig CloudStack gives.
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

/// `namespace/name`, both DNS-1123 labels as Kubernetes requires.
pub fn service_ref(text: &str) -> Result<(String, String), Invalid> {
    let help = "write namespace/name, e.g. \"default/shop\"";
    let Some((namespace, name)) = text.split_once('/') else {
        return Err(Invalid::new(format!("`{text}` is not namespace/name")).help(help));
    };
    for part in [namespace, name] {
        if !values::is_dns_label(part, 63) {
            return Err(Invalid::new(format!(
                "`{part}` is not a valid Kubernetes name (lower-case letters, digits and '-', at most 63)"
            ))
            .help(help));
        }
    }
    Ok((namespace.to_string(), name.to_string()))
}

#[cfg(test)]
mod tests;
