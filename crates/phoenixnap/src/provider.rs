//! The PhoenixNAP [`Provider`]: connects (the API with client credentials, or the embedded
//! simulator), refreshes one [`Inventory`] and each load balancer's cluster facts, and hands
//! each load balancer to the diff and the executor.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use k8s_openapi::api::core::v1::Service;

use super::adopt;
use super::ccm::Owner;
use super::client::{Credentials, PnapClient, DEFAULT_API_ROOT, DEFAULT_TOKEN_URL, TOKEN_PATH};
use super::diff::{self, PlanInput, PROVIDER};
use super::execute::Executor;
use super::instances::PnapInstances;
use super::live::{AppliedBlock, ClusterFacts, Inventory, Live};
use super::refresh;
use super::verify;
use skyplan_core::config::Endpoint;
use skyplan_core::model::Address;

use crate::spec::{PhoenixnapLoadBalancerSpec, PhoenixnapSettings as Settings};
use skyplan_core::plan::{ResourceChange, Verification};
use skyplan_core::provider::discover::{Adopting, Discovered, Generated};
use skyplan_core::provider::{
    Applied, Companion, DriftCheck, ErrorKind, Health, PlanOptions, Provider, ProviderError,
    Refreshed, Target,
};
use skyplan_core::state::journal::Journal;
use skyplan_core::state::ResourceState;
use skyplan_kubernetes::connection::{ClusterConnection, Clusters};
use skyplan_kubernetes::instances::CloudInstances;
use skyplan_kubernetes::ClusterCloud;

fn error(address: impl ToString, message: impl ToString) -> ProviderError {
    ProviderError::new(address, message)
}

/// The embedded cloud the registry started for `endpoint = "embedded"`.
pub struct PnapEmbedded {
    /// The API root, `http://127.0.0.1:PORT`; its token URL is under it.
    pub base_url: String,
    pub credentials: Credentials,
    pub companion: Companion,
}

pub struct PhoenixnapProvider {
    client: Arc<PnapClient>,
    instances: Arc<PnapInstances>,
    attached: OnceLock<Arc<Clusters>>,
    /// The embedded cloud, stopped (its world written) on close.
    embedded: Mutex<Option<Companion>>,
    location: String,
    /// How often a settling block is read.
    poll: Duration,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl PhoenixnapProvider {
    /// Connects to the endpoint: the API with the client credentials, or the embedded cloud
    /// the registry started (`embedded`, required when the settings say so).
    pub async fn connect(
        settings: &Settings,
        embedded: Option<PnapEmbedded>,
    ) -> Result<Self, ProviderError> {
        let (client, embedded, poll) = match (&settings.endpoint, embedded) {
            (Endpoint::Url(root), _) => {
                let credentials = Credentials::load(settings.cloud_sa_json.as_deref())
                    .map_err(|e| error(PROVIDER, e).kind(ErrorKind::Auth))?;
                let token_url = settings.token_url.clone().unwrap_or_else(|| {
                    match root.trim_end_matches('/') == DEFAULT_API_ROOT {
                        true => DEFAULT_TOKEN_URL.to_owned(),
                        false => format!("{}{TOKEN_PATH}", root.trim_end_matches('/')),
                    }
                });
                let client = PnapClient::new(root, &token_url, credentials)
                    .map_err(|e| error(PROVIDER, e))?;
                (client, None, Duration::from_secs(2))
            }
            (Endpoint::Embedded, Some(embedded)) => {
                let root = embedded.base_url;
                let client =
                    PnapClient::new(&root, &format!("{root}{TOKEN_PATH}"), embedded.credentials)
                        .map_err(|e| error(PROVIDER, e))?;
                (client, Some(embedded.companion), Duration::from_millis(25))
            }
            (Endpoint::Embedded, None) => {
                return Err(error(PROVIDER, "no embedded cloud was started"));
            }
        };
        let client = Arc::new(client);
        Ok(PhoenixnapProvider {
            instances: PnapInstances::new(Arc::clone(&client)),
            client,
            attached: OnceLock::new(),
            embedded: Mutex::new(embedded),
            location: settings
                .location
                .map_or_else(|| "PHX".to_owned(), |l| l.to_string()),
            poll,
        })
    }

    /// Where new blocks are made unless a load balancer says (`PHX` by default).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The public network a kube-vip CCM's `PNAP_LOAD_BALANCER` would name: the one called
    /// `preferred`, else the first in the provider's location.
    pub async fn public_network_for_ccm(
        &self,
        preferred: &str,
    ) -> Result<Option<String>, ProviderError> {
        let networks = self
            .client
            .public_networks()
            .await
            .map_err(|e| e.for_address(PROVIDER))?;
        let network = networks
            .iter()
            .find(|n| n.name == preferred)
            .or_else(|| networks.iter().find(|n| n.location == self.location));
        Ok(network.map(|n| n.id.clone()))
    }

    /// A survey (discovery): every block of the account, every connected cluster's identity
    /// and Services, and the targets' clusters as refresh reads them; a block being adopted
    /// gets the facts of the cluster and Service its tags name, from the listing.
    async fn survey_targets(&self, targets: &[Target<'_>]) -> Result<Live, ProviderError> {
        let attached = self.attached.get().map(Arc::as_ref);
        let inventory = async {
            refresh::whole_inventory(&self.client)
                .await
                .map_err(|e| e.for_address(PROVIDER))
        };
        let (inventory, surveyed) =
            tokio::try_join!(inventory, refresh::surveyed_clusters(attached))?;
        let specs = targets_specs(targets);
        let pairs: Vec<(&Address, &PhoenixnapLoadBalancerSpec)> =
            specs.iter().map(|(a, s)| (*a, s)).collect();
        let (mut clusters, mut services) = refresh::clusters(attached, &pairs).await?;
        for target in targets.iter().filter(|t| adopt::adopting(t)) {
            let id = target.prior.map(|p| p.id.as_str()).unwrap_or_default();
            if let Some((facts, service)) = adopt::adopted_facts(id, &inventory, &surveyed) {
                clusters.insert(target.address.clone(), facts);
                if let Some(service) = service {
                    services.insert(target.address.clone(), service);
                }
            }
        }
        Ok(Live {
            inventory,
            clusters,
            services,
            survey: Some(surveyed),
        })
    }

    async fn refresh_targets(&self, targets: &[Target<'_>]) -> Result<Live, ProviderError> {
        let state_blocks: Vec<String> = targets
            .iter()
            .filter_map(|t| t.prior)
            .filter(|p| p.provider == PROVIDER)
            .map(|p| p.id.clone())
            .collect();
        let specs = targets_specs(targets);
        if specs.is_empty() && state_blocks.is_empty() {
            return Ok(Live::default());
        }
        let inventory = refresh::inventory(&self.client, &state_blocks)
            .await
            .map_err(|e| e.for_address(PROVIDER))?;
        let pairs: Vec<(&Address, &PhoenixnapLoadBalancerSpec)> =
            specs.iter().map(|(a, s)| (*a, s)).collect();
        let (clusters, services) =
            refresh::clusters(self.attached.get().map(Arc::as_ref), &pairs).await?;
        Ok(Live {
            inventory,
            clusters,
            services,
            survey: None,
        })
    }
}

fn plan_input<'a>(
    target: &'a Target<'a>,
    spec: Option<&'a PhoenixnapLoadBalancerSpec>,
    inventory: &'a Inventory,
    cluster: Option<&'a ClusterFacts>,
    requested: bool,
) -> PlanInput<'a> {
    PlanInput {
        address: target.address,
        spec,
        prior: target
            .prior
            .and_then(|p| AppliedBlock::from_json(&p.attributes)),
        cluster,
        inventory,
        requested,
    }
}

/// The plan of one target on `live` (`requested`: named by --replace or --allow-delete).
pub fn plan(
    target: &Target,
    live: &Live,
    requested: bool,
) -> Result<ResourceChange, ProviderError> {
    let input = plan_input(
        target,
        config_spec(target),
        &live.inventory,
        live.clusters.get(target.address),
        requested,
    );
    diff::plan(&input).map_err(|e| located(target, e))
}

/// The spec each target is planned against: the config's, or for drift of a load balancer
/// removed from the config, the one last applied.
pub(crate) fn targets_specs<'a>(
    targets: &'a [Target<'a>],
) -> Vec<(&'a Address, PhoenixnapLoadBalancerSpec)> {
    targets
        .iter()
        .filter_map(|t| {
            let spec = config_spec(t).cloned().or_else(|| {
                t.prior
                    .and_then(|p| AppliedBlock::from_json(&p.attributes))
                    .map(|r| r.spec)
            })?;
            Some((t.address, spec))
        })
        .collect()
}

/// A plan error at the config key that names its culprit (`file:line:col`).
fn located(target: &Target, error: diff::PlanError) -> ProviderError {
    let plain = ProviderError::new(target.address, error.message);
    match target.resource {
        Some(resource) => plain.at(resource.location_of(error.key)),
        None => plain,
    }
}

fn config_spec<'a>(target: &Target<'a>) -> Option<&'a PhoenixnapLoadBalancerSpec> {
    match target.resource.map(|r| &r.spec) {
        Some(spec) => spec.get(),
        _ => None,
    }
}

impl ClusterCloud for PhoenixnapProvider {
    /// The cloud's VMs as its controller describes them, for node-metadata drift.
    fn instances(&self) -> Arc<dyn CloudInstances> {
        Arc::clone(&self.instances) as Arc<dyn CloudInstances>
    }

    /// The connected clusters, handed over by the registry once the Kubernetes provider
    /// connected: a load balancer bound to a Service reads its cluster when it refreshes.
    fn attach_clusters(&self, clusters: Arc<Clusters>) {
        let _ = self.attached.set(clusters);
    }
}

impl Provider for PhoenixnapProvider {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn refresh<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        async move { self.refresh_targets(targets).await.map(Refreshed::new) }.boxed()
    }

    fn plan(
        &self,
        target: &Target,
        refreshed: &Refreshed,
        options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        let requested = options.replace.contains(target.address)
            || options.allow_delete.contains(target.address);
        plan(target, Live::of(refreshed)?, requested)
    }

    fn drift(&self, target: &Target, refreshed: &Refreshed) -> Result<DriftCheck, ProviderError> {
        let Some(record) = target
            .prior
            .and_then(|p| AppliedBlock::from_json(&p.attributes))
        else {
            return Ok(DriftCheck::NotApplied);
        };
        let live = Live::of(refreshed)?;
        let cluster = live.clusters.get(target.address);
        let input = plan_input(target, Some(&record.spec), &live.inventory, cluster, false);
        diff::drift(&input).map_err(|e| located(target, e))
    }

    fn import(
        &self,
        target: &Target,
        refreshed: &Refreshed,
    ) -> Result<ResourceState, ProviderError> {
        import(target, Live::of(refreshed)?)
    }

    fn survey<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        async move { self.survey_targets(targets).await.map(Refreshed::new) }.boxed()
    }

    fn discover(
        &self,
        targets: &[Target],
        surveyed: &Refreshed,
    ) -> Result<Discovered, ProviderError> {
        let specs = targets_specs(targets);
        Ok(adopt::discover(targets, &specs, Live::of(surveyed)?))
    }

    fn generate(
        &self,
        target: &Target,
        surveyed: &Refreshed,
        _adopting: &Adopting,
    ) -> Result<Generated, ProviderError> {
        adopt::generate(target, Live::of(surveyed)?, &self.location)
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
            self.apply_change(change, prior, live, journal).await
        }
        .boxed()
    }

    /// The block `assigned` and its Service's ingress set (`health.rs`): one GET of the block
    /// and one of the Service. A deleted load balancer is healthy.
    fn health<'a>(
        &'a self,
        change: &'a ResourceChange,
        entry: Option<&'a ResourceState>,
    ) -> BoxFuture<'a, Result<Health, ProviderError>> {
        async move {
            let Some(entry) = entry else {
                return Ok(Health::Healthy);
            };
            let record = AppliedBlock::from_json(&entry.attributes).ok_or_else(|| {
                error(&change.address, "its state entry is not a PhoenixNAP block")
            })?;
            self.block_health(&change.address, &record).await
        }
        .boxed()
    }

    fn request_count(&self) -> u64 {
        self.client.request_count()
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        async move {
            let handle = lock(&self.embedded).take();
            if let Some(companion) = handle {
                companion.stop().await.map_err(|e| error(PROVIDER, e))?;
            }
            Ok(())
        }
        .boxed()
    }
}

impl PhoenixnapProvider {
    /// The change, with the cluster's identity, the Service and the networks as the refresh
    /// it was planned from read them (`live`).
    async fn apply_change(
        &self,
        change: &ResourceChange,
        prior: Option<&ResourceState>,
        live: &Live,
        journal: &Journal,
    ) -> Result<Applied, ProviderError> {
        let address = &change.address;
        let spec: Option<PhoenixnapLoadBalancerSpec> =
            change.record.as_ref().and_then(|r| r.parse().ok());
        let prior_record = prior.and_then(|p| AppliedBlock::from_json(&p.attributes));
        let cluster_spec = spec.as_ref().or(prior_record.as_ref().map(|r| &r.spec));
        let facts = live.clusters.get(address);
        let service = live.services.get(address).cloned();
        let connection =
            cluster_spec.and_then(|s| self.attached.get().and_then(|c| c.get(&s.cluster)));
        let owner = match (&spec, facts) {
            (Some(spec), Some(facts)) => Some(Owner {
                cluster_uid: &facts.uid,
                namespace: &spec.namespace,
                name: &spec.name,
            }),
            _ => None,
        };
        let mut executor = Executor {
            client: &self.client,
            journal,
            address,
            cluster: connection.as_deref(),
            service: service.clone(),
            owner: owner.clone(),
            new_block: None,
            poll: self.poll,
        };
        for op in &change.operations {
            let Some(op) = crate::ops::Op::of(op) else {
                return Err(error(address, format!("not a PhoenixNAP operation: {op}")));
            };
            executor.run(&op).await.map_err(|e| error(address, e))?;
        }
        let (Some(spec), Some(facts)) = (&spec, facts) else {
            return Ok(Applied::unverified(None));
        };
        let block = executor
            .owned_block()
            .await
            .map_err(|e| error(address, e))?
            .ok_or_else(|| {
                error(
                    address,
                    format!(
                        "no block carries Service {}'s tags after apply",
                        spec.service_ref()
                    ),
                )
            })?;
        let kept = verify::kept_block(change, prior_record.as_ref().map(|r| r.block.as_str()));
        let verification = self
            .verify(
                change,
                kept,
                &block,
                &live.inventory,
                connection.as_deref(),
                spec,
            )
            .await;
        let before = prior_record.map(|r| r.service_type_before);
        let before = before.or_else(|| service_type(service.as_ref()));
        Ok(Applied {
            entry: Some(state_entry(&record_for(spec, &block, facts, before))),
            verification,
        })
    }
}

impl PhoenixnapProvider {
    async fn block_health(
        &self,
        address: &Address,
        record: &AppliedBlock,
    ) -> Result<Health, ProviderError> {
        let spec = &record.spec;
        let connection = self.attached.get().and_then(|c| c.get(&spec.cluster));
        let connection = connection
            .ok_or_else(|| error(address, format!("{} is not connected", spec.cluster)))?;
        let block = match self.client.ip_block(&record.block).await {
            Ok(block) => Some(block),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e.for_address(address)),
        };
        let service = connection.service(&spec.namespace, &spec.name).await?;
        Ok(super::health::block_health(
            &record.block,
            block.as_ref(),
            spec,
            service.as_ref(),
        ))
    }

    /// Compares the cloud and the Service with the plan (the public network as refresh read it
    /// into `inventory`). A failed read is reported, not fatal: the change itself was made.
    async fn verify(
        &self,
        change: &ResourceChange,
        kept: Option<&str>,
        block: &super::api::IpBlock,
        inventory: &Inventory,
        connection: Option<&ClusterConnection>,
        spec: &PhoenixnapLoadBalancerSpec,
    ) -> Option<Verification> {
        if change.operations.is_empty() {
            return None;
        }
        let network = inventory
            .network(&spec.public_network)
            .map(|n| n.id.clone())
            .unwrap_or_default();
        let service = match connection {
            Some(c) => c.service(&spec.namespace, &spec.name).await.ok().flatten(),
            None => None,
        };
        let address = service
            .as_ref()
            .and_then(|s| s.spec.as_ref())
            .and_then(|s| s.load_balancer_ip.clone());
        let observed = verify::Observed {
            block: Some(block),
            network: &network,
            service_address: address.as_deref(),
        };
        let verification = verify::compare(change, kept, &observed);
        tracing::info!(address = %change.address, "verified: {}", verification.summary());
        Some(verification)
    }
}

/// The state entry of an existing block taken under management as `target.resource` says
/// (`skyplan import`, and `import --generate-config` from the survey).
pub fn import(target: &Target, live: &Live) -> Result<ResourceState, ProviderError> {
    let address = target.address;
    let spec = config_spec(target)
        .ok_or_else(|| error(address, "not a PhoenixNAP load balancer in the config"))?;
    let id = target.prior.map(|p| p.id.as_str()).unwrap_or_default();
    let block = live.inventory.block(id).ok_or_else(|| {
        error(
            address,
            format!("no IP block {id} with the CCM's usage tag"),
        )
    })?;
    let cluster = live
        .clusters
        .get(address)
        .ok_or_else(|| error(address, format!("{} is not connected", spec.cluster)))?;
    let record = record_for(spec, block, cluster, None);
    Ok(state_entry(&record))
}

fn service_type(service: Option<&Service>) -> Option<String> {
    service
        .and_then(|s| s.spec.as_ref())
        .and_then(|s| s.type_.clone())
}

fn record_for(
    spec: &PhoenixnapLoadBalancerSpec,
    block: &super::api::IpBlock,
    cluster: &ClusterFacts,
    service_type_before: Option<String>,
) -> AppliedBlock {
    AppliedBlock {
        spec: spec.clone(),
        block: block.id.clone(),
        cidr: block.cidr.clone(),
        address: super::ccm::service_address(&block.cidr)
            .map(|a| a.to_string())
            .unwrap_or_default(),
        network_id: block.assigned_resource_id.clone().unwrap_or_default(),
        cluster_uid: cluster.uid.clone(),
        service_type_before: service_type_before
            .or_else(|| cluster.service.as_ref().map(|s| s.service_type.clone()))
            .unwrap_or_else(|| "ClusterIP".into()),
    }
}

fn state_entry(record: &AppliedBlock) -> ResourceState {
    ResourceState {
        provider: PROVIDER.to_owned(),
        id: record.block.clone(),
        ids: serde_json::json!({}),
        attributes: serde_json::to_value(record).expect("records serialize"),
        depends_on: vec![record.spec.cluster.clone()],
    }
}
