//! Applying one node patch with optimistic concurrency. The node is read; if a label or taint
//! the policy manages differs from what the plan read, the node is refused ("changed since the
//! plan"): the plan's `blue → green` no longer describes it, and writing `green` over someone's
//! `orange` would be an overwrite the user never saw. Otherwise the labels and the WHOLE new
//! taint list are computed from the node as read and sent in one strategic-merge patch carrying
//! its `metadata.resourceVersion`. `spec.taints` is an atomic list (strategic merge replaces it
//! whole), so without the resourceVersion a concurrent taint would be silently dropped; with it
//! the apiserver answers 409, and after a backoff the node is read and checked again.

use k8s_openapi::api::core::v1::{Node, Taint};
use kube::api::{Patch, PatchParams};
use kube::Api;
use serde_json::{json, Map, Value};

use super::live::LiveNode;
use crate::conflict::Backoff;
use crate::connection::ClusterConnection;
use crate::ops::Op;
use crate::FIELD_MANAGER;

/// Why a node was not patched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// A key the policy manages changed since the plan: the node is left as it is.
    ChangedSincePlan { node: String, changed: Vec<String> },
    /// Anything else: the API refused, or could not be reached.
    Failed(String),
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatchError::ChangedSincePlan { node, changed } => write!(
                f,
                "node {node} changed since the plan ({}): not patched; plan again",
                changed.join("; ")
            ),
            PatchError::Failed(message) => f.write_str(message),
        }
    }
}

/// Applies `op` to its node in `cluster`; returns the patched node. `backoff` paces the
/// attempts after a 409.
pub async fn patch_node(
    cluster: &ClusterConnection,
    op: &Op,
    mut backoff: Backoff,
) -> Result<Node, PatchError> {
    let api: Api<Node> = Api::all(cluster.client());
    let failed = |what: &str, e: kube::Error| {
        PatchError::Failed(format!("{what} node {}: {}", op.node, cluster.describe(&e)))
    };
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    loop {
        let node = api.get(&op.node).await.map_err(|e| failed("reading", e))?;
        refuse_if_changed(op, &node)?;
        let body = patch_body(&node, op);
        match api.patch(&op.node, &params, &Patch::Strategic(body)).await {
            Ok(node) => return Ok(node),
            Err(kube::Error::Api(status)) if status.is_conflict() => {
                backoff.conflicted().await.map_err(|exhausted| {
                    PatchError::Failed(format!(
                        "patching node {}: another writer kept changing it ({exhausted})",
                        op.node
                    ))
                })?;
            }
            Err(e) => return Err(failed("patching", e)),
        }
    }
}

/// `Err` when a key the policy manages differs on `node` from what the plan read.
fn refuse_if_changed(op: &Op, node: &Node) -> Result<(), PatchError> {
    let Some(read) = &op.read else {
        return Ok(());
    };
    let changed = read.changed_in(&read.reread(&LiveNode::from_node(node)));
    match changed.is_empty() {
        true => Ok(()),
        false => Err(PatchError::ChangedSincePlan {
            node: op.node.clone(),
            changed,
        }),
    }
}

/// The strategic-merge patch for `op` on `node` as read: labels key by key (null removes),
/// and, when the op touches taints, the whole new list (null when it becomes empty).
pub fn patch_body(node: &Node, op: &Op) -> Value {
    let mut metadata = Map::new();
    metadata.insert(
        "resourceVersion".into(),
        json!(node.metadata.resource_version.clone().unwrap_or_default()),
    );
    let mut labels = Map::new();
    for (key, value) in &op.set_labels {
        labels.insert(key.clone(), json!(value));
    }
    for key in &op.remove_labels {
        labels.insert(key.clone(), Value::Null);
    }
    if !labels.is_empty() {
        metadata.insert("labels".into(), Value::Object(labels));
    }
    let mut body = json!({ "metadata": metadata });
    if !op.put_taints.is_empty() || !op.remove_taints.is_empty() {
        let taints = new_taints(node, op);
        body["spec"] =
            json!({ "taints": if taints.is_empty() { Value::Null } else { json!(taints) } });
    }
    body
}

/// `node` as it will be once `op` is applied: what the plan shows the clouds, whose load
/// balancer members follow node labels and taints.
pub fn planned_node(node: &Node, op: &Op) -> Node {
    let mut planned = node.clone();
    let labels = planned.metadata.labels.get_or_insert_with(Default::default);
    for key in &op.remove_labels {
        labels.remove(key);
    }
    labels.extend(op.set_labels.clone());
    let taints = new_taints(node, op);
    planned.spec.get_or_insert_with(Default::default).taints = Some(taints);
    planned
}

/// The node's taints with the op's removed and put ones taken out (by key and effect), then
/// the put ones appended. Taints of others keep every field they had (timeAdded included).
fn new_taints(node: &Node, op: &Op) -> Vec<Taint> {
    let current = node.spec.as_ref().and_then(|s| s.taints.clone());
    let touched = |t: &Taint| {
        let same = |key: &str, effect: &str| t.key == key && t.effect == effect;
        op.remove_taints
            .iter()
            .any(|r| same(&r.key, r.effect.as_str()))
            || op
                .put_taints
                .iter()
                .any(|p| same(&p.key, p.effect.as_str()))
    };
    let mut taints: Vec<Taint> = current
        .into_iter()
        .flatten()
        .filter(|t| !touched(t))
        .collect();
    taints.extend(op.put_taints.iter().map(|t| Taint {
        key: t.key.clone(),
        value: t.value.clone(),
        effect: t.effect.as_str().to_string(),
        time_added: None,
    }));
    taints
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{ManagedKeys, TaintId};
    use crate::spec::{TaintEffect, TaintSpec};
    use http::{Request, Response};
    use kube::client::Body;
    use std::time::Duration;

    type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

    #[test]
    fn the_planned_node_carries_the_ops_labels_and_taints_and_keeps_the_others() {
        let live: Node = serde_json::from_value(node(
            "7",
            json!([{"key": "drain", "effect": "NoExecute"}, {"key": "theirs", "effect": "NoSchedule"}]),
        ))
        .unwrap();
        let planned = planned_node(&live, &op());
        let labels = planned.metadata.labels.unwrap();
        assert_eq!(labels.get("tier").map(String::as_str), Some("web"));
        assert!(!labels.contains_key("old"));
        let taints: Vec<String> = planned
            .spec
            .unwrap()
            .taints
            .unwrap()
            .iter()
            .map(|t| format!("{}:{}", t.key, t.effect))
            .collect();
        assert_eq!(taints, ["theirs:NoSchedule", "dedicated:NoSchedule"]);
    }

    fn node(resource_version: &str, taints: Value) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-1", "resourceVersion": resource_version, "labels": {"old": "1"}},
            "spec": {"taints": taints}
        })
    }

    fn op() -> Op {
        Op {
            node: "node-1".into(),
            set_labels: [("tier".to_string(), "web".to_string())].into(),
            remove_labels: vec!["old".into()],
            put_taints: vec![TaintSpec {
                key: "dedicated".into(),
                value: Some("web".into()),
                effect: TaintEffect::NoSchedule,
            }],
            remove_taints: vec![TaintId {
                key: "drain".into(),
                effect: TaintEffect::NoExecute,
            }],
            read: Some(read_at_plan()),
        }
    }

    /// What the plan read of node-1: label old=1, the NoExecute taint drain, no dedicated.
    fn read_at_plan() -> ManagedKeys {
        let planned: Node =
            serde_json::from_value(node("10", json!([{"key": "drain", "effect": "NoExecute"}])))
                .unwrap();
        let ids = vec![
            TaintId {
                key: "dedicated".into(),
                effect: TaintEffect::NoSchedule,
            },
            TaintId {
                key: "drain".into(),
                effect: TaintEffect::NoExecute,
            },
        ];
        ManagedKeys::read(
            ["tier".into(), "old".into()],
            ids,
            &LiveNode::from_node(&planned),
        )
    }

    fn cluster(client: kube::Client) -> ClusterConnection {
        let address =
            skyplan_core::model::Address::new(skyplan_core::model::ResourceKind::Cluster, "prod");
        ClusterConnection::new(address, client)
    }

    fn respond(send: tower_test::mock::SendResponse<Response<Body>>, code: u16, body: Value) {
        let response = Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(Body::from(serde_json::to_vec(&body).unwrap()))
            .unwrap();
        send.send_response(response);
    }

    async fn next(
        handle: &mut Handle,
    ) -> (
        Request<Body>,
        tower_test::mock::SendResponse<Response<Body>>,
        Value,
    ) {
        let (request, send) = handle.next_request().await.expect("a request");
        let (parts, body) = request.into_parts();
        let bytes = body.collect_bytes().await.unwrap();
        let json = match bytes.is_empty() {
            true => Value::Null,
            false => serde_json::from_slice(&bytes).unwrap(),
        };
        (
            Request::from_parts(parts, Body::from(Vec::new())),
            send,
            json,
        )
    }

    fn conflict() -> Value {
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Operation cannot be fulfilled on nodes \"node-1\": the object has been modified; please apply your changes to the latest version and try again",
               "reason": "Conflict", "details": {"name": "node-1", "kind": "nodes"}, "code": 409})
    }

    /// The apiserver's side: the first PATCH conflicts (someone tainted the node meanwhile),
    /// the re-read shows the new taint and resourceVersion, the second PATCH succeeds.
    #[tokio::test]
    async fn a_conflict_is_retried_on_fresh_state_with_the_whole_taint_list() {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let api = cluster(kube::Client::new(service, "default"));
        let server = tokio::spawn(async move {
            let first = node("10", json!([{"key": "drain", "effect": "NoExecute"}]));
            let (request, send, _) = next(&mut handle).await;
            assert_eq!(request.method(), "GET");
            assert_eq!(request.uri().path(), "/api/v1/nodes/node-1");
            respond(send, 200, first);

            let (request, send, body) = next(&mut handle).await;
            assert_eq!(request.method(), "PATCH");
            assert!(
                request
                    .uri()
                    .query()
                    .unwrap_or_default()
                    .contains("fieldManager=skyplan"),
                "{:?}",
                request.uri()
            );
            assert_eq!(
                request.headers()["content-type"],
                "application/strategic-merge-patch+json"
            );
            assert_eq!(body["metadata"]["resourceVersion"], "10");
            assert_eq!(
                body["spec"]["taints"],
                json!([{"key": "dedicated", "value": "web", "effect": "NoSchedule"}])
            );
            respond(send, 409, conflict());

            let theirs = json!({"key": "maintenance", "effect": "NoSchedule", "timeAdded": "2026-11-23T10:00:00Z"});
            let fresh = node(
                "11",
                json!([{"key": "drain", "effect": "NoExecute"}, theirs.clone()]),
            );
            let (request, send, _) = next(&mut handle).await;
            assert_eq!(request.method(), "GET");
            respond(send, 200, fresh);

            let (request, send, body) = next(&mut handle).await;
            assert_eq!(request.method(), "PATCH");
            assert_eq!(body["metadata"]["resourceVersion"], "11");
            assert_eq!(
                body["metadata"]["labels"],
                json!({"tier": "web", "old": null})
            );
            assert_eq!(
                body["spec"]["taints"],
                json!([theirs, {"key": "dedicated", "value": "web", "effect": "NoSchedule"}]),
                "the whole list: the concurrent taint is kept, ours added, drain removed"
            );
            respond(send, 200, node("12", json!([])));
        });
        let patched = patch_node(&api, &op(), Backoff::default()).await.unwrap();
        assert_eq!(patched.metadata.resource_version.as_deref(), Some("12"));
        server.await.unwrap();
    }

    #[tokio::test]
    async fn conflicts_give_up_once_the_backoff_budget_is_spent() {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let api = cluster(kube::Client::new(service, "default"));
        let server = tokio::spawn(async move {
            let mut version = 10;
            // The writer never stops: every read shows a new version, every patch conflicts.
            while let Some((request, send)) = handle.next_request().await {
                match request.method().as_str() {
                    "GET" => {
                        let drain = json!([{"key": "drain", "effect": "NoExecute"}]);
                        respond(send, 200, node(&version.to_string(), drain))
                    }
                    _ => respond(send, 409, conflict()),
                }
                version += 1;
            }
            version
        });
        let budget = Duration::from_millis(300);
        let error = patch_node(&api, &op(), Backoff::within(budget))
            .await
            .unwrap_err();
        let PatchError::Failed(message) = &error else {
            panic!("{error:?}");
        };
        assert!(
            message.contains("another writer kept changing it"),
            "{message}"
        );
        drop(api);
        let requests = server.await.unwrap() - 10;
        assert!(
            (6..=12).contains(&requests),
            "3-5 attempts in 300 ms, not 5 at once: {requests}"
        );
    }

    /// The scenario of issue 19: the plan read no `dedicated` taint; someone set it since.
    /// The node is refused, and nothing is written.
    #[tokio::test]
    async fn a_managed_key_changed_since_the_plan_is_refused_without_a_write() {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let api = cluster(kube::Client::new(service, "default"));
        let server = tokio::spawn(async move {
            let theirs = json!([{"key": "drain", "effect": "NoExecute"},
                                {"key": "dedicated", "value": "orange", "effect": "NoSchedule"}]);
            let (request, send, _) = next(&mut handle).await;
            assert_eq!(request.method(), "GET");
            respond(send, 200, node("11", theirs));
            assert!(handle.next_request().await.is_none(), "no write follows");
        });
        let error = patch_node(&api, &op(), Backoff::default())
            .await
            .unwrap_err();
        drop(api);
        server.await.unwrap();
        assert_eq!(
            error,
            PatchError::ChangedSincePlan {
                node: "node-1".into(),
                changed: vec![
                    "taints.dedicated:NoSchedule: (none) then, \"dedicated=orange:NoSchedule\" now"
                        .into()
                ],
            }
        );
        assert!(
            error.to_string().contains("changed since the plan"),
            "{error}"
        );
    }

    #[test]
    fn removing_the_last_taint_sends_null() {
        let node: Node =
            serde_json::from_value(node("3", json!([{"key": "drain", "effect": "NoExecute"}])))
                .unwrap();
        let op = Op {
            node: "node-1".into(),
            remove_taints: vec![TaintId {
                key: "drain".into(),
                effect: TaintEffect::NoExecute,
            }],
            ..Op::default()
        };
        let body = patch_body(&node, &op);
        assert_eq!(
            body,
            json!({"metadata": {"resourceVersion": "3"}, "spec": {"taints": null}})
        );
    }
}
