//! Applying a controller-mode change: write the Service, then wait (with progress and a
//! timeout, `SKYPLAN_CCM_WAIT_S`, default 300 s) until the cloud shows what the plan predicted
//! — the load balancer found by the Service's uuid annotation, running, with the predicted
//! pools, listeners, monitors and members — and compare which pools kept their UUID with what
//! the plan said.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Service;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use super::super::binding::ClusterView;
use super::super::client::CloudscaleClient;
use super::super::desired::desired_objects;
use super::super::diff::{diff_classified, DiffInput};
use super::super::objects::LbObjects;
use super::super::refresh::refresh;
use super::super::servers::read_servers;
use super::annotations::{CCM_OWNED, PREFIX, UUID};
use super::predict::predicted_spec;
use crate::model::{Address, LoadBalancerSpec};
use crate::provider::kubernetes::connection::ClusterConnection;

/// skyplan's field manager on the Services it writes.
pub const FIELD_MANAGER: &str = "skyplan";

fn wait_limit() -> Duration {
    let seconds = std::env::var("SKYPLAN_CCM_WAIT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(seconds)
}

/// How often a 409 is retried on a fresh read when only others' fields changed.
const CONFLICT_RETRIES: usize = 5;

/// Creates the Service, or merge-patches it with the resourceVersion read at refresh. A 409
/// means someone wrote the Service since: when what skyplan manages (`planned`, the Service as
/// refreshed) is unchanged — the controller wrote its own annotations, status or finalizer —
/// the patch is sent again with the fresh resourceVersion; otherwise the prediction is stale
/// and the user must plan again. Never a blind overwrite.
pub async fn write_service(
    connection: &ClusterConnection,
    namespace: &str,
    name: &str,
    body: &serde_json::Value,
    resource_version: Option<&str>,
    planned: Option<&Service>,
) -> Result<Service, String> {
    let api: kube::Api<Service> = kube::Api::namespaced(connection.client(), namespace);
    let Some(mut version) = resource_version.map(str::to_owned) else {
        return create_service(&api, namespace, name, body).await;
    };
    for _ in 0..CONFLICT_RETRIES {
        match patch_service(&api, name, body, &version).await {
            Err(kube::Error::Api(status)) if status.is_conflict() => {
                let fresh = api
                    .get_opt(name)
                    .await
                    .map_err(|e| format!("reading Service {namespace}/{name}: {e}"))?;
                let unchanged = fresh.as_ref().map(managed_fields) == planned.map(managed_fields);
                match (fresh, unchanged) {
                    (Some(fresh), true) => {
                        version = fresh.metadata.resource_version.unwrap_or_default();
                    }
                    _ => return Err(stale(namespace, name)),
                }
            }
            result => {
                return result.map_err(|e| format!("writing Service {namespace}/{name}: {e}"))
            }
        }
    }
    Err(stale(namespace, name))
}

fn stale(namespace: &str, name: &str) -> String {
    format!("Service {namespace}/{name} changed since the plan was made (409); plan again")
}

async fn create_service(
    api: &kube::Api<Service>,
    namespace: &str,
    name: &str,
    body: &serde_json::Value,
) -> Result<Service, String> {
    let service: Service = serde_json::from_value(body.clone()).map_err(|e| e.to_string())?;
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    api.create(&params, &service).await.map_err(|e| match &e {
        kube::Error::Api(status) if status.is_already_exists() => stale(namespace, name),
        _ => format!("creating Service {namespace}/{name}: {e}"),
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

/// The parts of a Service skyplan writes and predicts from: type, ports, traffic policy and
/// the CCM annotations other than the three the CCM writes itself.
fn managed_fields(service: &Service) -> serde_json::Value {
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
        .filter(|(key, _)| key.starts_with(PREFIX) && !CCM_OWNED.contains(&key.as_str()))
        .collect();
    json!({
        "type": spec.and_then(|s| s.type_.clone()),
        "ports": ports,
        "traffic_policy": spec.and_then(|s| s.external_traffic_policy.clone()),
        "annotations": annotations,
    })
}

/// What the wait saw when the cloud matched the prediction.
pub struct Converged {
    pub service_uid: String,
    pub lb: LbObjects,
}

/// Polls the Service and the cloud until the CCM's load balancer matches the prediction made
/// from the Service as written (its node ports are now known).
pub async fn wait_for_controller(
    address: &Address,
    client: &CloudscaleClient,
    connection: &Arc<ClusterConnection>,
    spec: &LoadBalancerSpec,
) -> Result<Converged, String> {
    let started = Instant::now();
    let limit = wait_limit();
    let nodes = connection
        .nodes()
        .await
        .map_err(|e| e.to_string())?
        .to_vec();
    let servers = read_servers(client).await.map_err(|e| e.to_string())?;
    let mut last = String::from("the Service has no uuid annotation yet");
    let mut reported = Instant::now();
    loop {
        if started.elapsed() > limit {
            return Err(format!(
                "the CCM did not converge within {} s (SKYPLAN_CCM_WAIT_S): {last}",
                limit.as_secs()
            ));
        }
        if reported.elapsed() > Duration::from_secs(5) {
            tracing::info!(%address, "waiting for the cloud controller: {last}");
            reported = Instant::now();
        }
        match check_once(address, client, connection, spec, &nodes, &servers).await? {
            Ok(converged) => return Ok(converged),
            Err(why) => last = why,
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `Ok(Ok(..))` converged; `Ok(Err(why))` not yet; `Err` a failure worth stopping for.
async fn check_once(
    address: &Address,
    client: &CloudscaleClient,
    connection: &ClusterConnection,
    spec: &LoadBalancerSpec,
    nodes: &[k8s_openapi::api::core::v1::Node],
    servers: &[super::super::servers::ServerObject],
) -> Result<Result<Converged, String>, String> {
    let binding = spec.binding.as_ref().expect("bound");
    let service = connection
        .service(&binding.namespace, &binding.name)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("Service {} disappeared", binding.service_ref()))?;
    let Some(uuid) = service
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(UUID))
        .cloned()
    else {
        return Ok(Err("the Service has no uuid annotation yet".into()));
    };
    let snapshot = refresh(client, |lb| lb.uuid.as_deref() == Some(uuid.as_str()))
        .await
        .map_err(|e| e.to_string())?;
    let Some(lb) = snapshot.load_balancer(&uuid) else {
        return Ok(Err(format!("load balancer {uuid} not found yet")));
    };
    if lb.lb.status.as_deref() != Some("running") {
        return Ok(Err(format!("load balancer {uuid} is not running yet")));
    }
    let view = ClusterView {
        nodes: nodes.to_vec(),
        service: Some(service.clone()),
    };
    let predicted = predicted_spec(spec, &view, servers)?;
    let desired =
        desired_objects(address, &predicted, &snapshot.subnets).map_err(|e| e.to_string())?;
    if let Some(difference) = shape_difference(address, &predicted, &desired, lb) {
        return Ok(Err(difference));
    }
    Ok(Ok(Converged {
        service_uid: service.metadata.uid.clone().unwrap_or_default(),
        lb: lb.clone(),
    }))
}

/// The first way the live load balancer differs from the predicted objects: converged means
/// the same diff a plan runs finds nothing left for the controller to do (names, keys and
/// in-place fields alike: a listener's CIDRs count as much as its pool).
pub fn shape_difference(
    address: &Address,
    spec: &LoadBalancerSpec,
    desired: &LbObjects,
    live: &LbObjects,
) -> Option<String> {
    let input = DiffInput {
        address,
        desired: Some((spec, desired)),
        prior: None,
        live: Some(live),
        replace: false,
        allow_delete: false,
    };
    let (_, _, ops) = diff_classified(&input);
    let pending: Vec<String> = ops.iter().map(|op| op.to_string()).collect();
    match pending.is_empty() {
        true => None,
        false => Some(format!("still to do: {}", pending.join(", "))),
    }
}

/// Pools the plan said the CCM would recreate (`controller: delete pool X` and create it
/// again) against what happened to their UUIDs; every difference described.
pub fn compare_pool_uuids(
    before: Option<&LbObjects>,
    after: &LbObjects,
    actions: &[String],
) -> Vec<String> {
    let Some(before) = before else { return vec![] };
    let uuids = |l: &LbObjects| -> BTreeMap<String, Option<String>> {
        l.pools
            .iter()
            .map(|(n, s)| (n.clone(), s.pool.uuid.clone()))
            .collect()
    };
    let (old, new) = (uuids(before), uuids(after));
    let mut differences = Vec::new();
    for (name, old_uuid) in &old {
        let Some(new_uuid) = new.get(name) else {
            continue;
        };
        let predicted_recreated = actions.iter().any(|a| a == &format!("delete pool {name}"));
        let recreated = old_uuid != new_uuid;
        if predicted_recreated && !recreated {
            differences.push(format!(
                "pool {name} was predicted to be recreated but kept its UUID"
            ));
        }
        if recreated && !predicted_recreated {
            differences.push(format!(
                "pool {name} was recreated by the controller (the plan predicted it kept)"
            ));
        }
    }
    differences
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;
    use http::{Request, Response};
    use kube::client::Body;

    type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

    fn connection() -> (ClusterConnection, Handle) {
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let address = Address::new(ResourceKind::Cluster, "prod");
        (ClusterConnection::new(address, client), handle)
    }

    fn service_json() -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "shop", "namespace": "default", "resourceVersion": "8"}})
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
        write_service(&connection, "default", "shop", &body, Some("7"), None)
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
        )
        .await
        .unwrap();
        server.await.unwrap();
    }

    #[test]
    fn pool_uuids_are_compared_with_the_prediction() {
        use crate::provider::cloudscale::objects::{LbObject, PoolObject, PoolSet};
        let lb = |uuid: &str| LbObjects {
            lb: LbObject {
                uuid: Some("lb".into()),
                name: "shop".into(),
                flavor: "lb-standard".into(),
                zone: "lpg1".into(),
                vip_addresses: vec![],
                tags: Default::default(),
                status: Some("running".into()),
            },
            pools: [(
                "tcp/http".to_string(),
                PoolSet {
                    pool: PoolObject {
                        uuid: Some(uuid.into()),
                        name: "tcp/http".into(),
                        algorithm: "round_robin".into(),
                        protocol: "tcp".into(),
                        tags: Default::default(),
                    },
                    members: Default::default(),
                    monitor: None,
                    listener: None,
                },
            )]
            .into(),
            floating_ips: Default::default(),
        };
        let recreate = vec!["delete pool tcp/http".to_string()];
        assert!(compare_pool_uuids(Some(&lb("a")), &lb("b"), &recreate).is_empty());
        assert!(compare_pool_uuids(Some(&lb("a")), &lb("a"), &[]).is_empty());
        assert_eq!(
            compare_pool_uuids(Some(&lb("a")), &lb("a"), &recreate).len(),
            1
        );
        let unexpected = compare_pool_uuids(Some(&lb("a")), &lb("b"), &[]);
        assert!(
            unexpected[0].contains("predicted it kept"),
            "{unexpected:?}"
        );
    }
}
