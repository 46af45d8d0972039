//! The CloudStack provider's controller-mode load balancers: through the clusters the registry
//! attached, refresh reads each one's cluster (its nodes and the live Service) into [`Views`],
//! which the provider's refresh returns; plan, drift and apply are handed them back. The
//! provider only delegates to this.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use k8s_openapi::api::core::v1::{Node, Service};

use super::apply::{compare_rule_ids, wait_for_controller, RuleIds};
use super::plan::{drift, plan, CcmOp, CcmPlanInput};
use super::predict::{lb_candidate, live_rules, service_base};
use super::service::MANAGED;
use crate::live::{ApplyContext, Inventory};
use crate::ops::Op;
use crate::spec::CloudstackLoadBalancerSpec;
use crate::PROVIDER;
use skyplan_core::config::SourceLocation;
use skyplan_core::model::Address;
use skyplan_core::model::Impact;
use skyplan_core::plan::ResourceChange;
use skyplan_core::provider::{DriftCheck, ProviderError};
use skyplan_core::state::journal::Journal;
use skyplan_core::state::ResourceState;
use skyplan_kubernetes::connection::{ClusterConnection, Clusters};
use skyplan_kubernetes::service_write::{write_service_journaled, ServiceWrite};
use skyplan_kubernetes::spec::LbMode;

/// The cluster as refresh read it for one load balancer.
#[derive(Clone)]
pub struct ServiceView {
    pub nodes: Vec<Node>,
    pub service: Option<Service>,
}

/// A controller-mode load balancer to read, and where its config names the Service.
pub struct CcmTarget<'a> {
    pub address: &'a Address,
    pub spec: &'a CloudstackLoadBalancerSpec,
    pub service: Option<&'a SourceLocation>,
}

/// The cluster of each controller-mode load balancer as refresh read it, or why it could not
/// be read (reported when the plan needs it).
#[derive(Default)]
pub struct Views(BTreeMap<Address, Result<ServiceView, ProviderError>>);

impl Views {
    /// The CCM base names of the Services read, so refresh reads their rules' members.
    pub fn base_names(&self) -> BTreeSet<String> {
        self.0
            .values()
            .flatten()
            .filter_map(|v| service_base(v.service.as_ref()))
            .collect()
    }

    /// The CCM base name of the Service read for the load balancer at `address`, if it exists.
    pub fn base_of(&self, address: &Address) -> Option<String> {
        let view = self.0.get(address)?.as_ref().ok()?;
        service_base(view.service.as_ref())
    }

    fn view(&self, address: &Address) -> Result<&ServiceView, ProviderError> {
        match self.0.get(address) {
            Some(Ok(view)) => Ok(view),
            Some(Err(e)) => Err(e.clone()),
            None => Err(error(
                address,
                "the cluster was not read for this load balancer",
            )),
        }
    }

    /// The rules the CCM made for the Service as refresh saw them, by name.
    fn rules_before(&self, address: &Address, live: &Inventory) -> RuleIds {
        let Ok(view) = self.view(address) else {
            return RuleIds::new();
        };
        let Some(base) = service_base(view.service.as_ref()) else {
            return RuleIds::new();
        };
        live_rules(live, &base)
            .into_iter()
            .map(|(n, r)| (n, r.id.clone()))
            .collect()
    }
}

/// The clusters the registry attached, through which controller-mode load balancers are read,
/// planned and applied.
#[derive(Default)]
pub struct CcmClusters {
    /// Set once by the registry.
    clusters: OnceLock<Arc<Clusters>>,
}

/// Whether a spec is in controller mode.
pub fn is_ccm(spec: &CloudstackLoadBalancerSpec) -> bool {
    spec.binding.as_ref().is_some_and(|b| b.mode == LbMode::Ccm)
}

fn error(address: &Address, message: impl std::fmt::Display) -> ProviderError {
    ProviderError::new(address, message.to_string())
}

impl CcmClusters {
    pub fn attach(&self, clusters: Arc<Clusters>) {
        // Once per run, by the registry.
        let _ = self.clusters.set(clusters);
    }

    fn connection(
        &self,
        address: &Address,
        cluster: &Address,
    ) -> Result<Arc<ClusterConnection>, ProviderError> {
        self.connected(cluster).ok_or_else(|| {
            error(
                address,
                format!("{cluster} is not connected: controller mode needs its cluster"),
            )
        })
    }

    /// Reads each controller-mode load balancer's nodes and Service (one GET each). `service`
    /// is where the config names the Service: a namespace that does not exist is an error
    /// there (read only when the Service is missing).
    pub async fn read(&self, specs: &[CcmTarget<'_>]) -> Views {
        let mut views = BTreeMap::new();
        for target in specs {
            let view = self.read_one(target).await;
            views.insert(target.address.clone(), view);
        }
        Views(views)
    }

    async fn read_one(&self, target: &CcmTarget<'_>) -> Result<ServiceView, ProviderError> {
        let (address, binding) = (target.address, target.spec.binding.as_ref());
        let binding = binding.expect("controller mode");
        let api = |e: ProviderError| ProviderError::wrap(address, e);
        let connection = self.connection(address, &binding.cluster)?;
        let nodes = connection.nodes().await.map_err(api)?.to_vec();
        let service = connection
            .service(&binding.namespace, &binding.name)
            .await
            .map_err(api)?;
        let missing = connection
            .missing_namespace(&binding.namespace, service.as_ref())
            .await
            .map_err(api)?;
        if let Some(why) = missing {
            let plain = error(address, why);
            return Err(match target.service {
                Some(at) => plain.at(at),
                None => plain,
            });
        }
        Ok(ServiceView { nodes, service })
    }

    /// The load balancer's change, from its cluster as refresh read it (`views`) and the
    /// account (`live`); `scaled_workers`: what the cluster gains or loses first in the same
    /// apply.
    pub fn plan(
        &self,
        views: &Views,
        address: &Address,
        spec: &CloudstackLoadBalancerSpec,
        live: &Inventory,
        scaled_workers: i64,
    ) -> Result<ResourceChange, ProviderError> {
        self.planned(views, address, spec, live, scaled_workers, plan)
    }

    /// Drift: what writing the applied Service again would change — `plan::drift`, the plan
    /// of the applied spec on the same input a plan reads.
    pub fn drift(
        &self,
        views: &Views,
        address: &Address,
        applied: &CloudstackLoadBalancerSpec,
        live: &Inventory,
    ) -> Result<DriftCheck, ProviderError> {
        self.planned(views, address, applied, live, 0, drift)
    }

    /// `reading` of the plan input for `spec`: the cluster as refresh read it, with the nodes
    /// as this run's node policies leave them (a node a policy excludes leaves the rules once
    /// the policy is applied, before the load balancer).
    fn planned<R>(
        &self,
        views: &Views,
        address: &Address,
        spec: &CloudstackLoadBalancerSpec,
        live: &Inventory,
        scaled_workers: i64,
        reading: impl FnOnce(&CcmPlanInput) -> R,
    ) -> Result<R, ProviderError> {
        let view = views.view(address)?;
        let binding = spec.binding.as_ref().expect("controller mode");
        let planned = self.connection(address, &binding.cluster)?.planned_nodes();
        Ok(reading(&CcmPlanInput {
            address,
            spec,
            service: view.service.as_ref(),
            nodes: planned.as_deref().unwrap_or(&view.nodes),
            live,
            scaled_workers,
        }))
    }

    /// `--allow-delete`: deletes the Service through `connection` (its cluster's) and waits
    /// until the CCM has deleted the rules and released the Service (its finalizer).
    pub async fn delete(
        &self,
        journal: &Journal,
        change: &ResourceChange,
        connection: &ClusterConnection,
    ) -> Result<(), ProviderError> {
        use skyplan_kubernetes::service_delete::delete_service_journaled;
        let address = &change.address;
        for operation in &change.operations {
            let Some(Op::Ccm(op)) = Op::of(operation) else {
                continue;
            };
            let CcmOp::DeleteService {
                namespace, name, ..
            } = &op
            else {
                continue;
            };
            let text = op.to_string();
            delete_service_journaled(connection, journal, address, &text, namespace, name).await?;
        }
        Ok(())
    }

    /// The connection to `cluster` if the registry made one (the config binds a controller-mode
    /// load balancer or a node policy to it).
    pub fn connected(&self, cluster: &Address) -> Option<Arc<ClusterConnection>> {
        self.clusters.get()?.get(cluster)
    }

    /// Writes the Service, waits for the CCM and checks its outcome against the plan: the
    /// rules it made before (in `live`, the account the plan was made from) kept or replaced
    /// as predicted. `scaled_workers`: as planned.
    pub async fn apply(
        &self,
        context: &ApplyContext<'_>,
        change: &ResourceChange,
        views: &Views,
        live: &Inventory,
        scaled_workers: i64,
    ) -> Result<ResourceState, ProviderError> {
        let (client, journal) = (context.client, context.journal);
        let address = &change.address;
        let before = views.rules_before(address, live);
        if let Some(forbidden) = change
            .attributes
            .iter()
            .find(|a| a.impact == Impact::Forbidden)
        {
            return Err(error(
                address,
                format!(
                    "refused, the controller would not converge: {}",
                    forbidden.reason
                ),
            ));
        }
        let record = change
            .record
            .clone()
            .expect("a controller-mode change records its spec");
        let spec: CloudstackLoadBalancerSpec = record.parse().map_err(|e| error(address, e))?;
        let binding = spec.binding.clone().expect("bound");
        let connection = self.connection(address, &binding.cluster)?;
        // The Service as refresh read it: a 409 is retried only if what skyplan manages is
        // still that (the CCM wrote its own annotation or the status meanwhile).
        let planned = views.view(address).ok().and_then(|v| v.service.as_ref());
        // Recorded once the Service is written (see the cloudscale provider's apply_ccm).
        let written = ResourceState {
            provider: PROVIDER.to_string(),
            id: String::new(),
            ids: serde_json::json!({ "rules": {} }),
            attributes: record.to_value(),
            depends_on: vec![],
        };
        let mut actions = Vec::new();
        for operation in &change.operations {
            let Some(Op::Ccm(op)) = Op::of(operation) else {
                return Err(error(
                    address,
                    format!("{operation} in a controller-mode plan"),
                ));
            };
            let CcmOp::WriteService {
                namespace,
                name,
                body,
                resource_version,
            } = &op
            else {
                if let CcmOp::Controller { action } = &op {
                    actions.push(action.clone());
                }
                continue;
            };
            let write = ServiceWrite {
                namespace,
                name,
                body,
                resource_version: resource_version.as_deref(),
                planned,
                managed: &MANAGED,
                leaves: Some(&written),
            };
            let text = op.to_string();
            write_service_journaled(&connection, journal, address, &text, write).await?;
        }
        // After a scale in the same apply the node set must first reach its new size: the
        // Nodes balanced as planned, plus or minus the workers (a scaled-up worker's Node is
        // not Ready the moment CKS reports the scale done).
        let expected_nodes = match scaled_workers {
            0 => None,
            scaled => {
                let nodes = connection
                    .planned_nodes()
                    .or_else(|| views.view(address).ok().map(|v| v.nodes.clone()))
                    .unwrap_or_default();
                let balanced = nodes.iter().filter(|n| lb_candidate(n)).count();
                let expected = i64::try_from(balanced).unwrap_or(i64::MAX) + scaled;
                Some(usize::try_from(expected).unwrap_or(0))
            }
        };
        let after = wait_for_controller(address, client, &connection, &spec, expected_nodes)
            .await
            .map_err(|e| error(address, e))?;
        let differences = compare_rule_ids(&before, &after, &actions);
        if !differences.is_empty() {
            return Err(error(
                address,
                format!(
                    "the controller did not do what the plan predicted: {}",
                    differences.join("; ")
                ),
            ));
        }
        let id = after.values().next().cloned().unwrap_or_default();
        Ok(ResourceState {
            provider: PROVIDER.to_string(),
            id,
            ids: serde_json::json!({ "rules": after }),
            attributes: record.to_value(),
            depends_on: vec![],
        })
    }
}
