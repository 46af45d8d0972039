//! The service controller of cloud-provider v0.23.5 (the CCM's pin) around the PhoenixNAP
//! load balancer, as passes over all Services instead of watch events:
//! - Ensure when a LoadBalancer Service (no loadBalancerClass) is new or changed in a field
//!   `needsUpdate` compares — the CCM's own write of `spec.loadBalancerIP` is such a change,
//!   which is how the real address replaces the first Ensure's empty one;
//! - Update for every synced Service when the names of the nodes passing the predicates change;
//! - the delete branch (GetLoadBalancer first, EnsureLoadBalancerDeleted only if it says the
//!   load balancer exists, then the finalizer goes, then the status is emptied) when the
//!   Service is being deleted or no longer wants a load balancer; a Service gone without the
//!   finalizer gets EnsureLoadBalancerDeleted straight away (`processServiceDeletion`).
//!
//! A failed sync is retried with the workqueue's exponential backoff (5 s doubling to 300 s),
//! counted in passes (one pass stands for 5 s: 1, 2, 4 … 60 passes); a change to the Service
//! requeues it at once, as an informer event does.
//!
//! Every reconcile goes to `ControllersHandle::history` and, when it changed something or
//! failed anew, to the Service as the shared [`ReconcileRecord`]; its error, if any, to
//! [`LAST_ERROR_ANNOTATION`].

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::super::cloudstack::LAST_ERROR_ANNOTATION;
use super::super::http::{Kube, MERGE_PATCH};
use super::super::objects::{Node, Service};
use super::super::reconcile::Outcome;
use super::super::services::fingerprint;
use super::super::writeback::{self, ReconcileRecord, FINALIZER};
use super::balancer::{Balancer, LbService};

/// The `UnAvailableLoadBalancer` event of an Ensure without a node passing the predicates.
pub const NO_NODES_WARNING: &str =
    "UnAvailableLoadBalancer: There are no available nodes for LoadBalancer";

/// The workqueue's longest backoff, 300 s, in 5 s passes.
const MAX_BACKOFF_PASSES: u64 = 60;

struct Synced {
    raw: Value,
    fingerprint: Value,
    update_pending: bool,
}

/// A Service whose last sync failed: when to retry, unless it changes first.
struct Failing {
    count: u32,
    retry_at: u64,
    fingerprint: Value,
}

pub struct ServiceController {
    kube: Kube,
    synced: HashMap<String, Synced>,
    failing: HashMap<String, Failing>,
    node_set: Option<BTreeSet<String>>,
    pass: u64,
    history: Arc<Mutex<Vec<ReconcileRecord>>>,
}

/// v0.23.5 `getNodeConditionPredicate`: no exclude-from-external-load-balancers label, no
/// autoscaler deletion taint, and a Ready condition that is True.
pub fn lb_candidate(node: &Node) -> bool {
    !node
        .metadata
        .labels
        .contains_key("node.kubernetes.io/exclude-from-external-load-balancers")
        && !node.has_taint("ToBeDeletedByClusterAutoscaler")
        && node.is_ready()
}

/// `LoadBalancerStatusEqual`: ip and hostname of each ingress, in order.
fn same_ingress(raw: &Value, wanted: &[Value]) -> bool {
    let key = |i: &Value| (i["ip"].clone(), i["hostname"].clone());
    let current: Vec<_> = raw["status"]["loadBalancer"]["ingress"]
        .as_array()
        .map(|list| list.iter().map(key).collect())
        .unwrap_or_default();
    current == wanted.iter().map(key).collect::<Vec<_>>()
}

fn needs_cleanup(service: &Service) -> bool {
    service.metadata.finalizers.iter().any(|f| f == FINALIZER)
        && (service.metadata.deletion_timestamp.is_some() || !service.wants_load_balancer())
}

/// Backoff after the `count`th failure in a row, in passes: 1, 2, 4 … 60.
fn backoff_passes(count: u32) -> u64 {
    1u64.checked_shl(count.saturating_sub(1))
        .unwrap_or(u64::MAX)
        .min(MAX_BACKOFF_PASSES)
}

impl ServiceController {
    pub fn new(kube: Kube, history: Arc<Mutex<Vec<ReconcileRecord>>>) -> Self {
        ServiceController {
            kube,
            synced: HashMap::new(),
            failing: HashMap::new(),
            node_set: None,
            pass: 0,
            history,
        }
    }

    /// Consecutive failed syncs of `namespace/name`.
    #[cfg(test)]
    pub fn failures(&self, key: &str) -> u32 {
        self.failing.get(key).map_or(0, |f| f.count)
    }

    /// Whether a Service may be synced this pass: not failing, changed since it failed, or
    /// its backoff is over.
    fn due(&self, key: &str, print: &Value) -> bool {
        self.failing
            .get(key)
            .is_none_or(|f| f.fingerprint != *print || self.pass >= f.retry_at)
    }

    pub async fn pass(&mut self, balancer: &Balancer<'_>, raw_services: &[Value], nodes: &[Node]) {
        self.pass += 1;
        let candidates: Vec<Node> = nodes.iter().filter(|n| lb_candidate(n)).cloned().collect();
        let names: BTreeSet<String> = candidates.iter().map(|n| n.metadata.name.clone()).collect();
        let nodes_changed = self.node_set.as_ref().is_some_and(|last| *last != names);
        let mut seen = BTreeSet::new();
        for raw in raw_services {
            let Some(service) = Service::from_json(raw) else {
                continue;
            };
            let key = service.key();
            seen.insert(key.clone());
            if !self.due(&key, &fingerprint(raw)) {
                continue;
            }
            if needs_cleanup(&service) {
                self.delete(balancer, &service, raw).await;
            } else if service.wants_load_balancer() {
                self.sync(balancer, &service, raw, &candidates, nodes_changed)
                    .await;
            } else if self.synced.contains_key(&key) {
                self.delete(balancer, &service, raw).await;
            }
        }
        let gone: Vec<Value> = self
            .synced
            .iter()
            .filter(|(key, _)| !seen.contains(*key))
            .map(|(_, synced)| synced.raw.clone())
            .collect();
        for raw in gone {
            if let Some(service) = Service::from_json(&raw) {
                if self.due(&service.key(), &fingerprint(&raw)) {
                    self.delete_gone(balancer, &service, &raw).await;
                }
            }
        }
        self.node_set = Some(names);
    }

    async fn sync(
        &mut self,
        balancer: &Balancer<'_>,
        service: &Service,
        raw: &Value,
        nodes: &[Node],
        nodes_changed: bool,
    ) {
        let key = service.key();
        let unchanged = self
            .synced
            .get(&key)
            .filter(|s| s.fingerprint == fingerprint(raw) && !self.failing.contains_key(&key));
        match unchanged {
            Some(synced) if nodes_changed || synced.update_pending => {
                self.update(balancer, service, nodes).await;
            }
            Some(_) => {}
            None => self.ensure(balancer, service, raw, nodes).await,
        }
    }

    async fn ensure(
        &mut self,
        balancer: &Balancer<'_>,
        service: &Service,
        raw: &Value,
        nodes: &[Node],
    ) {
        let mut actions = Vec::new();
        let warnings = match nodes.is_empty() {
            true => vec![NO_NODES_WARNING.to_owned()],
            false => Vec::new(),
        };
        let result = async {
            writeback::set_finalizer(&self.kube, service, true)
                .await
                .map_err(|e| format!("failed to add load balancer cleanup finalizer: {e}"))?;
            let view = LbService::from_json(raw).ok_or("a Service without a name")?;
            let status = balancer
                .ensure(&view, nodes, &mut actions)
                .await
                .map_err(|e| format!("failed to ensure load balancer: {e}"))?;
            self.patch_status(service, raw, &status).await
        }
        .await;
        if result.is_ok() {
            self.synced.insert(
                service.key(),
                Synced {
                    raw: raw.clone(),
                    fingerprint: fingerprint(raw),
                    update_pending: false,
                },
            );
        }
        let outcome = Outcome { actions, warnings };
        self.record(service, raw, "ensure", outcome, result.err())
            .await;
    }

    async fn update(&mut self, balancer: &Balancer<'_>, service: &Service, nodes: &[Node]) {
        let result = balancer.update(nodes);
        let key = service.key();
        let Some(synced) = self.synced.get_mut(&key) else {
            return;
        };
        synced.update_pending = result.is_err();
        let raw = synced.raw.clone();
        self.record(service, &raw, "update", Outcome::default(), result.err())
            .await;
    }

    /// The delete branch of `syncLoadBalancerIfNeeded`.
    async fn delete(&mut self, balancer: &Balancer<'_>, service: &Service, raw: &Value) {
        let mut actions = Vec::new();
        let result = async {
            let view = LbService::from_json(raw).ok_or("a Service without a name")?;
            let exists = balancer.get(&view).await.map_err(|e| {
                format!("failed to check if load balancer exists before cleanup: {e}")
            })?;
            if exists.is_some() {
                balancer
                    .ensure_deleted(&view, &mut actions)
                    .await
                    .map_err(|e| format!("failed to delete load balancer: {e}"))?;
            }
            writeback::set_finalizer(&self.kube, service, false)
                .await
                .map_err(|e| format!("failed to remove load balancer cleanup finalizer: {e}"))?;
            self.patch_status(service, raw, &[]).await
        }
        .await;
        if result.is_ok() {
            self.synced.remove(&service.key());
        }
        let outcome = Outcome {
            actions,
            warnings: Vec::new(),
        };
        self.record(service, raw, "delete", outcome, result.err())
            .await;
    }

    /// `processServiceDeletion`: the cached Service, if it wanted a load balancer, goes
    /// through EnsureLoadBalancerDeleted without a Get first.
    async fn delete_gone(&mut self, balancer: &Balancer<'_>, service: &Service, raw: &Value) {
        let mut actions = Vec::new();
        let result = match LbService::from_json(raw) {
            Some(view) if service.wants_load_balancer() => balancer
                .ensure_deleted(&view, &mut actions)
                .await
                .map_err(|e| format!("error deleting load balancer: {e}")),
            _ => Ok(()),
        };
        if result.is_ok() {
            self.synced.remove(&service.key());
        }
        let outcome = Outcome {
            actions,
            warnings: Vec::new(),
        };
        self.record(service, raw, "delete", outcome, result.err())
            .await;
    }

    /// `patchStatus`: only when ip or hostname differ; a Service gone meanwhile needs none.
    async fn patch_status(
        &self,
        service: &Service,
        raw: &Value,
        ingress: &[Value],
    ) -> Result<(), String> {
        if same_ingress(raw, ingress) {
            return Ok(());
        }
        match writeback::set_ingress(&self.kube, service, raw, ingress).await {
            Err(e) if !e.is_not_found() => Err(format!("patching the status: {e}")),
            _ => Ok(()),
        }
    }

    async fn record(
        &mut self,
        service: &Service,
        raw: &Value,
        trigger: &str,
        outcome: Outcome,
        error: Option<String>,
    ) {
        let key = service.key();
        // A failed Update is retried by the next node sync, not requeued with backoff.
        if trigger != "update" {
            self.note_result(&key, raw, error.is_some());
        }
        let record = ReconcileRecord {
            service: key,
            trigger: trigger.into(),
            actions: outcome.actions,
            warnings: outcome.warnings,
            error,
        };
        if let Err(e) = writeback::write_record(&self.kube, service, &record).await {
            tracing::debug!(error = %e, "reconcile record not written");
        }
        self.write_last_error(service, record.error.as_deref())
            .await;
        let mut history = self.history.lock().expect("history lock");
        // A failure retried every pass is one entry, not one per pass.
        if record.error.is_none() || history.last() != Some(&record) {
            history.push(record);
        }
    }

    /// `queue.Forget` on success, `AddRateLimited` on failure.
    fn note_result(&mut self, key: &str, raw: &Value, failed: bool) {
        if !failed {
            self.failing.remove(key);
            return;
        }
        let count = self.failing.get(key).map_or(0, |f| f.count) + 1;
        let failing = Failing {
            count,
            retry_at: self.pass + backoff_passes(count),
            fingerprint: fingerprint(raw),
        };
        self.failing.insert(key.to_owned(), failing);
    }

    /// Sets or clears the last-error annotation, only when it differs from what was read.
    async fn write_last_error(&self, service: &Service, error: Option<&str>) {
        let current = service.metadata.annotations.get(LAST_ERROR_ANNOTATION);
        if current.map(String::as_str) == error {
            return;
        }
        let body = json!({"metadata": {"annotations": {LAST_ERROR_ANNOTATION: error}}});
        match self.kube.patch(&service.path(), MERGE_PATCH, &body).await {
            Err(e) if !e.is_not_found() => {
                tracing::debug!(error = %e, "last error not written")
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_sixty_passes() {
        let passes: Vec<u64> = (1..=9).map(backoff_passes).collect();
        assert_eq!(passes, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff_passes(200), 60);
    }

    #[test]
    fn candidates_are_ready_and_not_excluded() {
        let node = |json: Value| Node::from_json(&json).unwrap();
        let ready = json!({"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert!(lb_candidate(&node(ready.clone())));
        let mut excluded = ready.clone();
        excluded["metadata"]["labels"] =
            json!({"node.kubernetes.io/exclude-from-external-load-balancers": "true"});
        assert!(!lb_candidate(&node(excluded)));
        let mut autoscaled = ready;
        autoscaled["spec"] =
            json!({"taints": [{"key": "ToBeDeletedByClusterAutoscaler", "effect": "NoSchedule"}]});
        assert!(!lb_candidate(&node(autoscaled)));
        assert!(!lb_candidate(&node(json!({"metadata": {"name": "b"}}))));
    }

    #[test]
    fn the_empty_first_ingress_differs_from_the_real_one() {
        let first = json!({"status": {"loadBalancer": {"ingress": [{"ip": ""}]}}});
        assert!(same_ingress(&first, &[json!({"ip": ""})]));
        assert!(!same_ingress(&first, &[json!({"ip": "198.51.100.10"})]));
        let real = json!({"status": {"loadBalancer": {"ingress": [{"ip": "198.51.100.10", "ipMode": "VIP"}]}}});
        assert!(same_ingress(&real, &[json!({"ip": "198.51.100.10"})]));
        assert!(same_ingress(&json!({}), &[]));
    }

    #[test]
    fn cleanup_needs_the_finalizer() {
        let mut service = Service::default();
        service.spec.kind = Some("ClusterIP".into());
        assert!(!needs_cleanup(&service));
        service.metadata.finalizers.push(FINALIZER.into());
        assert!(needs_cleanup(&service));
    }
}
