//! Writing a Service in controller mode, for every cloud: a create, or a merge patch carrying
//! the resourceVersion read at refresh. A concurrent write is a 409; it is retried on a fresh
//! read only when what skyplan manages is unchanged (the controller wrote its own annotations,
//! status or finalizer), never a blind overwrite.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use super::conflict::Backoff;
use super::connection::ClusterConnection;
use skyplan_core::model::Address;
use skyplan_core::provider::ProviderError;
use skyplan_core::state::journal::{Journal, Phase, LEFT_KEY};
use skyplan_core::state::ResourceState;

pub use super::FIELD_MANAGER;

/// One controller-mode Service write, as a step of apply.
pub struct ServiceWrite<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub body: &'a serde_json::Value,
    /// `None`: the Service does not exist and is created.
    pub resource_version: Option<&'a str>,
    /// The Service as refresh read it.
    pub planned: Option<&'a Service>,
    pub managed: &'a ManagedAnnotations,
    /// The state entry the written Service makes of its resource, kept in the journal's intent
    /// of the write: a run killed during the write or the wait for the controller after it
    /// still records it.
    pub leaves: Option<&'a ResourceState>,
}

/// The annotation naming the resource of skyplan's config a Kubernetes object belongs to:
/// whoever finds the object (an operator, a later plan) knows whose it is.
pub const OWNER_ANNOTATION: &str = "skyplan.address";

/// `body` marked as `address`'s, unless it sets the annotation itself (a release clears it).
fn owned(body: &serde_json::Value, address: &Address) -> serde_json::Value {
    let mut body = body.clone();
    let annotations = &mut body["metadata"]["annotations"];
    if annotations.get(OWNER_ANNOTATION).is_none() {
        annotations[OWNER_ANNOTATION] = json!(address.to_string());
    }
    body
}

/// [`write_service`] recorded in the journal before and after the call, as every mutating call
/// of an apply is; `text` is the plan's operation.
pub async fn write_service_journaled(
    connection: &ClusterConnection,
    journal: &Journal,
    address: &Address,
    text: &str,
    write: ServiceWrite<'_>,
) -> Result<Service, ProviderError> {
    let journal_error = |e: skyplan_core::state::StateError| ProviderError::new(address, e);
    let leaves = write.leaves.map(|l| json!({ LEFT_KEY: l }));
    journal
        .record(address, Phase::Intent, text, leaves, None)
        .map_err(journal_error)?;
    let body = owned(write.body, address);
    let written = write_service(
        connection,
        write.namespace,
        write.name,
        &body,
        write.resource_version,
        write.planned,
        write.managed,
    )
    .await;
    journal.checkpoint("call");
    let (phase, failure) = match &written {
        Ok(_) => (Phase::Done, None),
        Err(e) => (Phase::Failed, Some(e.clone())),
    };
    journal
        .record(address, phase, text, None, failure)
        .map_err(journal_error)?;
    written.map_err(|e| ProviderError::new(address, e))
}

/// Creates the Service, or merge-patches it with the resourceVersion read at refresh. A 409
/// means someone wrote the Service since: when what skyplan manages (`planned`, the Service as
/// refreshed) is unchanged — the controller wrote its own annotations, status or finalizer —
/// the patch is sent again with the fresh resourceVersion, after a backoff (a busy writer
/// delays skyplan, it does not fail it); otherwise the prediction is stale and the user must
/// plan again. Never a blind overwrite.
pub async fn write_service(
    connection: &ClusterConnection,
    namespace: &str,
    name: &str,
    body: &serde_json::Value,
    resource_version: Option<&str>,
    planned: Option<&Service>,
    managed: &ManagedAnnotations,
) -> Result<Service, String> {
    let api: kube::Api<Service> = kube::Api::namespaced(connection.client(), namespace);
    let Some(mut version) = resource_version.map(str::to_owned) else {
        return create_service(connection, namespace, name, body).await;
    };
    let mut backoff = Backoff::default();
    loop {
        match patch_service(&api, name, body, &version).await {
            Err(kube::Error::Api(status)) if status.is_conflict() => {
                backoff.conflicted().await.map_err(|exhausted| {
                    format!("writing Service {namespace}/{name}: another writer kept changing it ({exhausted})")
                })?;
                let fresh = api.get_opt(name).await.map_err(|e| {
                    format!(
                        "reading Service {namespace}/{name}: {}",
                        connection.describe(&e)
                    )
                })?;
                let project = |s: &Service| managed_fields(s, managed);
                let changed = changed_fields(
                    &fresh.as_ref().map(project).unwrap_or_default(),
                    &planned.map(project).unwrap_or_default(),
                );
                match (fresh, changed.is_empty()) {
                    (Some(fresh), true) => {
                        version = fresh.metadata.resource_version.unwrap_or_default();
                    }
                    (None, _) => return Err(format!("Service {namespace}/{name} was deleted since the plan was made; plan again")),
                    (Some(_), false) => {
                        return Err(format!("{} ({})", stale(namespace, name), changed.join(", ")))
                    }
                }
            }
            result => {
                return result.map_err(|e| {
                    format!(
                        "writing Service {namespace}/{name}: {}",
                        connection.describe(&e)
                    )
                })
            }
        }
    }
}

/// The fields of two [`managed_fields`] projections that differ (for the refusal's message).
fn changed_fields(now: &serde_json::Value, then: &serde_json::Value) -> Vec<String> {
    let keys = now.as_object().into_iter().flatten().map(|(k, _)| k);
    let keys = keys.chain(then.as_object().into_iter().flatten().map(|(k, _)| k));
    let mut changed: Vec<String> = keys
        .filter(|k| now.get(k.as_str()) != then.get(k.as_str()))
        .cloned()
        .collect();
    changed.sort();
    changed.dedup();
    changed
}

fn stale(namespace: &str, name: &str) -> String {
    format!("Service {namespace}/{name} changed since the plan was made (409); plan again")
}

async fn create_service(
    connection: &ClusterConnection,
    namespace: &str,
    name: &str,
    body: &serde_json::Value,
) -> Result<Service, String> {
    let service: Service = serde_json::from_value(body.clone()).map_err(|e| e.to_string())?;
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    let api: kube::Api<Service> = kube::Api::namespaced(connection.client(), namespace);
    api.create(&params, &service).await.map_err(|e| match &e {
        kube::Error::Api(status) if status.is_already_exists() => stale(namespace, name),
        _ => format!(
            "creating Service {namespace}/{name}: {}",
            connection.describe(&e)
        ),
    })
}

async fn patch_service(
    api: &kube::Api<Service>,
    name: &str,
    body: &serde_json::Value,
    version: &str,
) -> Result<Service, kube::Error> {
    let mut body = body.clone();
    body["metadata"]["resourceVersion"] = json!(version);
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    api.patch(name, &params, &Patch::Merge(&body)).await
}

/// The annotations a cloud's controller reads (`prefix`) and, among them, those it writes
/// itself (`controller_owned`: skyplan never writes them, and a change to them is not a
/// change to what skyplan manages).
pub struct ManagedAnnotations {
    pub prefix: &'static str,
    pub controller_owned: &'static [&'static str],
}

/// The parts of a Service skyplan writes and predicts from: type, ports, traffic policy,
/// session affinity, source ranges, the requested IP, and the controller's annotations other
/// than those it writes itself.
fn managed_fields(service: &Service, managed: &ManagedAnnotations) -> serde_json::Value {
    let spec = service.spec.as_ref();
    let ports: Vec<_> = spec
        .and_then(|s| s.ports.as_ref())
        .into_iter()
        .flatten()
        .map(|p| json!([p.name, p.protocol, p.port, p.target_port]))
        .collect();
    let annotations: BTreeMap<_, _> = service
        .metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(key, _)| {
            key.starts_with(managed.prefix) && !managed.controller_owned.contains(&key.as_str())
        })
        .collect();
    json!({
        "type": spec.and_then(|s| s.type_.clone()),
        "ports": ports,
        "traffic_policy": spec.and_then(|s| s.external_traffic_policy.clone()),
        "session_affinity": spec.and_then(|s| s.session_affinity.clone()),
        "source_ranges": spec.and_then(|s| s.load_balancer_source_ranges.clone()),
        "load_balancer_ip": spec.and_then(|s| s.load_balancer_ip.clone()),
        "annotations": annotations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Request, Response};
    use kube::client::Body;
    use skyplan_core::model::{Address, ResourceKind};

    type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

    const MANAGED: ManagedAnnotations = ManagedAnnotations {
        prefix: "k8s.cloudscale.ch/loadbalancer-",
        controller_owned: &["k8s.cloudscale.ch/loadbalancer-uuid"],
    };

    fn connection() -> (ClusterConnection, Handle) {
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let address = Address::new(ResourceKind::Cluster, "prod");
        (ClusterConnection::new(address, client), handle)
    }

    fn service_json() -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "shop", "namespace": "default", "resourceVersion": "8"}})
    }

    #[test]
    fn a_refusal_names_the_managed_fields_that_changed() {
        let then = json!({"type": "LoadBalancer", "ports": [["http", "TCP", 80, 8080]], "annotations": {}});
        let now = json!({"type": "LoadBalancer", "ports": [["web", "TCP", 80, 8080]], "annotations": {"a": "1"}});
        assert_eq!(changed_fields(&now, &then), ["annotations", "ports"]);
        assert!(changed_fields(&then, &then).is_empty());
    }

    #[test]
    fn every_write_is_marked_as_the_resource_s_unless_it_says_otherwise() {
        let address = Address::new(ResourceKind::LoadBalancer, "shop");
        let marked = owned(&json!({"spec": {"type": "LoadBalancer"}}), &address);
        assert_eq!(
            marked["metadata"]["annotations"][OWNER_ANNOTATION],
            "load-balancer.shop"
        );
        assert_eq!(marked["spec"]["type"], "LoadBalancer");
        let theirs = json!({"metadata": {"annotations": {"a": "1"}}});
        assert_eq!(
            owned(&theirs, &address)["metadata"]["annotations"]["a"],
            "1"
        );
        // A release clears the mark: an explicit null is kept.
        let released = json!({"metadata": {"annotations": {OWNER_ANNOTATION: null}}});
        assert_eq!(owned(&released, &address), released);
    }

    #[tokio::test]
    async fn a_patch_carries_the_resource_version_read_at_refresh_and_skyplans_field_manager() {
        let (connection, mut handle) = connection();
        let server = tokio::spawn(async move {
            let (request, send) = handle.next_request().await.expect("a request");
            assert_eq!(request.method(), http::Method::PATCH);
            assert_eq!(
                request.uri().path(),
                "/api/v1/namespaces/default/services/shop"
            );
            assert!(request
                .uri()
                .query()
                .unwrap()
                .contains("fieldManager=skyplan"));
            assert_eq!(
                request.headers()["content-type"],
                "application/merge-patch+json"
            );
            let body = request.into_body().collect_bytes().await.unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(body["metadata"]["resourceVersion"], "7");
            assert_eq!(body["spec"]["type"], "LoadBalancer");
            let answer = serde_json::to_vec(&service_json()).unwrap();
            send.send_response(Response::builder().body(Body::from(answer)).unwrap());
        });
        let body = json!({"metadata": {"annotations": {}}, "spec": {"type": "LoadBalancer"}});
        write_service(
            &connection,
            "default",
            "shop",
            &body,
            Some("7"),
            None,
            &MANAGED,
        )
        .await
        .unwrap();
        server.await.unwrap();
    }

    fn conflict() -> Response<Body> {
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Operation cannot be fulfilled on services \"shop\": the object has been modified",
            "reason": "Conflict", "code": 409});
        Response::builder()
            .status(409)
            .body(Body::from(serde_json::to_vec(&status).unwrap()))
            .unwrap()
    }

    fn service_with(version: &str, flavor: &str) -> serde_json::Value {
        let mut service = service_json();
        service["metadata"]["resourceVersion"] = json!(version);
        service["metadata"]["annotations"] = json!({
            "k8s.cloudscale.ch/loadbalancer-flavor": flavor,
            "k8s.cloudscale.ch/loadbalancer-uuid": format!("uuid-{version}"),
        });
        service
    }

    fn ok(body: &serde_json::Value) -> Response<Body> {
        Response::builder()
            .body(Body::from(serde_json::to_vec(body).unwrap()))
            .unwrap()
    }

    async fn body_of(request: Request<Body>) -> serde_json::Value {
        let body = request.into_body().collect_bytes().await.unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    #[tokio::test]
    async fn a_conflict_from_someone_changing_managed_fields_is_reported_never_overwritten() {
        let (connection, mut handle) = connection();
        let server = tokio::spawn(async move {
            let (_, send) = handle.next_request().await.expect("the patch");
            send.send_response(conflict());
            let (request, send) = handle.next_request().await.expect("a fresh read");
            assert_eq!(request.method(), http::Method::GET);
            send.send_response(ok(&service_with("9", "lb-large")));
            assert!(handle.next_request().await.is_none(), "no second patch");
        });
        let planned: Service = serde_json::from_value(service_with("7", "lb-standard")).unwrap();
        let body = json!({"spec": {"type": "LoadBalancer"}});
        let error = write_service(
            &connection,
            "default",
            "shop",
            &body,
            Some("7"),
            Some(&planned),
            &MANAGED,
        )
        .await
        .unwrap_err();
        assert!(error.contains("changed since the plan"), "{error}");
        drop(connection);
        server.await.unwrap();
    }

    #[tokio::test]
    async fn a_conflict_from_the_controllers_own_fields_is_retried_with_the_fresh_version() {
        let (connection, mut handle) = connection();
        let server = tokio::spawn(async move {
            let (_, send) = handle.next_request().await.expect("the patch");
            send.send_response(conflict());
            let (_, send) = handle.next_request().await.expect("a fresh read");
            // The CCM wrote its uuid annotation: nothing skyplan manages changed.
            send.send_response(ok(&service_with("9", "lb-standard")));
            let (request, send) = handle.next_request().await.expect("the patch again");
            assert_eq!(body_of(request).await["metadata"]["resourceVersion"], "9");
            send.send_response(ok(&service_with("10", "lb-standard")));
        });
        let planned: Service = serde_json::from_value(service_with("7", "lb-standard")).unwrap();
        let body = json!({"spec": {"type": "LoadBalancer"}});
        write_service(
            &connection,
            "default",
            "shop",
            &body,
            Some("7"),
            Some(&planned),
            &MANAGED,
        )
        .await
        .unwrap();
        server.await.unwrap();
    }
}
