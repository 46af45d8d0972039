//! The provider registry: which providers exist, how each is connected from its config table,
//! and how each resource kind appears in the object graph. Adding a provider touches this file,
//! the config and the provider's own folder — not the pipeline.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::config::{Config, ConfigSection, Endpoint, KubernetesBackend, Settings};
use crate::graph::{ObjectGraph, ObjectKey};
use crate::model::Address;
use crate::provider::{Provider, ProviderError};
use crate::state::{StateBackend, StateError};
use crate::workspace::Providers;
use futures::future::BoxFuture;
use skyplan_cloudscale::spec::CloudscaleSettings;
use skyplan_cloudscale::CloudscaleProvider;
use skyplan_cloudstack::provider::CloudstackProvider;
use skyplan_cloudstack::spec::{
    CloudstackClusterSpec, CloudstackEndpoint, CloudstackLoadBalancerSpec, CloudstackSettings,
};
use skyplan_kubernetes::connection::ClusterConnection;
use skyplan_kubernetes::spec::{KubeAccess, KubernetesClusterSpec, NodePolicySpec};
use skyplan_kubernetes::{ClusterCloud, KubernetesProvider};
use skyplan_phoenixnap::spec::PhoenixnapSettings;
use skyplan_phoenixnap::PhoenixnapProvider;
use skyplan_sim::controllers::EmbeddedClouds;

use crate::embedded;

/// The providers' sections of the config language, in the order messages list them.
pub const CONFIG_SECTIONS: &[&dyn ConfigSection] = &[
    &skyplan_kubernetes::KubernetesConfig,
    &skyplan_cloudscale::CloudscaleConfig,
    &skyplan_cloudstack::CloudstackConfig,
    &skyplan_phoenixnap::PhoenixnapConfig,
];

/// The state backend the settings name. `[backend.kubernetes]` is kept by the Kubernetes
/// crate, which core does not depend on: it is opened from here.
pub fn open_state(settings: &Settings) -> Result<Box<dyn StateBackend>, StateError> {
    crate::state::open(settings, open_kubernetes_state)
}

fn open_kubernetes_state(
    settings: &KubernetesBackend,
) -> Result<Box<dyn StateBackend>, StateError> {
    Ok(Box::new(skyplan_kubernetes::state::KubeBackend::open(
        settings,
    )?))
}

/// Connects every provider the config has a table for: the clouds first, then — when the
/// config has `provider = "kubernetes"` clusters — the Kubernetes provider (an embedded
/// cluster's nodes are VMs of the embedded cloudscale, and node-metadata drift reads the
/// clouds' VMs), then hands the connected clusters to every cloud.
pub fn connect(config: &Config) -> BoxFuture<'_, Result<Providers, ProviderError>> {
    Box::pin(connect_all(config))
}

async fn connect_all(config: &Config) -> Result<Providers, ProviderError> {
    let state_dir = &config.settings.state_dir;
    // The clouds stay clouds until the clusters are handed to them.
    let mut clouds: Vec<Box<dyn ClusterCloud>> = Vec::new();
    let mut clouds_beside = EmbeddedClouds::default();
    let mut cks_clusters = BTreeMap::new();
    if let Some(settings) = config
        .providers
        .get::<CloudscaleSettings>(skyplan_cloudscale::diff::PROVIDER)
    {
        let started = match settings.endpoint {
            Endpoint::Embedded => {
                let (given, endpoint) = embedded::cloudscale(state_dir).await?;
                clouds_beside.cloudscale = Some(endpoint);
                Some(given)
            }
            Endpoint::Url(_) => None,
        };
        clouds.push(Box::new(
            CloudscaleProvider::connect(settings, started).await?,
        ));
    }
    if let Some(settings) = config
        .providers
        .get::<CloudstackSettings>(skyplan_cloudstack::PROVIDER)
    {
        let started = match settings.endpoint {
            CloudstackEndpoint::Embedded => Some(embedded::cloudstack(state_dir).await?),
            CloudstackEndpoint::CloudConfig(_) => None,
        };
        let provider = CloudstackProvider::connect(&settings.endpoint, started).await?;
        cks_clusters = connect_cks_clusters(config, &provider).await?;
        clouds.push(Box::new(provider));
    }
    if let Some(settings) = config
        .providers
        .get::<PhoenixnapSettings>(skyplan_phoenixnap::diff::PROVIDER)
    {
        let (started, base_url) = match settings.endpoint {
            Endpoint::Embedded => {
                let (given, base_url) = embedded::phoenixnap(state_dir).await?;
                (Some(given), Some(base_url))
            }
            Endpoint::Url(_) => (None, None),
        };
        let provider = PhoenixnapProvider::connect(settings, started).await?;
        if let Some(base_url) = base_url {
            clouds_beside.phoenixnap = embedded::phoenixnap_ccm(&provider, base_url).await?;
        }
        clouds.push(Box::new(provider));
    }
    let has_clusters = !cks_clusters.is_empty()
        || config
            .resources
            .iter()
            .any(|r| r.provider == skyplan_kubernetes::PROVIDER);
    let mut providers = Providers::new();
    if has_clusters {
        let embedded = embedded::Clusters {
            clouds: clouds_beside,
        };
        let instances = clouds.iter().map(|cloud| cloud.instances()).collect();
        let kubernetes =
            KubernetesProvider::connect(config, Some(&embedded), instances, cks_clusters).await?;
        let clusters = kubernetes.clusters();
        for cloud in &clouds {
            cloud.attach_clusters(Arc::clone(&clusters));
        }
        providers.insert(kubernetes.name().to_string(), Box::new(kubernetes));
    }
    for cloud in clouds {
        providers.insert(cloud.name().to_string(), cloud);
    }
    Ok(providers)
}

/// Whether everything the config reaches is a simulator skyplan starts itself (`endpoint =
/// "embedded"` for each cloud, `endpoint = "embedded"` for each Kubernetes cluster): only then
/// may `apply --now` pretend a time, since apply changes nothing real whatever time it takes.
pub fn only_embedded(config: &Config) -> bool {
    let clouds = [
        skyplan_cloudscale::diff::PROVIDER,
        skyplan_cloudstack::PROVIDER,
        skyplan_phoenixnap::diff::PROVIDER,
    ];
    let clusters = (config.resources.iter())
        .filter_map(|r| r.spec.get::<KubernetesClusterSpec>())
        .all(|cluster| cluster.access == KubeAccess::Embedded);
    clouds.iter().all(|cloud| {
        !config.providers.sections.contains_key(cloud) || embedded_cloud(config, cloud)
    }) && clusters
}

/// Whether the config has cloud `provider`'s table with `endpoint = "embedded"`: a simulator
/// that runs only while a skyplan command does.
pub fn embedded_cloud(config: &Config, provider: &str) -> bool {
    let providers = &config.providers;
    match provider {
        skyplan_cloudscale::diff::PROVIDER => providers
            .get::<CloudscaleSettings>(provider)
            .is_some_and(|s| matches!(s.endpoint, Endpoint::Embedded)),
        skyplan_cloudstack::PROVIDER => providers
            .get::<CloudstackSettings>(provider)
            .is_some_and(|s| matches!(s.endpoint, CloudstackEndpoint::Embedded)),
        skyplan_phoenixnap::diff::PROVIDER => providers
            .get::<PhoenixnapSettings>(provider)
            .is_some_and(|s| matches!(s.endpoint, Endpoint::Embedded)),
        _ => false,
    }
}

/// The CKS clusters node policies and controller-mode load balancers are about, connected through the kubeconfig CloudStack
/// gives for each (`getKubernetesClusterConfig`). Only clusters that exist and run have one:
/// the others' policies plan "nodes unknown until the cluster exists". Clusters nothing
/// names cost no request.
async fn connect_cks_clusters(
    config: &Config,
    cloudstack: &CloudstackProvider,
) -> Result<BTreeMap<Address, ClusterConnection>, ProviderError> {
    let wanted: BTreeSet<&Address> = config
        .resources
        .iter()
        .filter_map(|r| match r.spec.get::<NodePolicySpec>() {
            Some(policy) => Some(&policy.cluster),
            None => (r.spec.get::<CloudstackLoadBalancerSpec>())
                .and_then(|lb| lb.binding.as_ref())
                .map(|b| &b.cluster),
        })
        .collect();
    let mut connections = BTreeMap::new();
    for resource in &config.resources {
        let Some(spec) = resource.spec.get::<CloudstackClusterSpec>() else {
            continue;
        };
        if !wanted.contains(&resource.address) {
            continue;
        }
        if let Some(kubeconfig) = cloudstack.running_cluster_kubeconfig(&spec.name).await? {
            let connection = skyplan_kubernetes::connect::connect_with_kubeconfig(
                &resource.address,
                &kubeconfig,
            )
            .await?;
            connections.insert(resource.address.clone(), connection);
        }
    }
    Ok(connections)
}

/// The object graph of the configured resources; resources others depend on (clusters) are
/// added first, so that their dependants can point at them.
pub fn graph(config: &Config) -> ObjectGraph {
    let mut graph = ObjectGraph::new();
    let mut clusters: BTreeMap<&Address, ObjectKey> = BTreeMap::new();
    for resource in &config.resources {
        if let Some(spec) = resource.spec.get::<CloudstackClusterSpec>() {
            skyplan_cloudstack::graph::add_cluster(&mut graph, &resource.address, spec);
            let key = skyplan_cloudstack::graph::cluster_key(&resource.address, spec);
            clusters.insert(&resource.address, key);
        }
    }
    // Clusters skyplan only connects to, and node policies, have no cloud objects (a CKS
    // cluster was drawn above): `link_resources` draws them as themselves.
    for resource in &config.resources {
        let (address, spec) = (&resource.address, &resource.spec);
        if let Some(spec) = spec.get() {
            skyplan_cloudscale::order::add_to_graph(&mut graph, address, spec)
        }
        if let Some(spec) = spec.get::<CloudstackLoadBalancerSpec>() {
            let cluster = skyplan_cloudstack::graph::members_cluster(spec);
            let cluster = cluster.as_ref().and_then(|c| clusters.get(c));
            skyplan_cloudstack::graph::add_load_balancer(&mut graph, address, spec, cluster);
        }
        if let Some(spec) = spec.get() {
            skyplan_phoenixnap::add_to_graph(&mut graph, address, spec)
        }
    }
    graph.link_resources(
        config
            .resources
            .iter()
            .map(|r| (&r.address, r.depends_on.as_slice())),
    );
    graph
}

/// `docs/impact.md`: every provider's impact tables, as the code holds them — the reference
/// an operator reviews a plan's classes against. Generated; `impact_reference_is_up_to_date`
/// fails when the committed file is stale (only the test renders it).
#[cfg(test)]
fn impact_reference() -> String {
    use crate::provider::impact_table::markdown;
    let sections = [
        markdown(
            "cloudscale load balancers (direct mode)",
            "skyplan changes the load balancer's objects itself through the cloudscale API v1 \
             (`crates/cloudscale/src/impact.rs`). The classes follow what the API allows in place \
             and what the cloudscale CCM 1.3.0 keys its objects by (`pkg/cloudscale_ccm/reconcile.go`).",
            skyplan_cloudscale::impact::RULES,
        ),
        markdown(
            "cloudscale load balancers (controller mode, `mode = \"ccm\"`)",
            "skyplan writes the Service; the cloudscale CCM 1.3.0 changes the load balancer \
             (`pkg/cloudscale_ccm/reconcile.go` `nextLbActions`: 500 ms after each delete, 5 s \
             between a pool's deletes and creates). Where the CCM's README and its code disagree, \
             the row follows the code (`crates/cloudscale/src/ccm/impact.rs`).",
            skyplan_cloudscale::ccm::impact::RULES,
        ),
        markdown(
            "CloudStack Kubernetes Service clusters",
            "CKS clusters skyplan creates and changes through the CloudStack 4.22 API \
             (`KubernetesClusterManagerImpl`; `crates/cloudstack/src/cluster/impact.rs`).",
            skyplan_cloudstack::cluster::impact::RULES,
        ),
        markdown(
            "CloudStack load-balancer rules (direct mode)",
            "skyplan changes the rules, their public IP and their VMs through the CloudStack 4.22 \
             API (`crates/cloudstack/src/lb/impact.rs`).",
            skyplan_cloudstack::lb::impact::RULES,
        ),
        markdown(
            "CloudStack load-balancer rules (controller mode)",
            "skyplan writes the Service; the CloudStack CCM v1.2.0 \
             (apache/cloudstack-kubernetes-provider, `cloudstack_loadbalancer.go`) changes the \
             rules (`crates/cloudstack/src/lb/ccm/impact.rs`).",
            skyplan_cloudstack::lb::ccm::impact::RULES,
        ),
        markdown(
            "PhoenixNAP IP blocks for kube-vip",
            "skyplan makes the /29 block the PhoenixNAP CCM v1.0.0 adopts for a Service and gives \
             the Service its third address (`crates/phoenixnap/src/impact.rs`).",
            skyplan_phoenixnap::impact::RULES,
        ),
        markdown(
            "Kubernetes nodes (node policies)",
            "skyplan patches the labels and taints of a cluster's nodes; the service controller's \
             node predicates decide what a load balancer then does (`crates/kubernetes/src/nodes/impact.rs`).",
            skyplan_kubernetes::nodes::impact::RULES,
        ),
    ];
    format!(
        "# What each change really does\n\n\
         Generated from the impact tables in the code — the one place each class is decided — by \
         `SKYPLAN_UPDATE_DOCS=1 cargo test --bin skyplan impact_reference`; a test fails when this \
         file is stale. Classes, from least to most disruptive: `none` (nothing that serves \
         traffic is touched), `minimal` (brief, a few seconds at most), `pool-recreate` (a \
         port's pool is deleted and made again: that port serves nothing meanwhile), \
         `forbidden` (apply refuses unless named with `--replace`/`--allow-delete`: an address, \
         a cluster or workloads are lost). A plan never shows a lower class than what apply \
         then does.\n\n{}",
        sections.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails when the committed file at `relative` is not `generated`; with the environment
    /// variable `update` set, it is rewritten first.
    fn assert_committed(relative: &str, generated: &str, update: &str, test: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        if std::env::var_os(update).is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{relative} is out of date; regenerate it with `{update}=1 cargo test --bin skyplan {test}`"
        );
    }

    /// The committed JSON schema is the config's; `SKYPLAN_UPDATE_SCHEMA=1` rewrites it.
    #[test]
    fn committed_schema_is_up_to_date() {
        let schema = crate::config::json_schema(CONFIG_SECTIONS);
        let generated = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        assert_committed(
            "schemas/skyplan.schema.json",
            &generated,
            "SKYPLAN_UPDATE_SCHEMA",
            "registry",
        );
    }

    /// docs/impact.md is the impact tables'; `SKYPLAN_UPDATE_DOCS=1` rewrites it.
    #[test]
    fn impact_reference_is_up_to_date() {
        assert_committed(
            "docs/impact.md",
            &impact_reference(),
            "SKYPLAN_UPDATE_DOCS",
            "impact_reference",
        );
    }

    /// What a user sees who names a provider for a kind it has no tables of.
    #[test]
    fn a_table_of_the_wrong_provider_is_told_which_providers_take_it() {
        let text = "[provider.cloudscale]\n[cluster.c]\nprovider = \"cloudscale\"\n\
                    [load-balancer.a]\nprovider = \"aws\"\n";
        let root = std::path::Path::new("cfg");
        let error =
            crate::config::load_texts(root, &[("a.toml", text)], CONFIG_SECTIONS).unwrap_err();
        assert_eq!(
            error.lines(),
            [
                "a.toml:3:12: `cloudscale` cannot manage clusters",
                "a.toml:5:12: `aws` is not a supported provider",
            ]
        );
        let helps: Vec<_> = error.problems().iter().map(|p| p.help_text()).collect();
        assert_eq!(
            helps,
            [
                Some("write provider = \"kubernetes\" (an existing cluster skyplan connects to) or \"cloudstack\" (a cluster skyplan creates)"),
                Some("expected one of \"cloudscale\", \"cloudstack\", \"phoenixnap\""),
            ]
        );
    }

    #[test]
    fn each_section_names_a_provider_of_its_own() {
        let mut names: Vec<_> = CONFIG_SECTIONS.iter().map(|s| s.provider()).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "{names:?}");
    }
}
