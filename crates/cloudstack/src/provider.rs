//! The CloudStack [`Provider`]: connects (the cloud-config INI or the embedded simulator),
//! refreshes one [`Inventory`] for all targets, and hands each resource to its kind's planner
//! and executor.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::client::{CloudstackClient, Credentials, JobPolicy, Secret};
use super::instances::{self, CloudstackInstances};
use super::live::{ApplyContext, Inventory, KnownCluster, Live, PlanInput};
use super::{adopt, cluster, lb, recover, refresh, OWNER_TAG, PROVIDER};
use crate::spec::CloudstackEndpoint;
use crate::spec::{CloudstackClusterSpec, CloudstackLoadBalancerSpec, CsMembers, PublicIp};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::ResourceChange;
use skyplan_core::plan::Verification;
use skyplan_core::provider::discover::{Adopting, Discovered, Generated};
use skyplan_core::provider::{
    Applied, Companion, DriftCheck, PlanOptions, Provider, ProviderError, Refreshed, Target,
};
use skyplan_core::state::journal::Journal;
use skyplan_core::state::ResourceState;
use skyplan_kubernetes::connection::Clusters;
use skyplan_kubernetes::instances::CloudInstances;
use skyplan_kubernetes::metadata;
use skyplan_kubernetes::ClusterCloud;

/// The embedded cloud the registry started for `endpoint = "embedded"`.
pub struct CloudstackEmbedded {
    /// `http://127.0.0.1:PORT/client/api`
    pub base_url: String,
    pub api_key: String,
    pub secret_key: Secret,
    pub companion: Companion,
}

pub struct CloudstackProvider {
    client: Arc<CloudstackClient>,
    /// The connected clusters (a CKS cluster with node policies is one), for node-metadata
    /// drift; handed over by the registry once the Kubernetes provider has connected.
    attached: OnceLock<Arc<Clusters>>,
    /// The VMs as the CloudStack CCM describes them.
    instances: Arc<CloudstackInstances>,
    /// When an interrupted apply started associating a public IP it did not tag, per load
    /// balancer address: told by `recover` before the first refresh, which looks for those IPs.
    untagged_associations: Mutex<BTreeMap<String, jiff::Timestamp>>,
    /// The embedded cloud, stopped (its world written) on close.
    embedded: Mutex<Option<Companion>>,
    /// Controller-mode load balancers, through the attached clusters.
    ccm: lb::ccm::views::CcmClusters,
}

fn error(address: impl ToString, message: impl ToString) -> ProviderError {
    ProviderError::new(address, message)
}

/// The embedded cloud finishes async jobs fast, so the client polls it quickly.
fn embedded_jobs() -> JobPolicy {
    JobPolicy {
        first_poll: Duration::from_millis(20),
        max_poll: Duration::from_millis(250),
        timeout: Duration::from_secs(120),
    }
}

/// Polling of async jobs: the client's default (1 s growing to 15 s), unless
/// `SKYPLAN_CLOUDSTACK_JOB_POLL_MS` sets the first interval — for a simulator whose jobs end in
/// milliseconds, as the kill test's does.
fn job_policy_from_env() -> JobPolicy {
    let first = std::env::var(JOB_POLL_ENV)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    match first {
        Some(first) => JobPolicy {
            first_poll: first,
            max_poll: first.max(Duration::from_millis(250)),
            ..JobPolicy::default()
        },
        None => JobPolicy::default(),
    }
}

const JOB_POLL_ENV: &str = "SKYPLAN_CLOUDSTACK_JOB_POLL_MS";

impl CloudstackProvider {
    /// Connects to the endpoint: the cloud-config INI's, or the embedded cloud the registry
    /// started (`embedded`, required when the settings say so).
    pub async fn connect(
        endpoint: &CloudstackEndpoint,
        embedded: Option<CloudstackEmbedded>,
    ) -> Result<CloudstackProvider, ProviderError> {
        let (client, embedded) = match (endpoint, embedded) {
            (CloudstackEndpoint::CloudConfig(path), _) => {
                let credentials =
                    Credentials::from_cloud_config(path).map_err(|e| e.for_address(PROVIDER))?;
                let client = CloudstackClient::new(credentials)
                    .map_err(|e| e.for_address(PROVIDER))?
                    .with_job_policy(job_policy_from_env());
                (client, None)
            }
            (CloudstackEndpoint::Embedded, Some(embedded)) => {
                let credentials = Credentials {
                    api_url: embedded.base_url,
                    api_key: embedded.api_key,
                    secret_key: embedded.secret_key,
                    project_id: None,
                    zone: None,
                    ssl_no_verify: false,
                };
                let client = CloudstackClient::new(credentials)
                    .map_err(|e| e.for_address(PROVIDER))?
                    .with_job_policy(embedded_jobs());
                (client, Some(embedded.companion))
            }
            (CloudstackEndpoint::Embedded, None) => {
                return Err(error(PROVIDER, "no embedded cloud was started"));
            }
        };
        let client = Arc::new(client);
        Ok(CloudstackProvider {
            instances: CloudstackInstances::new(Arc::clone(&client)),
            attached: OnceLock::new(),
            client,
            untagged_associations: Mutex::new(BTreeMap::new()),
            embedded: Mutex::new(embedded),
            ccm: Default::default(),
        })
    }

    async fn refresh_targets(&self, targets: &[Target<'_>]) -> Result<Live, ProviderError> {
        let ccm_specs: Vec<lb::ccm::views::CcmTarget> = targets
            .iter()
            .filter_map(|t| {
                Some(lb::ccm::views::CcmTarget {
                    address: t.address,
                    spec: t.resource.and_then(lb_spec)?,
                    service: t.resource.map(|r| r.location_of("service")),
                })
            })
            .filter(|t| lb::ccm::views::is_ccm(t.spec))
            .collect();
        let views = self.ccm.read(&ccm_specs).await;
        let ccm_bases = views.base_names();
        let mut inventory = refresh::inventory(&self.client, |inventory| {
            let mut ips = rule_ips(targets, inventory);
            // The rules the CCM made for a Service, found by its base name, with their members.
            ips.extend(
                inventory
                    .rules
                    .iter()
                    .filter(|r| {
                        ccm_bases
                            .iter()
                            .any(|b| r.name.starts_with(&format!("{b}-")))
                    })
                    .map(|r| r.publicipid.clone()),
            );
            ips
        })
        .await?;
        let started = self
            .untagged_associations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        inventory.recovered_ips = recover::associated_by_interrupted_apply(&started, &inventory);
        inventory.claimed_ips = (targets.iter())
            .filter(|t| t.address.kind == ResourceKind::LoadBalancer)
            .filter_map(|t| t.prior.map(|p| p.id.clone()))
            .collect();
        self.read_cluster_nodes(targets).await?;
        Ok(Live {
            inventory,
            clusters: known_clusters(targets),
            views,
            surveyed: Default::default(),
        })
    }

    /// The nodes of every cluster target skyplan reaches with the Kubernetes API, for
    /// node-metadata drift (one paged list per cluster, shared with its node policies).
    async fn read_cluster_nodes(&self, targets: &[Target<'_>]) -> Result<(), ProviderError> {
        let Some(clusters) = self.attached.get() else {
            return Ok(());
        };
        for target in targets
            .iter()
            .filter(|t| t.address.kind == ResourceKind::Cluster)
        {
            if let Some(connection) = clusters.get(target.address) {
                connection.nodes().await?;
            }
        }
        Ok(())
    }

    /// What the cluster's nodes (read by refresh into the connection, which every provider
    /// shares) carry against what the CCM would set from the VMs in `inventory`.
    fn node_metadata_drift(
        &self,
        address: &Address,
        inventory: &Inventory,
    ) -> Vec<skyplan_core::plan::AttributeChange> {
        let connection = self.attached.get().and_then(|c| c.get(address));
        let Some(nodes) = connection.as_ref().and_then(|c| c.cached_nodes()) else {
            return vec![];
        };
        let vms: Vec<_> = inventory
            .vms
            .iter()
            .map(|vm| instances::instance(vm, &inventory.zones))
            .collect();
        let cloud = metadata::Cloud {
            scheme: instances::SCHEME,
            instances: &vms,
        };
        metadata::drift(nodes, &[cloud])
    }

    /// The kubeconfig of the cluster named `name` when it exists and its API runs (two
    /// calls: the cluster by name, then its config); `None` for a cluster not created yet,
    /// or stopped (its API server is down with its control VMs).
    pub async fn running_cluster_kubeconfig(
        &self,
        name: &str,
    ) -> Result<Option<Secret>, ProviderError> {
        let params = vec![("name".to_string(), name.to_string())];
        let found = self
            .client
            .list("listKubernetesClusters", &params, "kubernetescluster")
            .await
            .map_err(|e| {
                let message = format!("listKubernetesClusters: {e}");
                e.reported(PROVIDER, message)
            })?;
        let up = ["Running", "Scaling", "Upgrading", "Alert"];
        let id = found
            .iter()
            .filter(|c| c["name"] == name)
            .find(|c| up.iter().any(|s| c["state"] == *s))
            .and_then(|c| c["id"].as_str());
        match id {
            Some(id) => cluster::kubeconfig(&self.client, id)
                .await
                .map(|text| Some(Secret::new(text))),
            None => Ok(None),
        }
    }

    fn plan_target(
        &self,
        target: &Target,
        live: &Live,
        options: &PlanOptions,
        drift: bool,
    ) -> Result<Outcome, ProviderError> {
        let inventory = &live.inventory;
        let replace = options.replace.contains(target.address);
        let allow_delete = options.allow_delete.contains(target.address);
        match target.address.kind {
            ResourceKind::Cluster => {
                let input = PlanInput {
                    address: target.address,
                    desired: target.resource.and_then(cluster_spec),
                    prior: target.prior,
                    live: inventory,
                    replace,
                    allow_delete,
                };
                match drift {
                    false => cluster::plan(&input).map(Outcome::Plan),
                    true => {
                        let check = cluster::drift(&input)?;
                        let check = self.with_node_drift(target.address, check, inventory);
                        Ok(Outcome::Drift(check))
                    }
                }
            }
            ResourceKind::LoadBalancer => {
                let desired = target.resource.and_then(lb_spec);
                let applied = target.prior.and_then(applied_lb_spec);
                let ccm = CcmPlan {
                    address: target.address,
                    desired,
                    applied: applied.as_ref(),
                    allow_delete,
                };
                if let Some(outcome) = self.plan_ccm(&ccm, live, drift) {
                    return outcome;
                }
                let members_from = desired.or(applied.as_ref());
                let cluster_address = members_from.and_then(|s| match &s.members {
                    CsMembers::Cluster(key) => Some(Address::new(ResourceKind::Cluster, key)),
                    CsMembers::Vms(_) => None,
                });
                let cluster = members_from
                    .zip(cluster_address.as_ref())
                    .and_then(|(spec, a)| live.cluster_ref(spec, a));
                let input = PlanInput {
                    address: target.address,
                    desired,
                    prior: target.prior,
                    live: inventory,
                    replace,
                    allow_delete,
                };
                match drift {
                    false => lb::plan(&input, cluster).map(Outcome::Plan),
                    true => lb::drift(&input, cluster).map(Outcome::Drift),
                }
            }
            ResourceKind::Nodes => Err(not_cloudstack(target.address.to_string())),
        }
    }

    /// The cluster's kubeconfig (`getKubernetesClusterConfig`), found in `inventory` by the
    /// state's ID or by its name.
    async fn cluster_kubeconfig(
        &self,
        target: &Target<'_>,
        inventory: &Inventory,
    ) -> Result<Secret, ProviderError> {
        let address = target.address;
        // Without a spec, the name the config stage would give it: the address's cloud name.
        let cloud_name = address.cloud_name();
        let name = target
            .resource
            .and_then(cluster_spec)
            .map_or(cloud_name.as_str(), |s| s.name.as_str());
        let live = target
            .prior
            .and_then(|p| inventory.cluster_by_id(&p.id))
            .or_else(|| inventory.cluster_by_name(name));
        let id = live
            .map(|c| c.id.as_str())
            .ok_or_else(|| error(address, "the cluster does not exist (yet): apply it first"))?;
        cluster::kubeconfig(&self.client, id).await.map(Secret::new)
    }
}

impl CloudstackProvider {
    /// Controller mode, when the config (or, once removed, the state) says so.
    fn plan_ccm(
        &self,
        target: &CcmPlan<'_>,
        live: &Live,
        drift: bool,
    ) -> Option<Result<Outcome, ProviderError>> {
        use lb::ccm::views::is_ccm;
        let address = target.address;
        let (views, inventory) = (&live.views, &live.inventory);
        let outcome = match (target.desired, target.applied) {
            (Some(spec), _) if is_ccm(spec) => match drift {
                false => {
                    let scaled = live.scaled_workers(spec);
                    self.ccm
                        .plan(views, address, spec, inventory, scaled)
                        .map(Outcome::Plan)
                }
                true => {
                    let expected = target.applied.filter(|a| is_ccm(a)).unwrap_or(spec);
                    self.ccm
                        .drift(views, address, expected, inventory)
                        .map(Outcome::Drift)
                }
            },
            (None, Some(spec)) if is_ccm(spec) => match drift {
                false => Ok(Outcome::Plan(lb::ccm::plan::removed(
                    address,
                    spec,
                    target.allow_delete,
                ))),
                true => Ok(Outcome::Drift(DriftCheck::NotApplied)),
            },
            _ => return None,
        };
        Some(outcome)
    }

    /// A load balancer's change; in controller mode with the account and the cluster as the
    /// refresh it was planned from read them (`live`).
    async fn apply_lb(
        &self,
        context: &ApplyContext<'_>,
        change: &ResourceChange,
        prior: Option<&ResourceState>,
        live: &Live,
    ) -> Result<Applied, ProviderError> {
        let controller_mode = change
            .operations
            .iter()
            .any(|op| matches!(super::ops::Op::of(op), Some(super::ops::Op::Ccm(_))))
            || change
                .record
                .as_ref()
                .and_then(|r| r.parse::<CloudstackLoadBalancerSpec>().ok())
                .is_some_and(|s| lb::ccm::views::is_ccm(&s));
        let deletes_service = change.operations.iter().any(|op| {
            matches!(
                super::ops::Op::of(op),
                Some(super::ops::Op::Ccm(
                    lb::ccm::plan::CcmOp::DeleteService { .. }
                ))
            )
        });
        if deletes_service {
            let connection = self.delete_connection(change, live).await?;
            let deleted = self.ccm.delete(context.journal, change, &connection).await;
            return deleted.map(|()| Applied::unverified(None));
        }
        if !controller_mode {
            let entry = lb::apply(context, change, prior).await?;
            let verification = match (&entry, change.operations.is_empty()) {
                (Some(entry), false) => Some(verified(
                    change,
                    lb::verify::verify(context.client, change, entry).await,
                )),
                _ => None,
            };
            return Ok(Applied {
                entry,
                verification,
            });
        }
        let spec = change
            .record
            .as_ref()
            .and_then(|r| r.parse::<CloudstackLoadBalancerSpec>().ok());
        let scaled = spec.map_or(0, |s| live.scaled_workers(&s));
        self.ccm
            .apply(context, change, &live.views, &live.inventory, scaled)
            .await
            .map(|entry| Applied::unverified(Some(entry)))
    }

    /// The cluster of a controller-mode Service to delete. Once its load balancer is gone from
    /// the config nothing there names the cluster, so the registry did not connect it: it is
    /// connected here through the kubeconfig CloudStack gives (the cluster named as refresh
    /// knew it, in `live`).
    async fn delete_connection(
        &self,
        change: &ResourceChange,
        live: &Live,
    ) -> Result<Arc<skyplan_kubernetes::connection::ClusterConnection>, ProviderError> {
        let address = &change.address;
        let cluster = change
            .operations
            .iter()
            .find_map(|op| match super::ops::Op::of(op) {
                Some(super::ops::Op::Ccm(lb::ccm::plan::CcmOp::DeleteService {
                    cluster, ..
                })) => Some(cluster),
                _ => None,
            })
            .ok_or_else(|| error(address, "no Service to delete"))?;
        if let Some(connection) = self.ccm.connected(&cluster) {
            return Ok(connection);
        }
        let name = live
            .clusters
            .get(&cluster)
            .and_then(|k| k.spec.as_ref().map(|s| s.name.clone()))
            .unwrap_or_else(|| cluster.name.clone());
        let kubeconfig = self
            .running_cluster_kubeconfig(&name)
            .await?
            .ok_or_else(|| {
                error(
                    address,
                    format!("{cluster} is not running: its Service cannot be deleted"),
                )
            })?;
        let connection =
            skyplan_kubernetes::connect::connect_with_kubeconfig(&cluster, &kubeconfig).await?;
        Ok(Arc::new(connection))
    }

    /// A compared cluster's drift, with its nodes' metadata drift after it.
    fn with_node_drift(
        &self,
        address: &Address,
        check: DriftCheck,
        inventory: &Inventory,
    ) -> DriftCheck {
        match check {
            DriftCheck::Compared(mut changes) => {
                changes.extend(self.node_metadata_drift(address, inventory));
                DriftCheck::Compared(changes)
            }
            other => other,
        }
    }
}

/// The cluster targets, for the load balancers that take their workers.
fn known_clusters(targets: &[Target<'_>]) -> BTreeMap<Address, KnownCluster> {
    targets
        .iter()
        .filter(|t| t.address.kind == ResourceKind::Cluster)
        .map(|target| {
            let known = KnownCluster {
                spec: target.resource.and_then(cluster_spec).cloned(),
                prior_id: target.prior.map(|p| p.id.clone()),
            };
            (target.address.clone(), known)
        })
        .collect()
}

/// A load balancer to plan in controller mode: its config, what was last applied, and whether
/// `--allow-delete` names it.
struct CcmPlan<'a> {
    address: &'a Address,
    desired: Option<&'a CloudstackLoadBalancerSpec>,
    applied: Option<&'a CloudstackLoadBalancerSpec>,
    allow_delete: bool,
}

enum Outcome {
    Plan(ResourceChange),
    Drift(DriftCheck),
}

/// The state entry for an existing cluster taken under management by its ID.
pub(crate) fn import_cluster(
    address: &Address,
    spec: &CloudstackClusterSpec,
    prior: Option<&ResourceState>,
    inventory: &Inventory,
) -> Result<ResourceState, ProviderError> {
    let id = prior.map(|p| p.id.as_str()).unwrap_or_default();
    let cluster = inventory.cluster_by_id(id).ok_or_else(|| {
        error(
            address,
            format!("no Kubernetes cluster with ID {id} in the account"),
        )
    })?;
    Ok(ResourceState {
        provider: PROVIDER.to_string(),
        id: cluster.id.clone(),
        ids: serde_json::json!({}),
        attributes: serde_json::to_value(spec).expect("specs serialize"),
        depends_on: vec![],
    })
}

/// A plan error about what the config names points at the key that names it, so it reads
/// `file:line:col: cluster.lab: zone `zz9` does not exist; zones: …`: a cluster's unknown
/// catalog name (the table for a per-node offering), a load balancer's `network: …`,
/// `public-ip: …`, `members: …` or `cluster: …`.
fn locate(
    error: ProviderError,
    resource: Option<&skyplan_core::config::Resource>,
) -> ProviderError {
    let Some(resource) = resource else {
        return error;
    };
    let key = match cluster_spec(resource) {
        Some(spec) if error.message.contains("` does not exist; ") => {
            cluster::unknown_name_key(&error.message, spec).unwrap_or_default()
        }
        Some(_) => return error,
        None => {
            let keyed = ["network", "public-ip", "members", "cluster"];
            match keyed
                .into_iter()
                .find(|key| error.message.starts_with(&format!("{key}:")))
            {
                Some(key) => key,
                None => return error,
            }
        }
    };
    let location = resource.location_of(key).clone();
    error.at(&location)
}

fn cluster_spec(resource: &skyplan_core::config::Resource) -> Option<&CloudstackClusterSpec> {
    resource.spec.get()
}

fn lb_spec(resource: &skyplan_core::config::Resource) -> Option<&CloudstackLoadBalancerSpec> {
    resource.spec.get()
}

fn applied_lb_spec(prior: &ResourceState) -> Option<CloudstackLoadBalancerSpec> {
    serde_json::from_value(prior.attributes.clone()).ok()
}

/// The public IPs of the load balancers asked about: by state, by the address the config
/// names, and by the ownership tag.
fn rule_ips(targets: &[Target<'_>], inventory: &Inventory) -> BTreeSet<String> {
    let mut ips = BTreeSet::new();
    for target in targets
        .iter()
        .filter(|t| t.address.kind == ResourceKind::LoadBalancer)
    {
        if let Some(prior) = target.prior {
            ips.insert(prior.id.clone());
        }
        if let Some(PublicIp::Address(address)) =
            target.resource.and_then(lb_spec).map(|s| &s.public_ip)
        {
            if let Some(ip) = inventory.public_ip_by_address(address) {
                ips.insert(ip.id.clone());
            }
        }
        let owner = target.address.to_string();
        for ip in &inventory.public_ips {
            if ip
                .tags
                .iter()
                .any(|t| t.key == OWNER_TAG && t.value == owner)
            {
                ips.insert(ip.id.clone());
            }
        }
    }
    ips
}

impl ClusterCloud for CloudstackProvider {
    /// The cloud's VMs as its controller describes them, for node-metadata drift.
    fn instances(&self) -> Arc<dyn CloudInstances> {
        self.instances.clone()
    }

    /// The connected clusters, handed over by the registry once the Kubernetes provider
    /// connected: a load balancer bound to a Service reads its cluster when it refreshes.
    fn attach_clusters(&self, clusters: Arc<Clusters>) {
        // Once per run, by the registry.
        self.ccm.attach(Arc::clone(&clusters));
        let _ = self.attached.set(clusters);
    }
}

impl Provider for CloudstackProvider {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn refresh<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        async move { self.refresh_targets(targets).await.map(Refreshed::new) }.boxed()
    }

    /// The refresh (every collection of the account), plus the Services of the clusters the
    /// CloudStack CCM made unclaimed rules for (`adopt::survey`).
    fn survey<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        async move {
            let mut live = self.refresh_targets(targets).await?;
            let clusters = self.attached.get().map(Arc::as_ref);
            live.surveyed = adopt::survey(&self.client, clusters, targets, &live).await;
            Ok(Refreshed::new(live))
        }
        .boxed()
    }

    fn discover(
        &self,
        targets: &[Target],
        surveyed: &Refreshed,
    ) -> Result<Discovered, ProviderError> {
        Ok(adopt::discover(targets, Live::of(surveyed)?))
    }

    fn generate(
        &self,
        target: &Target,
        surveyed: &Refreshed,
        adopting: &Adopting,
    ) -> Result<Generated, ProviderError> {
        adopt::generate(target, Live::of(surveyed)?, adopting)
    }

    fn plan(
        &self,
        target: &Target,
        refreshed: &Refreshed,
        options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        let live = Live::of(refreshed)?;
        let planned = self.plan_target(target, live, options, false);
        match planned.map_err(|e| locate(e, target.resource))? {
            Outcome::Plan(mut change) => {
                change.placement = super::placement::placement(target, live);
                Ok(change)
            }
            Outcome::Drift(_) => unreachable!("planning gives a plan"),
        }
    }

    fn drift(&self, target: &Target, refreshed: &Refreshed) -> Result<DriftCheck, ProviderError> {
        let live = Live::of(refreshed)?;
        match self.plan_target(target, live, &PlanOptions::default(), true)? {
            Outcome::Drift(check) => Ok(check),
            Outcome::Plan(_) => unreachable!("a drift check gives a drift check"),
        }
    }

    fn import(
        &self,
        target: &Target,
        refreshed: &Refreshed,
    ) -> Result<ResourceState, ProviderError> {
        let address = target.address;
        let inventory = &Live::of(refreshed)?.inventory;
        let resource = target.resource;
        let mut entry = match (resource.and_then(lb_spec), resource.and_then(cluster_spec)) {
            (Some(spec), _) => lb::import(&PlanInput {
                address,
                desired: Some(spec),
                prior: target.prior,
                live: inventory,
                replace: false,
                allow_delete: false,
            })
            .map_err(|e| locate(e, resource))?,
            (_, Some(spec)) => import_cluster(address, spec, target.prior, inventory)?,
            _ => {
                let message = "import needs the resource in the config and an ID";
                return Err(error(address, message));
            }
        };
        entry.depends_on = target
            .resource
            .map(|r| r.depends_on.clone())
            .unwrap_or_default();
        Ok(entry)
    }

    fn apply<'a>(
        &'a self,
        change: &'a ResourceChange,
        prior: Option<&'a ResourceState>,
        refreshed: &'a Refreshed,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<Applied, ProviderError>> {
        async move {
            let live = Live::of(refreshed)?;
            let context = ApplyContext {
                client: &self.client,
                journal,
            };
            match change.address.kind {
                ResourceKind::Cluster => {
                    let entry = cluster::apply(&context, change, prior).await?;
                    let verification = match (&entry, change.operations.is_empty()) {
                        (Some(entry), false) => Some(verified(
                            change,
                            cluster::verify::verify(&self.client, change, entry).await,
                        )),
                        _ => None,
                    };
                    Ok(Applied {
                        entry,
                        verification,
                    })
                }
                ResourceKind::LoadBalancer => self.apply_lb(&context, change, prior, live).await,
                ResourceKind::Nodes => Err(not_cloudstack(change.address.to_string())),
            }
        }
        .boxed()
    }

    fn kubeconfig<'a>(
        &'a self,
        target: &'a Target<'a>,
        refreshed: &'a Refreshed,
    ) -> BoxFuture<'a, Result<Secret, ProviderError>> {
        async move {
            let live = Live::of(refreshed)?;
            self.cluster_kubeconfig(target, &live.inventory).await
        }
        .boxed()
    }

    fn recover(&self, interrupted: &skyplan_core::state::journal::Interrupted) {
        *self
            .untagged_associations
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = recover::untagged_associations(interrupted);
    }

    fn health<'a>(
        &'a self,
        change: &'a ResourceChange,
        entry: Option<&'a ResourceState>,
    ) -> BoxFuture<'a, Result<skyplan_core::provider::Health, ProviderError>> {
        super::health::health(self.client.as_ref(), change, entry).boxed()
    }

    fn request_count(&self) -> u64 {
        self.client.request_count()
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        async move {
            let handle = self
                .embedded
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some(companion) = handle {
                companion.stop().await.map_err(|e| error(PROVIDER, e))?;
            }
            Ok(())
        }
        .boxed()
    }
}

/// A verification, logged as it is handed back.
fn verified(change: &ResourceChange, verification: Verification) -> Verification {
    tracing::info!(address = %change.address, "verified: {}", verification.summary());
    verification
}

/// Node policies belong to the Kubernetes provider; the registry never routes them here.
fn not_cloudstack(address: String) -> ProviderError {
    ProviderError::new(address, "node policies are not a CloudStack resource")
}
