//! What the controllers write on a Service: the finalizer (service controller), the CCM's
//! annotations (JSON patch, `kubeutil.AnnotateService`), `status.loadBalancer` (strategic
//! merge patch on the status subresource) and this simulator's own reconcile log.

use serde::Serialize;
use serde_json::{json, Value};

use super::http::{CallResult, Kube, JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH};
use super::objects::Service;

pub const FINALIZER: &str = "service.kubernetes.io/load-balancer-cleanup";
/// Not the real CCM's: where the simulated one records what its last reconcile of the Service
/// did, as JSON ([`ReconcileRecord`]), for tests and for skyplan to compare with its prediction.
pub const RECORD_ANNOTATION: &str = "sim.skyplan.dev/last-reconcile";
/// Annotations under this prefix are the simulator's own and never trigger a reconcile.
pub const SIM_PREFIX: &str = "sim.skyplan.dev/";

/// One Ensure, Update or delete of a Service's load balancer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReconcileRecord {
    /// `namespace/name`.
    pub service: String,
    /// `ensure` (the Service changed), `update` (the node set changed) or `delete`.
    pub trigger: String,
    /// The cloud calls, in order: `create pool tcp/http`, `delete member 10.0.0.5:30080 of
    /// pool tcp`, `update listener tcp/80 allowed_cidrs`, `assign floating ip …`.
    pub actions: Vec<String>,
    /// Events the CCM would send besides (`NoValidNodes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why the reconcile stopped (`SyncLoadBalancerFailed`); it is retried next pass.
    pub error: Option<String>,
}

/// `~` and `/` escaped for a JSON pointer.
fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The JSON patch of `AnnotateService`: `add` ops for the keys whose value differs, after an
/// `add /metadata/annotations {}` when the Service has none. `None` when nothing differs.
pub fn annotate_patch(raw: &Value, wanted: &[(&str, &str)]) -> Option<Value> {
    let current = &raw["metadata"]["annotations"];
    let mut ops = Vec::new();
    if !current.is_object() {
        ops.push(json!({"op": "add", "path": "/metadata/annotations", "value": {}}));
    }
    for (key, value) in wanted {
        if current[*key].as_str() != Some(*value) {
            ops.push(json!({
                "op": "add",
                "path": format!("/metadata/annotations/{}", pointer_escape(key)),
                "value": value,
            }));
        }
    }
    let changes = ops.iter().any(|op| op["path"] != "/metadata/annotations");
    changes.then_some(Value::Array(ops))
}

pub async fn annotate(
    kube: &Kube,
    service: &Service,
    raw: &Value,
    wanted: &[(&str, &str)],
) -> CallResult<()> {
    match annotate_patch(raw, wanted) {
        Some(patch) => kube
            .patch(&service.path(), JSON_PATCH, &patch)
            .await
            .map(|_| ()),
        None => Ok(()),
    }
}

/// `status.loadBalancer.ingress`, written only when it differs (the service controller
/// compares old and new status before patching).
pub async fn set_ingress(
    kube: &Kube,
    service: &Service,
    raw: &Value,
    ingress: &[Value],
) -> CallResult<()> {
    if raw["status"]["loadBalancer"]["ingress"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
        == ingress
    {
        return Ok(());
    }
    let body = json!({"status": {"loadBalancer": {"ingress": ingress}}});
    kube.patch(
        &format!("{}/status", service.path()),
        STRATEGIC_PATCH,
        &body,
    )
    .await
    .map(|_| ())
}

/// Adds or removes the cleanup finalizer: the whole list with the resourceVersion read, so a
/// concurrent change is a conflict, retried on a fresh read. A Service that is gone needs
/// nothing.
pub async fn set_finalizer(kube: &Kube, service: &Service, wanted: bool) -> CallResult<()> {
    for _ in 0..5 {
        let raw = match kube.get(&service.path()).await {
            Ok(raw) => raw,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e),
        };
        let current = Service::from_json(&raw).unwrap_or_default();
        let mut finalizers = current.metadata.finalizers.clone();
        if finalizers.iter().any(|f| f == FINALIZER) == wanted {
            return Ok(());
        }
        finalizers.retain(|f| f != FINALIZER);
        if wanted {
            finalizers.push(FINALIZER.into());
        }
        let body = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": current.metadata.resource_version,
        }});
        match kube.patch(&service.path(), MERGE_PATCH, &body).await {
            Err(e) if e.is_conflict() => continue,
            Err(e) if e.is_not_found() => return Ok(()),
            other => return other.map(|_| ()),
        }
    }
    Ok(())
}

/// Whether `new` replaces the record the Service carries. A reconcile that called the cloud
/// always does; a failure does when it is news; a quiet success only to clear an error. So a
/// failure retried every pass writes once, and the no-op Ensure that follows every restart of
/// the controllers keeps the record of the reconcile that last changed something.
pub fn should_write(stored: Option<&ReconcileRecord>, new: &ReconcileRecord) -> bool {
    if !new.actions.is_empty() {
        return true;
    }
    match (&new.error, stored) {
        (Some(_), Some(stored)) => stored != new,
        (Some(_), None) => true,
        (None, stored) => stored.is_some_and(|s| s.error.is_some()),
    }
}

pub async fn write_record(
    kube: &Kube,
    service: &Service,
    record: &ReconcileRecord,
) -> CallResult<()> {
    let raw = match kube.get(&service.path()).await {
        Ok(raw) => raw,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e),
    };
    let stored: Option<ReconcileRecord> = raw["metadata"]["annotations"][RECORD_ANNOTATION]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok());
    if !should_write(stored.as_ref(), record) {
        return Ok(());
    }
    let text = serde_json::to_string(record).expect("a record serializes");
    let body = json!({"metadata": {"annotations": {RECORD_ANNOTATION: text}}});
    match kube.patch(&service.path(), MERGE_PATCH, &body).await {
        Err(e) if e.is_not_found() => Ok(()),
        other => other.map(|_| ()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_differing_annotations_are_added_with_escaped_paths() {
        let raw = json!({"metadata": {"annotations": {"k8s.cloudscale.ch/loadbalancer-config-version": "1"}}});
        let patch = annotate_patch(
            &raw,
            &[
                ("k8s.cloudscale.ch/loadbalancer-uuid", "u"),
                ("k8s.cloudscale.ch/loadbalancer-config-version", "1"),
            ],
        )
        .unwrap();
        assert_eq!(
            patch,
            json!([{"op": "add", "path": "/metadata/annotations/k8s.cloudscale.ch~1loadbalancer-uuid", "value": "u"}])
        );
        assert_eq!(
            annotate_patch(
                &raw,
                &[("k8s.cloudscale.ch/loadbalancer-config-version", "1")]
            ),
            None
        );
    }

    fn record(actions: &[&str], error: Option<&str>) -> ReconcileRecord {
        ReconcileRecord {
            service: "default/web".into(),
            trigger: "ensure".into(),
            actions: actions.iter().map(|a| a.to_string()).collect(),
            warnings: vec![],
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn records_are_written_when_they_are_news() {
        let did = record(&["create pool tcp"], None);
        let quiet = record(&[], None);
        let failed = record(&[], Some("flavor changed"));
        assert!(should_write(Some(&did), &did), "every change is written");
        assert!(
            !should_write(Some(&did), &quiet),
            "a no-op keeps the last change"
        );
        assert!(!should_write(None, &quiet));
        assert!(should_write(Some(&did), &failed));
        assert!(
            !should_write(Some(&failed), &failed),
            "a retried failure writes once"
        );
        assert!(
            should_write(Some(&failed), &quiet),
            "success clears the error"
        );
    }

    #[test]
    fn a_service_without_annotations_gets_the_map_first() {
        let patch = annotate_patch(&json!({"metadata": {}}), &[("a/b", "c")]).unwrap();
        assert_eq!(
            patch[0],
            json!({"op": "add", "path": "/metadata/annotations", "value": {}})
        );
        assert_eq!(patch[1]["path"], "/metadata/annotations/a~1b");
    }
}
