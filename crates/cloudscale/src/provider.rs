//! The cloudscale provider behind the [`Provider`] trait: refresh through the API client,
//! plan through the pure diff, apply through the operation executor.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::binding::members::node_set;
use super::binding::{missing_service, resolve_direct, ClusterView};
use super::catalog::{self, CatalogWants};
use super::client::{self, token_from_env, Backoff, CloudscaleClient, Secret, WaitPolicy};
use super::desired::desired_objects;
use super::diff::{diff, DiffInput, PROVIDER};
use super::execute::{execute, LbIds};
use super::indexed::IndexedSnapshot;
use super::live::Live;
use super::objects::{LbObjects, OWNER_TAG};
use super::refresh::refresh_with_catalog;
use super::servers::{CloudscaleInstances, ServerCache};
use super::verify::{compare, observe};
use crate::spec::CloudscaleLoadBalancerSpec;
use skyplan_core::config::{Endpoint, Resource};
use skyplan_core::model::Address;
use skyplan_core::plan::{Action, ResourceChange, Verification};
use skyplan_core::provider::discover::{Adopting, Discovered, Generated};
use skyplan_core::provider::{
    Applied, Companion, DriftCheck, PlanOptions, Provider, ProviderError, Refreshed, Target,
};
use skyplan_core::state::journal::{Journal, Phase};
use skyplan_core::state::ResourceState;
use skyplan_kubernetes::connection::{ClusterConnection, Clusters};
use skyplan_kubernetes::instances::CloudInstances;
use skyplan_kubernetes::spec::LbMode;
use skyplan_kubernetes::spec::ServiceBinding;
use skyplan_kubernetes::ClusterCloud;

/// The embedded cloud the registry started for `endpoint = "embedded"`.
pub struct CloudscaleEmbedded {
    /// `http://127.0.0.1:PORT/v1`
    pub base_url: String,
    pub token: Secret,
    pub companion: Companion,
}

pub struct CloudscaleProvider {
    client: Arc<CloudscaleClient>,
    /// The embedded cloud, stopped (its world written) on close.
    embedded: Mutex<Option<Companion>>,
    /// The servers, read once per run: by refresh when a bound load balancer needs them, or
    /// by node-metadata drift (the Kubernetes provider's refresh), whichever asks first.
    servers: Arc<ServerCache>,
    /// Handed over by the registry once the Kubernetes provider connected.
    clusters: OnceLock<Arc<Clusters>>,
}

/// The embedded cloud settles fast, so the client polls it quickly; a real cloud keeps the
/// client's default polling.
fn embedded_wait() -> WaitPolicy {
    WaitPolicy {
        backoff: Backoff {
            first: Duration::from_millis(20),
            max: Duration::from_millis(500),
        },
        ..WaitPolicy::default()
    }
}

fn error(address: impl ToString, message: impl ToString) -> ProviderError {
    ProviderError::new(address, message)
}

/// `message` about `address`, caused by the client's `source`: of its kind, with it as the
/// source.
fn failed(address: impl ToString, message: impl ToString, source: client::Error) -> ProviderError {
    error(address, message)
        .kind(source.kind())
        .caused_by(source)
}

/// The client's error as the whole message.
fn client_error(address: impl ToString, source: client::Error) -> ProviderError {
    failed(address, source.to_string(), source)
}

impl CloudscaleProvider {
    /// Connects to the endpoint: a URL with the token from the environment, or the embedded
    /// cloud the registry started (`embedded`, required when the settings say so).
    pub async fn connect(
        settings: &crate::spec::CloudscaleSettings,
        embedded: Option<CloudscaleEmbedded>,
    ) -> Result<Self, ProviderError> {
        let (client, companion) = match (&settings.endpoint, embedded) {
            (Endpoint::Url(url), _) => {
                let token = token_from_env().map_err(|e| client_error(PROVIDER, e))?;
                (
                    CloudscaleClient::new(url, token).map_err(|e| client_error(PROVIDER, e))?,
                    None,
                )
            }
            (Endpoint::Embedded, Some(embedded)) => {
                let client = CloudscaleClient::new(&embedded.base_url, embedded.token)
                    .map_err(|e| client_error(PROVIDER, e))?
                    .with_lb_wait(embedded_wait());
                (client, Some(embedded.companion))
            }
            (Endpoint::Embedded, None) => {
                return Err(error(PROVIDER, "no embedded cloud was started"));
            }
        };
        let client = client.with_max_concurrent_requests(settings.max_concurrent_requests);
        Ok(CloudscaleProvider {
            client: Arc::new(client),
            embedded: Mutex::new(companion),
            servers: Arc::default(),
            clusters: OnceLock::new(),
        })
    }

    async fn refresh_targets(&self, targets: &[Target<'_>]) -> Result<Live, ProviderError> {
        self.refresh_reading(targets, Members::OfTargets).await
    }

    /// The refresh, reading the members of `which` load balancers.
    async fn refresh_reading(
        &self,
        targets: &[Target<'_>],
        which: Members,
    ) -> Result<Live, ProviderError> {
        let addresses: BTreeSet<String> = targets.iter().map(|t| t.address.to_string()).collect();
        let claimed: HashSet<String> = targets
            .iter()
            .filter_map(|t| t.prior)
            .map(|p| p.id.clone())
            .collect();
        let mut known: BTreeSet<String> = claimed.iter().cloned().collect();
        let views = self.read_clusters(targets).await;
        // A controller-mode load balancer is found as the CCM finds it: by the Service's uuid
        // annotation, else by name; its members are wanted too.
        let mut ccm_names = BTreeSet::new();
        for view in views.values().flatten() {
            if let Some(found) = super::ccm::lookup_keys(view) {
                known.extend(found.uuid);
                ccm_names.extend(found.names);
            }
        }
        let bound = !views.is_empty();
        let wants = CatalogWants::of(
            targets
                .iter()
                .filter_map(|t| t.resource.and_then(load_balancer_spec)),
        );
        let (snapshot, servers) = tokio::join!(
            refresh_with_catalog(
                &self.client,
                |lb| {
                    which == Members::All
                        || lb.uuid.as_ref().is_some_and(|u| known.contains(u))
                        || ccm_names.contains(&lb.name)
                        || lb
                            .tags
                            .get(OWNER_TAG)
                            .is_some_and(|a| addresses.contains(a))
                },
                &wants
            ),
            async {
                match bound {
                    true => super::servers::read_servers(&self.client).await.map(Some),
                    false => Ok(None),
                }
            }
        );
        let snapshot = snapshot.map_err(|e| failed(PROVIDER, format!("refresh failed: {e}"), e))?;
        let servers = servers
            .map_err(|e| failed(PROVIDER, format!("listing servers failed: {e}"), e))?
            .map(|servers| self.servers.set(servers));
        Ok(Live {
            snapshot: IndexedSnapshot::new(snapshot).claimed_by_the_state(claimed),
            servers: servers.unwrap_or_default(),
            views,
            services: Default::default(),
        })
    }

    /// For each Service-bound target: the cluster's nodes (listed once per run by the shared
    /// connection) and the Service (one GET). A binding that cannot be planned (its namespace,
    /// or in direct mode its Service, does not exist) is an error at the `service` key.
    async fn read_clusters(
        &self,
        targets: &[Target<'_>],
    ) -> BTreeMap<Address, Result<ClusterView, ProviderError>> {
        let clusters = self.clusters.get();
        let mut views = BTreeMap::new();
        for target in targets {
            let Some(spec) = target.resource.and_then(load_balancer_spec) else {
                continue;
            };
            let Some(binding) = &spec.binding else {
                continue;
            };
            let connection = clusters.as_ref().and_then(|c| c.get(&binding.cluster));
            let view = match connection {
                None => Err(error(
                    target.address,
                    format!(
                        "{} is not connected: a Service-bound load balancer needs its cluster",
                        binding.cluster
                    ),
                )),
                Some(connection) => read_view(&connection, spec, binding)
                    .await
                    .map_err(|e| e.into_error(target)),
            };
            views.insert(target.address.clone(), view);
        }
        views
    }

    /// A bound spec with the cluster's members and node ports filled in (direct mode).
    fn resolve_binding(
        &self,
        live: &Live,
        address: &Address,
        spec: &CloudscaleLoadBalancerSpec,
        nodes: Nodes,
    ) -> Result<CloudscaleLoadBalancerSpec, ProviderError> {
        let view = self.view(live, address, spec, nodes)?;
        resolve_direct(spec, &view, &live.servers).map_err(|e| error(address, e))
    }

    /// What refresh read of the load balancer's cluster; for a plan, with the nodes as this
    /// run's node policies will leave them (applied before the load balancer).
    fn view(
        &self,
        live: &Live,
        address: &Address,
        spec: &CloudscaleLoadBalancerSpec,
        nodes: Nodes,
    ) -> Result<ClusterView, ProviderError> {
        let mut view = live.view(address)?.clone();
        let cluster = spec.binding.as_ref().map(|b| &b.cluster);
        if let (Nodes::Planned, Some(cluster)) = (nodes, cluster) {
            if let Some(planned) = self.connection(address, cluster)?.planned_nodes() {
                view.node_set_changes = node_set(&view.nodes) != node_set(&planned);
                view.nodes = planned;
            }
        }
        Ok(view)
    }

    /// The change, from the load balancer as the refresh it was planned from read it (`live`).
    async fn apply_change(
        &self,
        change: &ResourceChange,
        prior: Option<&ResourceState>,
        live: &Live,
        journal: &Journal,
    ) -> Result<Applied, ProviderError> {
        let address = &change.address;
        let controller_mode = change.record.as_ref().is_some_and(|r| {
            r.parse::<CloudscaleLoadBalancerSpec>()
                .is_ok_and(|s| s.binding.is_some_and(|b| b.mode == LbMode::Ccm))
        });
        if controller_mode {
            return self.apply_ccm(change, live, journal).await;
        }
        let deletes_service = change.operations.iter().any(|op| {
            matches!(
                super::ops::Op::of(op),
                Some(super::ops::Op::DeleteService { .. })
            )
        });
        if deletes_service {
            return self
                .apply_ccm_delete(change, journal)
                .await
                .map(|()| Applied::unverified(None));
        }
        let found = find_live(&live.snapshot, address, prior.map(|p| p.id.as_str()))?;
        let mut ids = found.map(LbIds::from_live).unwrap_or_default();
        let journal_error = |e: skyplan_core::state::StateError| error(address, e);
        for operation in &change.operations {
            let Some(op) = crate::ops::Op::of(operation) else {
                return Err(error(
                    address,
                    "a cloudscale resource with another provider's operation",
                ));
            };
            let text = op.to_string();
            tracing::info!(%address, "{text}");
            journal
                .record(address, Phase::Intent, &text, None, None)
                .map_err(journal_error)?;
            let result = execute(&self.client, &mut ids, &op).await;
            journal.checkpoint("call");
            if let Err(e) = result {
                journal
                    .record(address, Phase::Failed, &text, None, Some(e.to_string()))
                    .map_err(journal_error)?;
                return Err(failed(address, format!("{op}: {e}"), e));
            }
            let recorded = serde_json::to_value(&ids).expect("ids serialize");
            journal
                .record(address, Phase::Done, &text, Some(recorded), None)
                .map_err(journal_error)?;
        }
        let verification = self.verify(change, &ids).await;
        Ok(Applied {
            entry: state_entry(change, ids),
            verification,
        })
    }

    /// Holds the settled cloud to the plan's prediction (`ids`: what it kept and created). A
    /// deletion leaves nothing to verify; a failed read is reported, not fatal: the change
    /// itself was made.
    async fn verify(&self, change: &ResourceChange, ids: &LbIds) -> Option<Verification> {
        if change.operations.is_empty() || change.action == Action::Delete || ids.lb.is_none() {
            return None;
        }
        let address = change.address.to_string();
        let predicted = change.impact();
        let verification = match observe(&self.client, &address, ids).await {
            Ok(observed) => compare(&address, predicted, ids, &observed),
            Err(e) => Verification {
                address: address.clone(),
                predicted,
                observed: predicted,
                differences: vec![format!("could not be verified: {e}")],
            },
        };
        tracing::info!(%address, "verified: {}", verification.summary());
        Some(verification)
    }
}

impl CloudscaleProvider {
    /// Every Service of each connected cluster, listed once per run by its connection; a
    /// cluster the Kubernetes provider did not connect is not asked.
    /// The refresh plus every Service of each connected cluster (one list per cluster): the
    /// load balancers the CCM made are told by the Services pointing at them.
    fn survey_reading<'a>(
        &'a self,
        targets: &'a [Target<'a>],
        which: Members,
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        async move {
            let (live, services) =
                tokio::join!(self.refresh_reading(targets, which), self.services());
            let mut live = live?;
            live.services = super::adopt::SurveyedServices::new(services?);
            Ok(Refreshed::new(live))
        }
        .boxed()
    }

    async fn services(
        &self,
    ) -> Result<BTreeMap<Address, Vec<k8s_openapi::api::core::v1::Service>>, ProviderError> {
        let connections = self.clusters.get().map(|c| c.all()).unwrap_or_default();
        let lists = connections.iter().map(|(address, connection)| async move {
            let services = connection.services().await?;
            Ok::<_, ProviderError>((address.clone(), services.to_vec()))
        });
        let listed = futures::future::try_join_all(lists).await?;
        Ok(listed.into_iter().collect())
    }

    fn connection(
        &self,
        address: &Address,
        cluster: &Address,
    ) -> Result<Arc<skyplan_kubernetes::connection::ClusterConnection>, ProviderError> {
        self.clusters
            .get()
            .and_then(|c| c.get(cluster))
            .ok_or_else(|| error(address, format!("{cluster} is not connected")))
    }

    /// Controller mode: the Service write and the CCM's predicted effect.
    fn compare_ccm(
        &self,
        target: &Target,
        live: &Live,
        spec: &CloudscaleLoadBalancerSpec,
        prior: Option<&CloudscaleLoadBalancerSpec>,
    ) -> Result<ResourceChange, ProviderError> {
        let address = target.address;
        let view = self.view(live, address, spec, Nodes::Planned)?;
        super::ccm::plan::plan(&super::ccm::plan::CcmInput {
            address,
            spec,
            prior,
            view: &view,
            servers: &live.servers,
            snapshot: &live.snapshot,
        })
        .map_err(|e| error(address, e))
    }

    /// A controller-mode load balancer removed from the config: its Service is deleted (with
    /// --allow-delete), never the load balancer itself.
    fn removed_ccm(
        &self,
        target: &Target,
        live: &Live,
        applied: &CloudscaleLoadBalancerSpec,
        options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        let prior_id = target.prior.map(|p| p.id.as_str());
        let found = find_live(&live.snapshot, target.address, prior_id)?;
        Ok(super::ccm::plan::removed(
            target.address,
            applied,
            found.map(|l| l.lb.name.as_str()),
            options.allow_delete.contains(target.address),
        ))
    }

    /// `--allow-delete` in controller mode: deletes the Service and waits until the CCM has
    /// deleted the load balancer and released the Service (its finalizer).
    async fn apply_ccm_delete(
        &self,
        change: &ResourceChange,
        journal: &Journal,
    ) -> Result<(), ProviderError> {
        use skyplan_kubernetes::service_delete::delete_service_journaled;
        let address = &change.address;
        for operation in &change.operations {
            let Some(op) = super::ops::Op::of(operation) else {
                continue;
            };
            let super::ops::Op::DeleteService {
                cluster,
                namespace,
                name,
            } = &op
            else {
                continue;
            };
            let connection = self.connection(address, cluster)?;
            let text = op.to_string();
            delete_service_journaled(&connection, journal, address, &text, namespace, name).await?;
        }
        Ok(())
    }

    /// Writes the Service, waits for the CCM, and checks its outcome against the plan: the
    /// Service and the load balancer as refresh read them (`live`) are what it started from.
    async fn apply_ccm(
        &self,
        change: &ResourceChange,
        live: &Live,
        journal: &Journal,
    ) -> Result<Applied, ProviderError> {
        use super::ccm::apply::{compare_pool_uuids, wait_for_controller, MANAGED};
        use super::ops::Op;
        use skyplan_kubernetes::service_write::{write_service_journaled, ServiceWrite};
        let address = &change.address;
        let record = change
            .record
            .clone()
            .expect("a controller-mode change records its spec");
        let spec: CloudscaleLoadBalancerSpec = record.parse().map_err(|e| error(address, e))?;
        let binding = spec.binding.clone().expect("bound");
        let connection = self.connection(address, &binding.cluster)?;
        let live_service = live.view(address).ok().and_then(|v| v.service.as_ref());
        let before =
            match super::ccm::predict::find_ccm_lb(&live.snapshot, live_service, &spec.name) {
                super::ccm::predict::Found::Lb(lb) => Some(lb),
                _ => None,
            };
        // What the state records once the Service is written, should the wait then fail or
        // the run be killed: the next plan shows the load balancer still to come, and removing
        // it from the config plans its removal.
        let written = ResourceState {
            provider: PROVIDER.to_string(),
            id: String::new(),
            ids: serde_json::json!({"lb": null, "service": binding.service_ref()}),
            attributes: record.to_value(),
            depends_on: vec![],
        };
        let mut actions = Vec::new();
        for operation in &change.operations {
            let Some(op) = crate::ops::Op::of(operation) else {
                continue;
            };
            match &op {
                Op::WriteService {
                    namespace,
                    name,
                    body,
                    resource_version,
                } => {
                    let write = ServiceWrite {
                        namespace,
                        name,
                        body,
                        resource_version: resource_version.as_deref(),
                        planned: live_service,
                        managed: &MANAGED,
                        leaves: Some(&written),
                    };
                    let text = op.to_string();
                    write_service_journaled(&connection, journal, address, &text, write).await?;
                }
                Op::Controller { action } => actions.push(action.clone()),
                other => return Err(error(address, format!("{other} in a controller-mode plan"))),
            }
        }
        let converged = wait_for_controller(address, &self.client, &connection, &spec)
            .await
            .map_err(|e| error(address, e))?;
        let uuid = converged.lb.lb.uuid.clone().unwrap_or_default();
        let differences = compare_pool_uuids(before, &converged.lb, &actions);
        let verification = ccm_verification(change, differences);
        tracing::info!(%address, "verified: {}", verification.summary());
        Ok(Applied {
            entry: Some(ResourceState {
                provider: PROVIDER.to_string(),
                id: uuid.clone(),
                ids: serde_json::json!({"lb": uuid, "service_uid": converged.service_uid}),
                attributes: record.to_value(),
                depends_on: vec![],
            }),
            verification: Some(verification),
        })
    }

    /// Controller mode drift: `ccm::plan::drift`, the plan of the applied spec on the cluster
    /// as it is (no node policy applied).
    fn drift_ccm(
        &self,
        target: &Target,
        live: &Live,
        applied: &CloudscaleLoadBalancerSpec,
    ) -> Result<DriftCheck, ProviderError> {
        let address = target.address;
        let view = self.view(live, address, applied, Nodes::Live)?;
        super::ccm::plan::drift(&super::ccm::plan::CcmInput {
            address,
            spec: applied,
            prior: Some(applied),
            view: &view,
            servers: &live.servers,
            snapshot: &live.snapshot,
        })
        .map_err(|e| error(address, e))
    }
}

/// Controller mode's verification: the pools the controller recreated or kept against what the
/// plan predicted. A pool recreated that the plan said was kept is a pool recreation the plan
/// did not show.
fn ccm_verification(change: &ResourceChange, differences: Vec<String>) -> Verification {
    let predicted = change.impact();
    let recreated_unpredicted = differences.iter().any(|d| d.contains("was recreated by"));
    let observed = match recreated_unpredicted {
        true => predicted.max(super::impact::rule(super::impact::Change::PoolAlgorithm).impact),
        false => predicted,
    };
    Verification {
        address: change.address.to_string(),
        predicted,
        observed,
        differences,
    }
}

/// The new state entry after a change: the load balancer's IDs and the applied spec.
fn state_entry(change: &ResourceChange, ids: LbIds) -> Option<ResourceState> {
    let id = ids.lb.clone()?;
    let record = change.record.as_ref()?;
    Some(ResourceState {
        provider: PROVIDER.to_string(),
        id,
        ids: serde_json::to_value(&ids).expect("ids serialize"),
        attributes: record.to_value(),
        depends_on: vec![],
    })
}

/// Why a binding's cluster could not be read: the API failed, or the binding names what the
/// cluster does not have (an error at the config's `service` key).
enum ViewError {
    Api(ProviderError),
    Service(String),
}

impl ViewError {
    fn into_error(self, target: &Target) -> ProviderError {
        match self {
            ViewError::Api(e) => ProviderError::wrap(target.address, e),
            ViewError::Service(message) => {
                let plain = error(target.address, message);
                match target.resource {
                    Some(resource) => plain.at(resource.location_of("service")),
                    None => plain,
                }
            }
        }
    }
}

/// The nodes, the Service and (in controller mode, when the spec asks for node ports) the
/// node ports other Services hold. The namespace is read only when the Service is missing.
async fn read_view(
    connection: &ClusterConnection,
    spec: &CloudscaleLoadBalancerSpec,
    binding: &ServiceBinding,
) -> Result<ClusterView, ViewError> {
    let nodes = connection.nodes().await.map_err(ViewError::Api)?;
    let service = connection
        .service(&binding.namespace, &binding.name)
        .await
        .map_err(ViewError::Api)?;
    if let Some(why) = connection
        .missing_namespace(&binding.namespace, service.as_ref())
        .await
        .map_err(ViewError::Api)?
    {
        return Err(ViewError::Service(why));
    }
    if service.is_none() && binding.mode == LbMode::Direct {
        return Err(ViewError::Service(missing_service(binding)));
    }
    let asks_for_node_ports =
        binding.mode == LbMode::Ccm && spec.ports.iter().any(|p| p.node_port != 0);
    let node_ports_held = match asks_for_node_ports {
        true => connection
            .node_ports_in_use()
            .await
            .map_err(ViewError::Api)?
            .clone(),
        false => Default::default(),
    };
    Ok(ClusterView {
        nodes: nodes.to_vec(),
        service,
        node_set_changes: false,
        node_ports_held,
    })
}

/// The live load balancer of an address: the one the state names, else the one carrying
/// skyplan's ownership tag (adopting what an apply created before the state was lost).
fn find_live<'s>(
    snapshot: &'s IndexedSnapshot,
    address: &Address,
    prior_id: Option<&str>,
) -> Result<Option<&'s LbObjects>, ProviderError> {
    if let Some(lb) = prior_id.and_then(|id| snapshot.load_balancer(id)) {
        return Ok(Some(lb));
    }
    let tag = address.to_string();
    let owned: Vec<&LbObjects> = snapshot.unclaimed_owned_by(&tag).collect();
    match owned.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        many => Err(error(
            address,
            format!(
                "{} load balancers carry the tag {OWNER_TAG}={address} ({}): delete the extra ones or import the right one",
                many.len(),
                many.iter().filter_map(|l| l.lb.uuid.as_deref()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// Whether a spec is in controller mode.
fn is_ccm(spec: &CloudscaleLoadBalancerSpec) -> bool {
    spec.binding.as_ref().is_some_and(|b| b.mode == LbMode::Ccm)
}

/// The spec recorded at the last apply; unreadable (an older format) counts as unknown.
fn applied_spec(prior: &ResourceState) -> Option<CloudscaleLoadBalancerSpec> {
    serde_json::from_value(prior.attributes.clone()).ok()
}

/// The config validates that a cloudscale resource is a cloudscale load balancer.
fn load_balancer_spec(resource: &Resource) -> Option<&CloudscaleLoadBalancerSpec> {
    resource.spec.get()
}

/// Which nodes a Service-bound load balancer's members are computed from.
#[derive(Clone, Copy)]
enum Nodes {
    /// As read: drift compares the cloud with the cluster as it is.
    Live,
    /// As this run's node policies will leave them: a plan.
    Planned,
}

/// Why the live load balancer is compared: a plan checks the floating IPs it would assign and
/// counts on the planned nodes; a drift check holds the cloud to what was applied.
#[derive(Clone, Copy, PartialEq)]
enum Purpose {
    Plan,
    Drift,
}

impl CloudscaleProvider {
    /// Desired (`spec`) vs the target's live load balancer in `live`.
    fn compare(
        &self,
        target: &Target,
        live: &Live,
        spec: Option<&CloudscaleLoadBalancerSpec>,
        prior: Option<&CloudscaleLoadBalancerSpec>,
        options: &PlanOptions,
        purpose: Purpose,
    ) -> Result<ResourceChange, ProviderError> {
        let address = target.address;
        let resolved = match spec {
            Some(spec) if spec.binding.as_ref().is_some_and(|b| b.mode == LbMode::Ccm) => {
                return self.compare_ccm(target, live, spec, prior);
            }
            Some(spec) if spec.binding.is_some() => {
                let nodes = match purpose {
                    Purpose::Plan => Nodes::Planned,
                    Purpose::Drift => Nodes::Live,
                };
                Some(self.resolve_binding(live, address, spec, nodes)?)
            }
            _ => None,
        };
        let spec = resolved.as_ref().or(spec);
        let snapshot = &live.snapshot;
        let found = find_live(snapshot, address, target.prior.map(|p| p.id.as_str()))?;
        let desired = spec
            .map(|spec| desired_objects(address, spec, &snapshot.subnets))
            .transpose()
            .map_err(|e| located_desired_error(target, spec, e))?;
        if let (Some(spec), Purpose::Plan) = (spec, purpose) {
            let own = found.and_then(|l| l.lb.uuid.as_deref());
            catalog::check_vip_addresses(spec, snapshot, own)
                .and_then(|()| catalog::check_floating_ips(spec, snapshot, own))
                .map_err(|u| u.into_error(address, target.resource))?;
        }
        Ok(diff(&DiffInput {
            address,
            desired: spec.zip(desired.as_ref()),
            prior,
            live: found,
            replace: options.replace.contains(address),
            allow_delete: options.allow_delete.contains(address),
            tag: purpose == Purpose::Plan,
        }))
    }
}

impl ClusterCloud for CloudscaleProvider {
    /// The cloud's VMs as its controller describes them, for node-metadata drift.
    fn instances(&self) -> Arc<dyn CloudInstances> {
        Arc::new(CloudscaleInstances {
            client: self.client.clone(),
            cache: self.servers.clone(),
        })
    }

    /// The connected clusters, handed over by the registry once the Kubernetes provider
    /// connected: a load balancer bound to a Service reads its cluster when it refreshes.
    fn attach_clusters(&self, clusters: Arc<Clusters>) {
        // Once per run, by the registry.
        let _ = self.clusters.set(clusters);
    }
}

impl Provider for CloudscaleProvider {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn refresh<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        async move { self.refresh_targets(targets).await.map(Refreshed::new) }.boxed()
    }

    /// The refresh, plus every Service of each connected cluster (one list per cluster): the
    /// load balancers the CCM made are told by the Services pointing at them.
    fn survey<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> BoxFuture<'a, Result<Refreshed, ProviderError>> {
        self.survey_reading(targets, Members::OfTargets)
    }

    /// Every load balancer's members: what adopting them all reads anyway, in one survey
    /// instead of a listing and then a second survey.
    fn survey_deep<'a>(
        &'a self,
        targets: &'a [Target<'a>],
    ) -> Option<BoxFuture<'a, Result<Refreshed, ProviderError>>> {
        Some(self.survey_reading(targets, Members::All))
    }

    fn discover(
        &self,
        targets: &[Target],
        surveyed: &Refreshed,
    ) -> Result<Discovered, ProviderError> {
        Ok(super::adopt::discover(targets, Live::of(surveyed)?))
    }

    fn generate(
        &self,
        target: &Target,
        surveyed: &Refreshed,
        adopting: &Adopting,
    ) -> Result<Generated, ProviderError> {
        super::adopt::generate(target, Live::of(surveyed)?, adopting)
    }

    fn plan(
        &self,
        target: &Target,
        refreshed: &Refreshed,
        options: &PlanOptions,
    ) -> Result<ResourceChange, ProviderError> {
        let live = Live::of(refreshed)?;
        let prior = target.prior.and_then(applied_spec);
        let spec = target.resource.and_then(load_balancer_spec);
        let placement = spec.or(prior.as_ref()).map(placement);
        if let (None, Some(applied)) = (spec, prior.as_ref().filter(|p| is_ccm(p))) {
            let mut change = self.removed_ccm(target, live, applied, options)?;
            change.placement = placement;
            return Ok(change);
        }
        if let Some(spec) = spec {
            catalog::check_names(spec, &live.snapshot)
                .map_err(|u| u.into_error(target.address, target.resource))?;
        }
        let mut change =
            self.compare(target, live, spec, prior.as_ref(), options, Purpose::Plan)?;
        change.placement = placement;
        Ok(change)
    }

    fn drift(&self, target: &Target, refreshed: &Refreshed) -> Result<DriftCheck, ProviderError> {
        let live = Live::of(refreshed)?;
        // What was last applied is what the cloud should still hold; a resource found only by
        // its tag is held to the config.
        let applied = target.prior.and_then(applied_spec);
        let expected = applied
            .as_ref()
            .or(target.resource.and_then(load_balancer_spec));
        let Some(expected) = expected else {
            return Ok(DriftCheck::NotApplied);
        };
        if expected
            .binding
            .as_ref()
            .is_some_and(|b| b.mode == LbMode::Ccm)
        {
            return self.drift_ccm(target, live, expected);
        }
        let change = self.compare(
            target,
            live,
            Some(expected),
            None,
            &PlanOptions::default(),
            Purpose::Drift,
        )?;
        Ok(match change.action {
            Action::Create if target.prior.is_some() => DriftCheck::Missing,
            Action::Create => DriftCheck::NotApplied,
            _ => DriftCheck::Compared(change.attributes),
        })
    }

    fn import(
        &self,
        target: &Target,
        refreshed: &Refreshed,
    ) -> Result<ResourceState, ProviderError> {
        let address = target.address;
        let (Some(resource), Some(prior)) = (target.resource, target.prior) else {
            return Err(error(
                address,
                "import needs the resource in the config and an ID",
            ));
        };
        let snapshot = &Live::of(refreshed)?.snapshot;
        let found = snapshot.load_balancer(&prior.id).ok_or_else(|| {
            error(
                address,
                format!("no load balancer with UUID {} in the account", prior.id),
            )
        })?;
        let ids = LbIds::from_live(found);
        Ok(ResourceState {
            provider: PROVIDER.to_string(),
            id: prior.id.clone(),
            ids: serde_json::to_value(&ids).expect("ids serialize"),
            attributes: serde_json::to_value(load_balancer_spec(resource))
                .expect("specs serialize"),
            depends_on: vec![],
        })
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

    fn health<'a>(
        &'a self,
        change: &'a ResourceChange,
        entry: Option<&'a ResourceState>,
    ) -> BoxFuture<'a, Result<skyplan_core::provider::Health, ProviderError>> {
        async move {
            let Some(entry) = entry else {
                return Ok(skyplan_core::provider::Health::Healthy);
            };
            let read = super::health::read(&self.client, entry).await;
            read.map_err(|e| error(&change.address, e))
        }
        .boxed()
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

/// Whose members a refresh reads: one GET per pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Members {
    OfTargets,
    All,
}

/// A member in none of the subnets, at its place in the config's `members` (a member chosen
/// from a cluster's nodes is not written there: the resource's table).
fn located_desired_error(
    target: &Target,
    spec: Option<&CloudscaleLoadBalancerSpec>,
    e: super::desired::DesiredError,
) -> ProviderError {
    let super::desired::DesiredError::MemberWithoutSubnet {
        address: member, ..
    } = &e;
    let index = spec.and_then(|s| s.members.iter().position(|m| m == member));
    let path = index.map(|i| format!("members[{i}]")).unwrap_or_default();
    let unusable = catalog::Unusable {
        path,
        message: e.to_string(),
    };
    unusable.into_error(target.address, target.resource)
}

/// Where a load balancer is, for a rollout grouped by zone or cluster: its zone, and the
/// cluster of the Service it serves.
fn placement(spec: &CloudscaleLoadBalancerSpec) -> skyplan_core::plan::Placement {
    skyplan_core::plan::Placement {
        cluster: (spec.binding.as_ref()).map(|binding| binding.cluster.to_string()),
        zone: Some(spec.zone.clone()),
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;
    use skyplan_core::model::{Impact, ResourceKind};
    use skyplan_core::provider::ErrorKind;

    #[tokio::test]
    async fn a_refused_connection_is_a_transport_error_caused_by_the_clients() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/v1/load-balancers",
            listener.local_addr().unwrap()
        );
        drop(listener);
        let refused = reqwest::get(&url).await.unwrap_err();
        let e = client::Error::Transport {
            method: reqwest::Method::GET,
            path: "/load-balancers".into(),
            source: refused,
        };
        let message = format!("refresh failed: {e}");
        let error = failed(PROVIDER, &message, e);
        assert_eq!(error.to_string(), format!("cloudscale: {message}"));
        assert_eq!(error.kind, ErrorKind::Transport);
        let source = error.source().expect("the client's error");
        let client_error = source.downcast_ref::<client::Error>();
        assert!(matches!(
            client_error,
            Some(client::Error::Transport { .. })
        ));
        let root = source
            .source()
            .and_then(|e| e.downcast_ref::<reqwest::Error>());
        assert!(root.is_some_and(reqwest::Error::is_connect), "{root:?}");
    }

    #[test]
    fn a_pool_the_controller_recreated_unpredicted_is_an_under_prediction() {
        let change = ResourceChange::no_op(
            Address::new(ResourceKind::LoadBalancer, "web"),
            PROVIDER,
            None,
        );
        let same = ccm_verification(&change, vec![]);
        assert_eq!(same.summary(), "as predicted");
        let recreated = "pool tcp was recreated by the controller (the plan predicted it kept)";
        let worse = ccm_verification(&change, vec![recreated.into()]);
        assert!(worse.under_predicted());
        assert_eq!(worse.observed, Impact::PoolRecreate);
        let kept = "pool tcp was predicted to be recreated but kept its UUID";
        let better = ccm_verification(&change, vec![kept.into()]);
        assert!(!better.as_predicted() && !better.under_predicted());
    }
}
