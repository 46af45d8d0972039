//! The Kubernetes [`Provider`]: one connection per `[cluster.*]` with provider "kubernetes".
//! A cluster is never created or deleted (its plan is a no-op; removed from the config it is
//! only forgotten) and its drift is node-metadata drift; a node policy is planned against the
//! nodes it selects and applied one node patch at a time. Its discovery lists the
//! LoadBalancer Services of every connected cluster (`discover.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Node, Service};
use serde_json::json;

use super::conflict::Backoff;
use super::connection::{ClusterConnection, Clusters};
use super::embedded::EmbeddedClusters;
use super::instances::{CloudInstance, CloudInstances};
use super::metadata::{self, Cloud};
use super::nodes::diff::nothing_left_alone;
use super::nodes::impact::{rule, Change};
use super::nodes::live::LiveNode;
use super::nodes::{self, patch, PolicyInput};
use super::ops as kube_ops;
use super::{connect, PROVIDER};
use crate::spec::{KubernetesClusterSpec, NodePolicySpec};
use skyplan_core::config::Config;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::{Action, AttributeChange, Record, ResourceChange};
use skyplan_core::provider::discover::Discovered;
use skyplan_core::provider::{
    Applied, DriftCheck, Health, PlanOptions, Provider, ProviderError, Refreshed, Target,
};
use skyplan_core::state::journal::{Journal, Phase};
use skyplan_core::state::ResourceState;

pub struct KubernetesProvider {
    connections: BTreeMap<Address, Arc<ClusterConnection>>,
    clusters: Arc<Clusters>,
    /// The connected clouds' VMs, for node-metadata drift.
    clouds: Vec<Arc<dyn CloudInstances>>,
}

/// What a refresh read: the nodes of each cluster a target is about, as the policy diff sees
/// them, and, when a cluster in the config is among the targets, every connected cloud's VMs
/// (for node-metadata drift). The Nodes themselves stay in the cluster's connection, which
/// lists them once per run for every provider.
#[derive(Default)]
struct Live {
    nodes: BTreeMap<Address, Vec<LiveNode>>,
    instances: Vec<(&'static str, Vec<CloudInstance>)>,
    /// A survey's (discovery's) listing: every connected cluster's Services.
    services: BTreeMap<Address, Vec<Service>>,
}

impl Live {
    fn of(refreshed: &Refreshed) -> Result<&Live, ProviderError> {
        refreshed.downcast_ref(PROVIDER)
    }

    /// The nodes of the cluster a target is about, if refresh read them.
    fn nodes_of(&self, target: &Target<'_>) -> Option<&[LiveNode]> {
        let cluster = KubernetesProvider::cluster_of(target)?;
        self.nodes.get(&cluster).map(Vec::as_slice)
    }
}

impl KubernetesProvider {
    /// Connects every `[cluster.*]` of provider kubernetes in the config; `embedded` starts
    /// the embedded ones. `clouds_clusters`
    /// are the clusters a cloud created and gave the kubeconfig of (CKS), already connected.
    pub async fn connect(
        config: &Config,
        embedded: Option<&dyn EmbeddedClusters>,
        clouds: Vec<Arc<dyn CloudInstances>>,
        clouds_clusters: BTreeMap<Address, ClusterConnection>,
    ) -> Result<KubernetesProvider, ProviderError> {
        let mut connections: BTreeMap<Address, Arc<ClusterConnection>> = clouds_clusters
            .into_iter()
            .map(|(address, connection)| (address, Arc::new(connection)))
            .collect();
        for resource in &config.resources {
            let Some(spec) = resource.spec.get::<KubernetesClusterSpec>() else {
                continue;
            };
            let state_dir: &Path = &config.settings.state_dir;
            let connection =
                connect::connect(&resource.address, &spec.access, state_dir, embedded).await?;
            connections.insert(resource.address.clone(), Arc::new(connection));
        }
        let clusters = Arc::new(Clusters::default());
        clusters.set(connections.clone());
        Ok(KubernetesProvider {
            connections,
            clusters,
            clouds,
        })
    }

    /// The connected clusters, for the cloud providers' `attach_clusters`.
    pub fn clusters(&self) -> Arc<Clusters> {
        self.clusters.clone()
    }

    /// The cluster a target is about: itself, or a policy's cluster.
    fn cluster_of(target: &Target<'_>) -> Option<Address> {
        match target.address.kind {
            ResourceKind::Cluster => Some(target.address.clone()),
            _ => desired_policy(target)
                .map(|p| p.cluster.clone())
                .or_else(|| applied_policy(target).map(|p| p.cluster)),
        }
    }

    async fn refresh_targets(&self, targets: &[Target<'_>]) -> Result<Live, ProviderError> {
        let mut live = Live::default();
        for cluster in targets.iter().filter_map(Self::cluster_of) {
            if live.nodes.contains_key(&cluster) {
                continue;
            }
            if let Some(connection) = self.connections.get(&cluster) {
                let nodes = connection.nodes().await?;
                let nodes = nodes.iter().map(LiveNode::from_node).collect();
                live.nodes.insert(cluster, nodes);
            }
        }
        self.plan_nodes(targets, &live);
        let wants_metadata = targets
            .iter()
            .any(|t| t.address.kind == ResourceKind::Cluster && t.resource.is_some());
        if wants_metadata {
            for cloud in &self.clouds {
                live.instances
                    .push((cloud.scheme(), cloud.instances().await?));
            }
        }
        Ok(live)
    }

    /// A refresh, and every connected cluster's Services (each listed once per run, shared
    /// with the clouds through the connection).
    async fn survey_targets(&self, targets: &[Target<'_>]) -> Result<Live, ProviderError> {
        let mut live = self.refresh_targets(targets).await?;
        let reads = self
            .connections
            .iter()
            .map(|(address, connection)| async move {
                let services = connection.services().await?.to_vec();
                Ok::<_, ProviderError>((address.clone(), services))
            });
        live.services = futures::future::try_join_all(reads)
            .await?
            .into_iter()
            .collect();
        Ok(live)
    }

    /// Hands each cluster the nodes as its policies will leave them, for the load balancers
    /// whose members follow node labels and taints: the clouds plan after every refresh, and
    /// read them from the connection they share with this provider.
    fn plan_nodes(&self, targets: &[Target<'_>], live: &Live) {
        for (cluster, live_nodes) in &live.nodes {
            let Some(connection) = self.connections.get(cluster) else {
                continue;
            };
            let Some(nodes) = connection.cached_nodes() else {
                continue;
            };
            let changes: Vec<ResourceChange> = targets
                .iter()
                .filter(|t| t.address.kind == ResourceKind::Nodes)
                .filter(|t| Self::cluster_of(t).as_ref() == Some(cluster))
                .map(|t| {
                    // As apply leaves them: what `ignore-changes` covers stays as it is.
                    let ignored = |path: &str| ignored_by(t, path);
                    nodes::plan(&self.policy_input(t, Some(live_nodes), &ignored))
                })
                .collect();
            let ops: Vec<super::ops::Op> = changes
                .iter()
                .flat_map(|c| &c.operations)
                .filter_map(super::ops::Op::of)
                .collect();
            let ops: Vec<&super::ops::Op> = ops.iter().collect();
            connection.set_planned_nodes(nodes::planned_nodes(nodes, &ops));
        }
    }

    fn policy_input<'a>(
        &self,
        target: &Target<'a>,
        nodes: Option<&'a [LiveNode]>,
        left_alone: &'a dyn Fn(&str) -> bool,
    ) -> PolicyInput<'a> {
        PolicyInput {
            address: target.address,
            desired: desired_policy(target),
            applied: applied_policy(target),
            nodes,
            left_alone,
        }
    }

    fn cluster_drift(&self, target: &Target<'_>, live: &Live) -> DriftCheck {
        let Some(nodes) = self
            .connections
            .get(target.address)
            .and_then(|c| c.cached_nodes())
        else {
            return DriftCheck::Compared(vec![]);
        };
        let clouds: Vec<Cloud<'_>> = live
            .instances
            .iter()
            .map(|(scheme, vms)| Cloud {
                scheme,
                instances: vms,
            })
            .collect();
        DriftCheck::Compared(metadata::drift(nodes, &clouds))
    }

    /// Patches each node of the change. A node that cannot be patched — changed since the plan
    /// in a key the policy manages, or refused by the API — does not stop the others: each is
    /// tried, and the failures are reported together.
    async fn apply_policy(
        &self,
        change: &ResourceChange,
        prior: Option<&ResourceState>,
        journal: &Journal,
    ) -> Result<Vec<(kube_ops::Op, Node)>, ProviderError> {
        let address = &change.address;
        let cluster = self.policy_cluster(change, prior)?;
        let mut patched = Vec::new();
        let mut failures = Vec::new();
        for operation in &change.operations {
            let Some(op) = crate::ops::Op::of(operation) else {
                return Err(ProviderError::new(
                    address,
                    format!("not a Kubernetes operation: {operation}"),
                ));
            };
            let text = op.to_string();
            let journal_error = |e: skyplan_core::state::StateError| ProviderError::new(address, e);
            journal
                .record(address, Phase::Intent, &text, None, None)
                .map_err(journal_error)?;
            match patch::patch_node(&cluster, &op, Backoff::default()).await {
                Ok(node) => {
                    let ids = json!({ "node": op.node, "resourceVersion": node.metadata.resource_version });
                    journal
                        .record(address, Phase::Done, &text, Some(ids), None)
                        .map_err(journal_error)?;
                    patched.push((op.clone(), node));
                }
                Err(e) => {
                    journal
                        .record(address, Phase::Failed, &text, None, Some(e.to_string()))
                        .map_err(journal_error)?;
                    failures.push(e.to_string());
                }
            }
        }
        match failures.is_empty() {
            true => Ok(patched),
            false => Err(ProviderError::new(address, failures.join("\n"))),
        }
    }

    /// The connection of the cluster whose nodes a policy change patches: the policy's as
    /// planned, or — for a policy removed from the config — as last applied.
    fn policy_cluster(
        &self,
        change: &ResourceChange,
        prior: Option<&ResourceState>,
    ) -> Result<Arc<ClusterConnection>, ProviderError> {
        let spec = |value: Option<serde_json::Value>| {
            value.and_then(|v| serde_json::from_value::<NodePolicySpec>(v).ok())
        };
        let cluster = spec(change.record.as_ref().map(Record::to_value))
            .or_else(|| spec(prior.map(|p| p.attributes.clone())))
            .map(|s| s.cluster);
        cluster
            .and_then(|c| self.connections.get(&c).cloned())
            .ok_or_else(|| ProviderError::new(&change.address, "its cluster is not connected"))
    }
}

/// Whether the target's `ignore-changes` covers the attribute at `path`.
fn ignored_by(target: &Target<'_>, path: &str) -> bool {
    target.resource.is_some_and(|r| r.origin.ignores(path))
}

fn desired_policy<'a>(target: &Target<'a>) -> Option<&'a NodePolicySpec> {
    target.resource?.spec.get()
}

fn applied_policy(target: &Target<'_>) -> Option<NodePolicySpec> {
    serde_json::from_value(target.prior?.attributes.clone()).ok()
}

fn cluster_record(target: &Target<'_>) -> Option<Record> {
    let spec: &KubernetesClusterSpec = target.resource?.spec.get()?;
    Some(Record::of(spec))
}

/// A cluster is never created or deleted: in the config it is a no-op (recorded so the state
/// knows it); gone from the config it is only forgotten.
fn plan_cluster(target: &Target<'_>) -> ResourceChange {
    let mut change =
        ResourceChange::no_op(target.address.clone(), PROVIDER, cluster_record(target));
    if target.resource.is_none() && target.prior.is_some() {
        let row = rule(Change::ClusterForgotten);
        change.action = Action::Delete;
        change.attributes.push(AttributeChange {
            path: String::new(),
            before: json!(target.address.to_string()),
            after: serde_json::Value::Null,
            impact: row.impact,
            reason: row.happens.to_string(),
            downtime: row.downtime,
            group: String::new(),
            effects: Vec::new(),
        });
    }
    change
}

fn state_entry(
    address: &Address,
    record: serde_json::Value,
    ids: serde_json::Value,
) -> ResourceState {
    ResourceState {
        provider: PROVIDER.to_string(),
        id: address.to_string(),
        ids,
        attributes: record,
        depends_on: vec![],
    }
}

impl Provider for KubernetesProvider {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn refresh<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        Box::pin(async move { self.refresh_targets(targets).await.map(Refreshed::new) })
    }

    fn plan(
        &self,
        target: &Target,
        refreshed: &Refreshed,
        _options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        match target.address.kind {
            ResourceKind::Cluster => Ok(plan_cluster(target)),
            ResourceKind::Nodes => {
                let nodes = Live::of(refreshed)?.nodes_of(target);
                let input = self.policy_input(target, nodes, &nothing_left_alone);
                Ok(nodes::plan(&input))
            }
            ResourceKind::LoadBalancer => Err(ProviderError::new(
                target.address,
                "load balancers belong to a cloud provider, not to kubernetes",
            )),
        }
    }

    fn drift(&self, target: &Target, refreshed: &Refreshed) -> Result<DriftCheck, ProviderError> {
        let live = Live::of(refreshed)?;
        match target.address.kind {
            ResourceKind::Cluster => Ok(self.cluster_drift(target, live)),
            _ => Ok(nodes::drift(&self.policy_input(
                target,
                live.nodes_of(target),
                &nothing_left_alone,
            ))),
        }
    }

    /// A node policy's ignored labels and taints differ from node to node, which no config
    /// can write: the policy is planned leaving them as each node has them.
    fn plan_keeping_ignored(
        &self,
        target: &Target,
        refreshed: &Refreshed,
        _options: &PlanOptions,
    ) -> Option<Result<ResourceChange, ProviderError>> {
        if target.address.kind != ResourceKind::Nodes {
            return None;
        }
        let planned = Live::of(refreshed).map(|live| {
            let ignored = |path: &str| ignored_by(target, path);
            let input = self.policy_input(target, live.nodes_of(target), &ignored);
            nodes::plan(&input)
        });
        Some(planned)
    }

    /// Nothing of the cluster is read: a cluster or a node policy is recorded as the config
    /// says.
    fn import(&self, target: &Target, _: &Refreshed) -> Result<ResourceState, ProviderError> {
        let spec = target.resource.map(|r| &r.spec);
        let cluster = spec.and_then(|s| s.get::<KubernetesClusterSpec>());
        let policy = spec.and_then(|s| s.get::<NodePolicySpec>());
        let record = match (cluster, policy) {
            (Some(spec), _) => serde_json::to_value(spec),
            (_, Some(spec)) => serde_json::to_value(spec),
            _ => {
                return Err(ProviderError::new(
                    target.address,
                    "is not a Kubernetes resource in the config",
                ))
            }
        }
        .expect("specs serialize");
        Ok(state_entry(target.address, record, serde_json::Value::Null))
    }

    fn survey<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        Box::pin(async move { self.survey_targets(targets).await.map(Refreshed::new) })
    }

    /// Every LoadBalancer Service no target manages, each not importable: the cloud serving
    /// it adopts it (its Service is then dropped from the list by core).
    fn discover(
        &self,
        targets: &[Target],
        surveyed: &Refreshed,
    ) -> Result<Discovered, ProviderError> {
        let live = Live::of(surveyed)?;
        let unmanaged = live
            .services
            .iter()
            .flat_map(|(cluster, services)| {
                crate::discover::unmanaged_services(cluster, services, targets)
            })
            .collect();
        Ok(Discovered {
            unmanaged,
            bound: Vec::new(),
        })
    }

    fn apply<'a>(
        &'a self,
        change: &'a ResourceChange,
        prior: Option<&'a ResourceState>,
        // A patch holds the node, read again, to what the plan read (carried in the operation).
        _: &'a Refreshed,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<Applied, ProviderError>> {
        Box::pin(async move {
            let patched = match change.operations.is_empty() {
                true => vec![],
                false => self.apply_policy(change, prior, journal).await?,
            };
            let verification = (!patched.is_empty()).then(|| {
                let verified = nodes::verify::verify(change, &patched);
                tracing::info!(address = %change.address, "verified: {}", verified.summary());
                verified
            });
            let names: Vec<String> = patched
                .iter()
                .filter_map(|(_, n)| n.metadata.name.clone())
                .collect();
            let ids = match names.is_empty() {
                true => serde_json::Value::Null,
                false => json!({ "patched": names }),
            };
            let entry = change
                .record
                .as_ref()
                .map(|record| state_entry(&change.address, record.to_value(), ids));
            Ok(Applied {
                entry,
                verification,
            })
        })
    }

    /// A node policy: every node it selects `Ready` (`health.rs`), read from one fresh node
    /// list. A cluster, never changed by skyplan, and anything deleted are healthy.
    fn health<'a>(
        &'a self,
        change: &'a ResourceChange,
        entry: Option<&'a ResourceState>,
    ) -> BoxFuture<'a, Result<Health, ProviderError>> {
        Box::pin(async move {
            let Some(entry) = entry.filter(|_| change.address.kind == ResourceKind::Nodes) else {
                return Ok(Health::Healthy);
            };
            let policy: NodePolicySpec =
                serde_json::from_value(entry.attributes.clone()).map_err(|e| {
                    let why = format!("its state entry is not a node policy: {e}");
                    ProviderError::new(&change.address, why)
                })?;
            let connection = self.connections.get(&policy.cluster).ok_or_else(|| {
                ProviderError::new(&change.address, "its cluster is not connected")
            })?;
            // Fresh: the gate polls until the nodes change, so the run's cached list would
            // never show it.
            let nodes = connection.fresh_nodes().await?;
            Ok(crate::health::policy_health(&policy, &nodes))
        })
    }

    fn request_count(&self) -> u64 {
        self.connections.values().map(|c| c.request_count()).sum()
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async move {
            for connection in self.connections.values() {
                connection.close().await?;
            }
            Ok(())
        })
    }
}
