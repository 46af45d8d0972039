//! The cloud-provider service controller (`controllers/service/controller.go`) around the
//! cloudscale load balancer, as passes over all Services instead of watch events:
//!
//! - Ensure runs when a LoadBalancer Service is new or changed in a field `needsUpdate`
//!   compares (type, ports, annotations, traffic policy, …) since it was last synced;
//! - Update (members only, in effect) runs for every synced Service with the *synced* spec
//!   when the set of (node name, providerID) passing the node predicates changed;
//! - a Service deleted, being deleted, or no longer of type LoadBalancer has its load
//!   balancer deleted and the finalizer removed.
//!
//! So a node *label* change that a Service's node selector uses changes nothing until that
//! Service itself changes, exactly as in the real controller (research §1.4).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::balancer::{lb_candidate, Balancer};
use super::http::{Cloud, Kube};
use super::objects::{Node, Service};
use super::reconcile::{Clock, Outcome};
use super::writeback::{self, ReconcileRecord, FINALIZER, SIM_PREFIX};

/// A Service as last synced: what Update reconciles with, and the fields Ensure compares.
struct Synced {
    service: Service,
    fingerprint: Value,
    /// The last Update failed: retry it next pass even if the node set stays.
    update_pending: bool,
}

pub struct ServiceController {
    kube: Kube,
    cloud: Cloud,
    clock: Clock,
    synced: HashMap<String, Synced>,
    node_set: Option<BTreeSet<(String, String)>>,
    history: Arc<Mutex<Vec<ReconcileRecord>>>,
}

/// `needsUpdate`'s fields; the simulator's own annotations are left out.
pub fn fingerprint(raw: &Value) -> Value {
    let spec = &raw["spec"];
    let annotations: serde_json::Map<String, Value> = raw["metadata"]["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !k.starts_with(SIM_PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json!({
        "uid": raw["metadata"]["uid"],
        "annotations": annotations,
        "type": spec["type"],
        "ports": spec["ports"],
        "loadBalancerSourceRanges": spec["loadBalancerSourceRanges"],
        "sessionAffinity": spec["sessionAffinity"],
        "sessionAffinityConfig": spec["sessionAffinityConfig"],
        "loadBalancerIP": spec["loadBalancerIP"],
        "externalIPs": spec["externalIPs"],
        "externalTrafficPolicy": spec["externalTrafficPolicy"],
        "healthCheckNodePort": spec["healthCheckNodePort"],
        "ipFamilies": spec["ipFamilies"].as_array().map_or(0, Vec::len),
    })
}

/// `needsCleanup` in v0.29: only a Service holding the finalizer is cleaned up.
fn needs_cleanup(service: &Service) -> bool {
    service.metadata.finalizers.iter().any(|f| f == FINALIZER)
        && (service.metadata.deletion_timestamp.is_some() || !service.wants_load_balancer())
}

impl ServiceController {
    pub fn new(
        kube: Kube,
        cloud: Cloud,
        clock: Clock,
        history: Arc<Mutex<Vec<ReconcileRecord>>>,
    ) -> Self {
        ServiceController {
            kube,
            cloud,
            clock,
            synced: HashMap::new(),
            node_set: None,
            history,
        }
    }

    fn balancer(&self) -> Balancer<'_> {
        Balancer {
            kube: &self.kube,
            cloud: &self.cloud,
            clock: self.clock,
        }
    }

    pub async fn pass(&mut self, raw_services: &[Value], nodes: &[Node]) {
        let services: Vec<(Service, &Value)> = raw_services
            .iter()
            .filter_map(|raw| Service::from_json(raw).map(|s| (s, raw)))
            .collect();
        let all: Vec<Service> = services.iter().map(|(s, _)| s.clone()).collect();
        let candidates: Vec<Node> = nodes.iter().filter(|n| lb_candidate(n)).cloned().collect();
        let node_set: BTreeSet<(String, String)> = candidates
            .iter()
            .map(|n| {
                (
                    n.metadata.name.clone(),
                    n.provider_id().unwrap_or("").to_owned(),
                )
            })
            .collect();
        // The first pass has nothing synced yet: there is nothing to update either.
        let nodes_changed = self.node_set.as_ref().is_some_and(|last| *last != node_set);
        let mut seen = HashSet::new();
        for (service, raw) in &services {
            seen.insert(service.key());
            if needs_cleanup(service) {
                self.delete(service, &all, true).await;
            } else if service.wants_load_balancer() {
                self.sync(service, raw, &all, &candidates, nodes_changed)
                    .await;
            } else if self.synced.contains_key(&service.key()) {
                // Synced before, no longer a LoadBalancer, and someone removed our
                // finalizer: the load balancer still goes, as `!wantsLoadBalancer` says.
                self.delete(service, &all, false).await;
            }
        }
        let gone: Vec<String> = self
            .synced
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for key in gone {
            if let Some(synced) = self.synced.get(&key) {
                let service = synced.service.clone();
                self.delete(&service, &all, false).await;
            }
        }
        self.node_set = Some(node_set);
    }

    async fn sync(
        &mut self,
        service: &Service,
        raw: &Value,
        all: &[Service],
        nodes: &[Node],
        nodes_changed: bool,
    ) {
        let key = service.key();
        let print = fingerprint(raw);
        match self.synced.get(&key) {
            Some(synced) if synced.fingerprint == print => {
                if nodes_changed || synced.update_pending {
                    let synced_service = synced.service.clone();
                    self.update(&synced_service, all, nodes).await;
                }
            }
            _ => self.ensure(service, raw, all, nodes).await,
        }
    }

    async fn ensure(&mut self, service: &Service, raw: &Value, all: &[Service], nodes: &[Node]) {
        let mut outcome = Outcome::default();
        let result = async {
            writeback::set_finalizer(&self.kube, service, true)
                .await
                .map_err(|e| format!("adding the finalizer: {e}"))?;
            let ensured = self
                .balancer()
                .ensure(service, all, nodes, &mut outcome)
                .await?;
            let wanted: Vec<(&str, &str)> = ensured
                .annotations
                .iter()
                .map(|(k, v)| (*k, v.as_str()))
                .collect();
            writeback::annotate(&self.kube, service, raw, &wanted)
                .await
                .map_err(|e| {
                    format!("unable to annotate service {}: {e}", service.metadata.name)
                })?;
            writeback::set_ingress(&self.kube, service, raw, &ensured.ingress)
                .await
                .map_err(|e| format!("patching the status: {e}"))?;
            Ok::<_, String>(ensured)
        }
        .await;
        if let Ok(ensured) = &result {
            // Synced as it is after our own annotations, so they do not count as a change.
            let mut after = raw.clone();
            for (key, value) in &ensured.annotations {
                if !after["metadata"]["annotations"].is_object() {
                    after["metadata"]["annotations"] = json!({});
                }
                after["metadata"]["annotations"][*key] = json!(value);
            }
            let synced_service = Service::from_json(&after).unwrap_or_else(|| service.clone());
            self.synced.insert(
                service.key(),
                Synced {
                    service: synced_service,
                    fingerprint: fingerprint(&after),
                    update_pending: false,
                },
            );
        }
        self.record(service, "ensure", outcome, result.err()).await;
    }

    async fn update(&mut self, service: &Service, all: &[Service], nodes: &[Node]) {
        let mut outcome = Outcome::default();
        let result = self
            .balancer()
            .update(service, all, nodes, &mut outcome)
            .await;
        if let Some(synced) = self.synced.get_mut(&service.key()) {
            synced.update_pending = result.is_err();
        }
        self.record(service, "update", outcome, result.err()).await;
    }

    /// EnsureLoadBalancerDeleted, then the finalizer goes; on failure both stay, retried.
    async fn delete(&mut self, service: &Service, all: &[Service], exists: bool) {
        let mut outcome = Outcome::default();
        let mut result = self.balancer().delete(service, all, &mut outcome).await;
        if result.is_ok() && exists {
            result = writeback::set_finalizer(&self.kube, service, false)
                .await
                .map_err(|e| format!("removing the finalizer: {e}"));
        }
        if result.is_ok() {
            self.synced.remove(&service.key());
        }
        self.record(service, "delete", outcome, result.err()).await;
    }

    async fn record(
        &self,
        service: &Service,
        trigger: &str,
        outcome: Outcome,
        error: Option<String>,
    ) {
        let record = ReconcileRecord {
            service: service.key(),
            trigger: trigger.into(),
            actions: outcome.actions,
            warnings: outcome.warnings,
            error,
        };
        if let Err(e) = writeback::write_record(&self.kube, service, &record).await {
            tracing::debug!(service = %record.service, error = %e, "reconcile record not written");
        }
        let mut history = self.history.lock().expect("history lock");
        // A failure retried every pass is one entry, not one per pass.
        if record.error.is_none() || history.last() != Some(&record) {
            history.push(record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_status_selector_and_the_simulators_record() {
        let a = json!({"metadata": {"uid": "u", "annotations": {"x": "1"}}, "spec": {"type": "LoadBalancer", "selector": {"a": "b"}}});
        let mut b = a.clone();
        b["spec"]["selector"] = json!({"a": "c"});
        b["status"] = json!({"loadBalancer": {}});
        b["metadata"]["annotations"][writeback::RECORD_ANNOTATION] = json!("{}");
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let mut c = a.clone();
        c["metadata"]["annotations"]["x"] = json!("2");
        assert_ne!(fingerprint(&a), fingerprint(&c));
        let mut d = a.clone();
        d["spec"]["externalTrafficPolicy"] = json!("Local");
        assert_ne!(fingerprint(&a), fingerprint(&d));
    }

    #[test]
    fn cleanup_needs_our_finalizer() {
        let mut service = Service::default();
        service.spec.kind = Some("ClusterIP".into());
        assert!(!needs_cleanup(&service));
        service.metadata.finalizers.push(FINALIZER.into());
        assert!(needs_cleanup(&service));
        service.spec.kind = Some("LoadBalancer".into());
        assert!(!needs_cleanup(&service));
        service.metadata.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
        assert!(needs_cleanup(&service));
    }
}
