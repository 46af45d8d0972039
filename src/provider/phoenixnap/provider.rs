//! The PhoenixNAP [`Provider`]: connects (the API with client credentials, or the embedded
//! simulator), refreshes one [`Inventory`] and each load balancer's cluster facts, and hands
//! each load balancer to the diff and the executor.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use k8s_openapi::api::core::v1::Service;

use super::ccm::Owner;
use super::client::{Credentials, PnapClient, DEFAULT_API_ROOT, DEFAULT_TOKEN_URL, TOKEN_PATH};
use super::diff::{self, PlanInput, PROVIDER};
use super::execute::Executor;
use super::instances::PnapInstances;
use super::live::{ClusterFacts, Inventory, Record};
use super::refresh;
use super::verify;
use crate::config::{Endpoint, PhoenixnapProvider as Settings, ResourceSpec};
use crate::model::{Address, PnapLoadBalancerSpec, Secret};
use crate::plan::{ResourceChange, Verification};
use crate::provider::kubernetes::connection::{ClusterConnection, Clusters};
use crate::provider::kubernetes::instances::CloudInstances;
use crate::provider::{DriftCheck, Operation, PlanOptions, Provider, ProviderError, Target};
use crate::state::journal::Journal;
use crate::state::ResourceState;
use skyplan_sim::controllers::PnapEndpoint;
use skyplan_sim::phoenixnap as sim;

/// Faults the embedded cloud injects (none unless set).
const FAULTS_ENV: &str = "SKYPLAN_SIM_PNAP_FAULTS";
/// How long the embedded cloud's attach and detach take (default 100 ms).
const TRANSITION_ENV: &str = "SKYPLAN_SIM_PNAP_TRANSITION_MS";

fn error(address: impl ToString, message: impl ToString) -> ProviderError {
    ProviderError::new(address, message)
}

/// Turns the embedded cluster's simulated PhoenixNAP CCM off (`off`), for tests of what
/// skyplan sees before the controller acts.
const CCM_ENV: &str = "SKYPLAN_SIM_PNAP_CCM";
/// The public network the embedded CCM's `PNAP_LOAD_BALANCER` names: the fresh world's.
const EMBEDDED_CCM_NETWORK: &str = "k8s-public";

pub struct PhoenixnapProvider {
    client: Arc<PnapClient>,
    instances: Arc<PnapInstances>,
    attached: OnceLock<Arc<Clusters>>,
    inventory: Mutex<Inventory>,
    clusters: Mutex<BTreeMap<Address, ClusterFacts>>,
    services: Mutex<BTreeMap<Address, Service>>,
    embedded: Mutex<Option<sim::PnapSimHandle>>,
    /// What apply found verifying each load balancer, until `take_verification`.
    verifications: Mutex<BTreeMap<Address, Verification>>,
    location: String,
    /// How often a settling block is read.
    poll: Duration,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl PhoenixnapProvider {
    /// Connects to the endpoint; `embedded` starts the built-in simulator on 127.0.0.1 over
    /// the world persisted in `<state-dir>/embedded/phoenixnap.json`.
    pub async fn connect(settings: &Settings, state_dir: &Path) -> Result<Self, ProviderError> {
        let (client, embedded, poll) = match &settings.endpoint {
            Endpoint::Url(root) => {
                let credentials = Credentials::load(settings.cloud_sa_json.as_deref())
                    .map_err(|e| error(PROVIDER, e))?;
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
            Endpoint::Embedded => {
                let handle = start_embedded(state_dir).await?;
                let credentials = Credentials {
                    client_id: sim::DEFAULT_CLIENT_ID.to_owned(),
                    client_secret: Secret::new(sim::DEFAULT_CLIENT_SECRET),
                };
                let root = handle.base_url();
                let client = PnapClient::new(&root, &format!("{root}{TOKEN_PATH}"), credentials)
                    .map_err(|e| error(PROVIDER, e))?;
                (client, Some(handle), Duration::from_millis(25))
            }
        };
        let client = Arc::new(client);
        Ok(PhoenixnapProvider {
            instances: PnapInstances::new(Arc::clone(&client)),
            client,
            attached: OnceLock::new(),
            inventory: Mutex::default(),
            clusters: Mutex::default(),
            services: Mutex::default(),
            embedded: Mutex::new(embedded),
            verifications: Mutex::default(),
            location: settings
                .location
                .map_or_else(|| "PHX".to_owned(), |l| l.to_string()),
            poll,
        })
    }

    /// The embedded simulator, for the embedded cluster beside it: its nodes are the servers,
    /// and its CCM is configured as an operator would — the provider's location and
    /// `kube-vip://<id of k8s-public>`.
    pub async fn embedded_endpoint(&self) -> Result<Option<PnapEndpoint>, ProviderError> {
        let Some(base_url) = lock(&self.embedded).as_ref().map(|h| h.base_url()) else {
            return Ok(None);
        };
        if std::env::var(CCM_ENV).is_ok_and(|v| v == "off") {
            return Ok(None);
        }
        let networks = self
            .client
            .public_networks()
            .await
            .map_err(|e| error(PROVIDER, e))?;
        let network = networks
            .iter()
            .find(|n| n.name == EMBEDDED_CCM_NETWORK)
            .or_else(|| networks.iter().find(|n| n.location == self.location));
        Ok(Some(PnapEndpoint {
            base_url,
            client_id: sim::DEFAULT_CLIENT_ID.to_owned(),
            client_secret: sim::DEFAULT_CLIENT_SECRET.to_owned(),
            location: self.location.clone(),
            load_balancer: network.map_or_else(String::new, |n| format!("kube-vip://{}", n.id)),
        }))
    }

    fn plan_input<'a>(
        &self,
        target: &'a Target<'a>,
        spec: Option<&'a PnapLoadBalancerSpec>,
        inventory: &'a Inventory,
        cluster: Option<&'a ClusterFacts>,
        requested: bool,
    ) -> PlanInput<'a> {
        PlanInput {
            address: target.address,
            spec,
            prior: target.prior.and_then(|p| Record::from_json(&p.attributes)),
            cluster,
            inventory,
            requested,
        }
    }

    async fn refresh_targets(&self, targets: &[Target<'_>]) -> Result<(), ProviderError> {
        let state_blocks: Vec<String> = targets
            .iter()
            .filter_map(|t| t.prior)
            .filter(|p| p.provider == PROVIDER)
            .map(|p| p.id.clone())
            .collect();
        let specs = targets_specs(targets);
        if specs.is_empty() && state_blocks.is_empty() {
            return Ok(());
        }
        let inventory = refresh::inventory(&self.client, &state_blocks)
            .await
            .map_err(|e| error(PROVIDER, e))?;
        let pairs: Vec<(&Address, &PnapLoadBalancerSpec)> =
            specs.iter().map(|(a, s)| (*a, s)).collect();
        let (facts, services) =
            refresh::clusters(self.attached.get().map(Arc::as_ref), &pairs).await?;
        *lock(&self.inventory) = inventory;
        *lock(&self.clusters) = facts;
        *lock(&self.services) = services;
        Ok(())
    }
}

/// The spec each target is planned against: the config's, or for drift of a load balancer
/// removed from the config, the one last applied.
fn targets_specs<'a>(targets: &'a [Target<'a>]) -> Vec<(&'a Address, PnapLoadBalancerSpec)> {
    targets
        .iter()
        .filter_map(|t| {
            let spec = config_spec(t).cloned().or_else(|| {
                t.prior
                    .and_then(|p| Record::from_json(&p.attributes))
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

fn config_spec<'a>(target: &Target<'a>) -> Option<&'a PnapLoadBalancerSpec> {
    match target.resource.map(|r| &r.spec) {
        Some(ResourceSpec::PnapLoadBalancer(spec)) => Some(spec),
        _ => None,
    }
}

async fn start_embedded(state_dir: &Path) -> Result<sim::PnapSimHandle, ProviderError> {
    let world = state_dir.join("embedded").join("phoenixnap.json");
    if let Some(dir) = world.parent() {
        std::fs::create_dir_all(dir).map_err(|e| error(PROVIDER, e))?;
    }
    let faults = match std::env::var(FAULTS_ENV) {
        Ok(spec) => spec
            .parse()
            .map_err(|e| error(PROVIDER, format!("{FAULTS_ENV}: {e}")))?,
        Err(_) => sim::Faults::default(),
    };
    let transition = std::env::var(TRANSITION_ENV)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_millis(100), Duration::from_millis);
    let options = sim::PnapSimOptions {
        transition,
        faults,
        ..sim::PnapSimOptions::default()
    };
    let listen = "127.0.0.1:0".parse().expect("a socket address");
    sim::spawn(world, listen, options).await.map_err(|e| {
        error(
            PROVIDER,
            format!("cannot start the embedded simulator: {e}"),
        )
    })
}

impl Provider for PhoenixnapProvider {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn refresh<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        self.refresh_targets(targets).boxed()
    }

    fn plan(
        &self,
        target: &Target,
        options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        let inventory = lock(&self.inventory);
        let clusters = lock(&self.clusters);
        let requested = options.replace.contains(target.address)
            || options.allow_delete.contains(target.address);
        let input = self.plan_input(
            target,
            config_spec(target),
            &inventory,
            clusters.get(target.address),
            requested,
        );
        diff::plan(&input).map_err(|e| located(target, e))
    }

    fn drift(&self, target: &Target) -> Result<DriftCheck, ProviderError> {
        let Some(record) = target.prior.and_then(|p| Record::from_json(&p.attributes)) else {
            return Ok(DriftCheck::NotApplied);
        };
        let inventory = lock(&self.inventory);
        let clusters = lock(&self.clusters);
        let cluster = clusters.get(target.address);
        if cluster.is_some_and(|c| c.service.is_none()) {
            return Ok(DriftCheck::Compared(vec![diff::service_deleted(&record)]));
        }
        let input = self.plan_input(target, Some(&record.spec), &inventory, cluster, false);
        let change = diff::plan(&input).map_err(|e| located(target, e))?;
        Ok(DriftCheck::Compared(change.attributes))
    }

    fn import(&self, target: &Target) -> Result<ResourceState, ProviderError> {
        let address = target.address;
        let spec = config_spec(target)
            .ok_or_else(|| error(address, "not a PhoenixNAP load balancer in the config"))?;
        let id = target.prior.map(|p| p.id.as_str()).unwrap_or_default();
        let inventory = lock(&self.inventory);
        let clusters = lock(&self.clusters);
        let block = inventory.block(id).ok_or_else(|| {
            error(
                address,
                format!("no IP block {id} with the CCM's usage tag"),
            )
        })?;
        let cluster = clusters
            .get(address)
            .ok_or_else(|| error(address, format!("{} is not connected", spec.cluster)))?;
        let record = record_for(spec, block, cluster, None);
        Ok(state_entry(&record))
    }

    fn apply<'a>(
        &'a self,
        change: &'a ResourceChange,
        prior: Option<&'a ResourceState>,
        journal: &'a Journal,
    ) -> BoxFuture<'a, Result<Option<ResourceState>, ProviderError>> {
        async move { self.apply_change(change, prior, journal).await }.boxed()
    }

    fn take_verification(&self, address: &Address) -> Option<Verification> {
        lock(&self.verifications).remove(address)
    }

    fn instances(&self) -> Option<Arc<dyn CloudInstances>> {
        Some(Arc::clone(&self.instances) as Arc<dyn CloudInstances>)
    }

    fn attach_clusters(&self, clusters: Arc<Clusters>) {
        let _ = self.attached.set(clusters);
    }

    fn request_count(&self) -> u64 {
        self.client.request_count()
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ProviderError>> {
        async move {
            let handle = lock(&self.embedded).take();
            if let Some(handle) = handle {
                handle.shutdown().await.map_err(|e| {
                    error(PROVIDER, format!("stopping the embedded simulator: {e}"))
                })?;
            }
            Ok(())
        }
        .boxed()
    }
}

impl PhoenixnapProvider {
    async fn apply_change(
        &self,
        change: &ResourceChange,
        prior: Option<&ResourceState>,
        journal: &Journal,
    ) -> Result<Option<ResourceState>, ProviderError> {
        let address = &change.address;
        let spec: Option<PnapLoadBalancerSpec> =
            change.record.as_ref().and_then(|r| r.parse().ok());
        let prior_record = prior.and_then(|p| Record::from_json(&p.attributes));
        let cluster_spec = spec.as_ref().or(prior_record.as_ref().map(|r| &r.spec));
        let facts = lock(&self.clusters).get(address).cloned();
        let service = lock(&self.services).get(address).cloned();
        let connection =
            cluster_spec.and_then(|s| self.attached.get().and_then(|c| c.get(&s.cluster)));
        let owner = match (&spec, &facts) {
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
            let Operation::Phoenixnap(op) = op else {
                return Err(error(address, format!("not a PhoenixNAP operation: {op}")));
            };
            executor.run(op).await.map_err(|e| error(address, e))?;
        }
        let (Some(spec), Some(facts)) = (&spec, &facts) else {
            return Ok(None);
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
        self.verify(change, kept, &block, connection.as_deref(), spec)
            .await;
        let before = prior_record.map(|r| r.service_type_before);
        let before = before.or_else(|| service_type(service.as_ref()));
        Ok(Some(state_entry(&record_for(spec, &block, facts, before))))
    }
}

impl PhoenixnapProvider {
    /// Compares the cloud and the Service with the plan and keeps the outcome for
    /// [`Provider::take_verification`]. A failed read is reported, not fatal: the change itself
    /// was made.
    async fn verify(
        &self,
        change: &ResourceChange,
        kept: Option<&str>,
        block: &super::api::IpBlock,
        connection: Option<&ClusterConnection>,
        spec: &PnapLoadBalancerSpec,
    ) {
        if change.operations.is_empty() {
            return;
        }
        let network = lock(&self.inventory)
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
        lock(&self.verifications).insert(change.address.clone(), verification);
    }
}

fn service_type(service: Option<&Service>) -> Option<String> {
    service
        .and_then(|s| s.spec.as_ref())
        .and_then(|s| s.type_.clone())
}

fn record_for(
    spec: &PnapLoadBalancerSpec,
    block: &super::api::IpBlock,
    cluster: &ClusterFacts,
    service_type_before: Option<String>,
) -> Record {
    Record {
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

fn state_entry(record: &Record) -> ResourceState {
    ResourceState {
        provider: PROVIDER.to_owned(),
        id: record.block.clone(),
        ids: serde_json::json!({}),
        attributes: serde_json::to_value(record).expect("records serialize"),
        depends_on: vec![record.spec.cluster.clone()],
    }
}
