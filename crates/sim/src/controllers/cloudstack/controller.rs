//! The service controller of cloud-provider v0.24 (the CCM's pin) around the CloudStack load
//! balancer, as passes over all Services instead of watch events:
//! - Ensure when a LoadBalancer Service is new, changed in a field `needsUpdate` compares, or
//!   its last Ensure failed (the real controller requeues a failed sync with backoff; here the
//!   next pass retries it, so an error that never clears is retried every pass);
//! - Update for every synced Service when the set of nodes passing the predicates changed;
//! - delete when the Service is gone, being deleted or no longer a LoadBalancer, then the
//!   finalizer goes.
//!
//! What each reconcile did goes to `ControllersHandle::history` and, when it changed
//! something or failed anew, to the Service as the shared [`ReconcileRecord`] annotation (which so
//! keeps the last change); its error, if any, to [`LAST_ERROR_ANNOTATION`].

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::super::http::{Kube, MERGE_PATCH};
use super::super::objects::{Node, Service};
use super::super::services::fingerprint;
use super::super::writeback::{self, ReconcileRecord, FINALIZER};
use super::reconcile::{self, Cloud};
use super::spec::{CsService, IP_ASSOCIATED};

/// Not the real CCM's: the error of the Service's last failed reconcile (the text of the
/// `SyncLoadBalancerFailed` event), removed when a reconcile succeeds.
pub const LAST_ERROR_ANNOTATION: &str = "sim.skyplan.dev/last-error";

struct Synced {
    raw: Value,
    fingerprint: Value,
    update_pending: bool,
}

pub struct ServiceController {
    kube: Kube,
    synced: HashMap<String, Synced>,
    node_set: Option<BTreeSet<String>>,
    failures: HashMap<String, u32>,
    history: Arc<Mutex<Vec<ReconcileRecord>>>,
}

/// cloud-provider v0.24 `getNodePredicate`: Ready, no exclude-from-external-load-balancers
/// label, no cluster-autoscaler deletion taint.
pub fn lb_candidate(node: &Node) -> bool {
    node.is_ready()
        && node.metadata.deletion_timestamp.is_none()
        && !node
            .metadata
            .labels
            .contains_key("node.kubernetes.io/exclude-from-external-load-balancers")
        && !node.has_taint("ToBeDeletedByClusterAutoscaler")
}

/// `LoadBalancerStatusEqual` of v0.24: ip and hostname only. Its types have no `ipMode`, so
/// the one the apiserver defaults is not a difference.
fn same_ingress(raw: &Value, wanted: &[Value]) -> bool {
    let key = |i: &Value| (i["ip"].clone(), i["hostname"].clone());
    let current: Vec<_> = raw["status"]["loadBalancer"]["ingress"]
        .as_array()
        .map(|list| list.iter().map(key).collect())
        .unwrap_or_default();
    current == wanted.iter().map(key).collect::<Vec<_>>()
}

fn needs_cleanup(service: &CsService) -> bool {
    service.metadata.finalizers.iter().any(|f| f == FINALIZER)
        && (service.metadata.deletion_timestamp.is_some() || !service.wants_load_balancer())
}

impl ServiceController {
    pub fn new(kube: Kube, history: Arc<Mutex<Vec<ReconcileRecord>>>) -> Self {
        ServiceController {
            kube,
            synced: HashMap::new(),
            node_set: None,
            failures: HashMap::new(),
            history,
        }
    }

    /// Consecutive failed reconciles of `namespace/name`.
    #[cfg(test)]
    pub fn failures(&self, key: &str) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    /// Anything to reconcile: a LoadBalancer Service, one holding the finalizer, or one
    /// synced before (it may be gone now).
    pub fn has_work(&self, raw_services: &[Value]) -> bool {
        !self.synced.is_empty()
            || raw_services
                .iter()
                .filter_map(CsService::from_json)
                .any(|s| s.wants_load_balancer() || needs_cleanup(&s))
    }

    pub async fn pass(&mut self, cloud: Cloud<'_>, raw_services: &[Value], nodes: &[Node]) {
        let node_names: BTreeSet<String> = nodes
            .iter()
            .filter(|n| lb_candidate(n))
            .map(|n| n.metadata.name.clone())
            .collect();
        let nodes_changed = self.node_set.as_ref().is_some_and(|l| *l != node_names);
        let names: Vec<String> = node_names.iter().cloned().collect();
        let mut seen = BTreeSet::new();
        for raw in raw_services {
            let Some(service) = CsService::from_json(raw) else {
                continue;
            };
            seen.insert(service.key());
            if needs_cleanup(&service) {
                self.delete(cloud, &service, raw, true).await;
            } else if service.wants_load_balancer() {
                self.sync(cloud, &service, raw, &names, nodes_changed).await;
            } else if self.synced.contains_key(&service.key()) {
                self.delete(cloud, &service, raw, false).await;
            }
        }
        let gone: Vec<(String, Value)> = self
            .synced
            .iter()
            .filter(|(k, _)| !seen.contains(*k))
            .map(|(k, s)| (k.clone(), s.raw.clone()))
            .collect();
        for (_, raw) in gone {
            if let Some(service) = CsService::from_json(&raw) {
                self.delete(cloud, &service, &raw, false).await;
            }
        }
        self.node_set = Some(node_names);
    }

    async fn sync(
        &mut self,
        cloud: Cloud<'_>,
        service: &CsService,
        raw: &Value,
        nodes: &[String],
        nodes_changed: bool,
    ) {
        match self.synced.get(&service.key()) {
            Some(synced) if synced.fingerprint == fingerprint(raw) => {
                if nodes_changed || synced.update_pending {
                    let synced = CsService::from_json(&synced.raw).unwrap_or_default();
                    self.update(cloud, &synced, nodes).await;
                }
            }
            _ => self.ensure(cloud, service, raw, nodes).await,
        }
    }

    async fn ensure(
        &mut self,
        cloud: Cloud<'_>,
        service: &CsService,
        raw: &Value,
        nodes: &[String],
    ) {
        let generic = Service::from_json(raw).unwrap_or_default();
        let mut actions = Vec::new();
        let result = async {
            writeback::set_finalizer(&self.kube, &generic, true)
                .await
                .map_err(|e| format!("adding the finalizer: {e}"))?;
            let (log, ensured) = reconcile::ensure(cloud, service, nodes).await;
            actions = log;
            let ensured = ensured?;
            if ensured.ip_associated && !service.bool_annotation(IP_ASSOCIATED, false) {
                // `patchServiceAnnotation`; a failure is only logged by the CCM.
                let body = json!({"metadata": {"annotations": {IP_ASSOCIATED: "true"}}});
                if let Err(e) = self.kube.patch(&service.path(), MERGE_PATCH, &body).await {
                    tracing::debug!(error = %e, "ip-associated annotation not written");
                }
            }
            if !same_ingress(raw, &ensured.ingress) {
                writeback::set_ingress(&self.kube, &generic, raw, &ensured.ingress)
                    .await
                    .map_err(|e| format!("patching the status: {e}"))?;
            }
            Ok::<_, String>(ensured)
        }
        .await;
        if let Ok(ensured) = &result {
            let mut after = raw.clone();
            if ensured.ip_associated {
                if !after["metadata"]["annotations"].is_object() {
                    after["metadata"]["annotations"] = json!({});
                }
                after["metadata"]["annotations"][IP_ASSOCIATED] = json!("true");
            }
            self.synced.insert(
                service.key(),
                Synced {
                    fingerprint: fingerprint(&after),
                    raw: after,
                    update_pending: false,
                },
            );
        }
        self.record(service, "ensure", actions, result.err()).await;
    }

    async fn update(&mut self, cloud: Cloud<'_>, service: &CsService, nodes: &[String]) {
        let (actions, result) = reconcile::update(cloud, service, nodes).await;
        if let Some(synced) = self.synced.get_mut(&service.key()) {
            synced.update_pending = result.is_err();
        }
        self.record(service, "update", actions, result.err()).await;
    }

    async fn delete(&mut self, cloud: Cloud<'_>, service: &CsService, raw: &Value, exists: bool) {
        let (actions, mut result) = reconcile::delete(cloud, service).await;
        if result.is_ok() && exists {
            let generic = Service::from_json(raw).unwrap_or_default();
            result = writeback::set_finalizer(&self.kube, &generic, false)
                .await
                .map_err(|e| format!("removing the finalizer: {e}"));
        }
        if result.is_ok() {
            self.synced.remove(&service.key());
        }
        self.record(service, "delete", actions, result.err()).await;
    }

    async fn record(
        &mut self,
        service: &CsService,
        trigger: &str,
        actions: Vec<String>,
        error: Option<String>,
    ) {
        let key = service.key();
        match &error {
            Some(_) => *self.failures.entry(key.clone()).or_default() += 1,
            None => {
                self.failures.remove(&key);
            }
        }
        let record = ReconcileRecord {
            service: key,
            trigger: trigger.into(),
            actions,
            warnings: Vec::new(),
            error,
        };
        let generic = Service {
            metadata: super::super::objects::Meta {
                name: service.metadata.name.clone(),
                namespace: service.metadata.namespace.clone(),
                ..Default::default()
            },
            ..Default::default()
        };
        if let Err(e) = writeback::write_record(&self.kube, &generic, &record).await {
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

    /// Sets or clears the last-error annotation, only when it differs from what was read.
    async fn write_last_error(&self, service: &CsService, error: Option<&str>) {
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
    fn only_ready_nodes_without_exclusions_are_candidates() {
        let node = |json: Value| Node::from_json(&json).unwrap();
        let ready = json!({"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert!(lb_candidate(&node(ready.clone())));
        let mut excluded = ready.clone();
        excluded["metadata"]["labels"] =
            json!({"node.kubernetes.io/exclude-from-external-load-balancers": ""});
        assert!(!lb_candidate(&node(excluded)));
        let not_ready = json!({"metadata": {"name": "a"}});
        assert!(!lb_candidate(&node(not_ready)));
    }

    #[test]
    fn ingress_compares_ip_and_hostname_only() {
        let raw =
            json!({"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ipMode": "VIP"}]}}});
        assert!(same_ingress(&raw, &[json!({"ip": "1.2.3.4"})]));
        assert!(!same_ingress(&raw, &[json!({"ip": "1.2.3.5"})]));
        assert!(!same_ingress(&json!({}), &[json!({"ip": "1.2.3.4"})]));
    }

    #[test]
    fn cleanup_needs_the_finalizer() {
        let mut service = CsService::default();
        service.spec.kind = Some("ClusterIP".into());
        assert!(!needs_cleanup(&service));
        service.metadata.finalizers.push(FINALIZER.into());
        assert!(needs_cleanup(&service));
    }
}
