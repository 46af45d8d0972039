//! The node facts the service controller's predicates read, shared by every cloud's reading
//! of which nodes its controller builds load-balancer members from. Which predicates apply
//! depends on the cloud-provider version the controller pins, so each cloud combines them.

use k8s_openapi::api::core::v1::Node;

/// Its mere presence (whatever the value, before cloud-provider v0.34) keeps a node out of
/// every load balancer.
pub const EXCLUDE_LABEL: &str = "node.kubernetes.io/exclude-from-external-load-balancers";
/// The cluster autoscaler's taint on a node it is about to delete.
pub const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";

pub fn has_exclude_label(node: &Node) -> bool {
    node.metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.contains_key(EXCLUDE_LABEL))
}

pub fn is_autoscaled_away(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == TO_BE_DELETED_TAINT))
}

pub fn is_being_deleted(node: &Node) -> bool {
    node.metadata.deletion_timestamp.is_some()
}

/// Conditions present and none saying Ready is other than True (cloud-provider v0.24's
/// reading: a node without conditions is not accepted).
pub fn is_ready(node: &Node) -> bool {
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    !conditions.is_empty()
        && conditions
            .iter()
            .all(|c| c.type_ != "Ready" || c.status == "True")
}
