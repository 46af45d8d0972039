//! Which nodes become members and at which addresses, as the cloudscale CCM decides it:
//! the service controller's node predicates (cloud-provider v0.29, the version the CCM pins),
//! then the CCM's node-selector, then one server per node, then every non-public interface
//! address that has a subnet (research/kubernetes.md §1.3-1.4).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;

use crate::servers::ServerObject;
use crate::spec::CloudscaleLoadBalancerSpec;
use skyplan_kubernetes::labels::LabelSelector as Selector;
use skyplan_kubernetes::lb_nodes::{has_exclude_label, is_autoscaled_away, is_being_deleted};

/// The v0.29 `stableNodeSetPredicates`: not being deleted, not excluded by label (its mere
/// presence: later versions parse it as a bool), not about to be removed by the autoscaler.
/// Readiness is deliberately not a filter.
pub fn passes_predicates(node: &Node) -> bool {
    !is_being_deleted(node) && !has_exclude_label(node) && !is_autoscaled_away(node)
}

/// What the service controller compares before it calls the CCM's UpdateLoadBalancer
/// (`nodesSufficientlyEqual`): the names and providerIDs of the nodes passing the predicates.
pub fn node_set(nodes: &[Node]) -> std::collections::BTreeSet<(String, String)> {
    nodes
        .iter()
        .filter(|n| passes_predicates(n))
        .map(|n| {
            let provider_id = n.spec.as_ref().and_then(|s| s.provider_id.clone());
            (node_name(n).to_string(), provider_id.unwrap_or_default())
        })
        .collect()
}

fn node_name(node: &Node) -> &str {
    node.metadata.name.as_deref().unwrap_or_default()
}

/// The nodes the CCM builds members from, in name order.
pub fn member_nodes<'n>(
    nodes: &'n [Node],
    node_selector: Option<&str>,
) -> Result<Vec<&'n Node>, String> {
    let selector = Selector::parse(node_selector.unwrap_or_default())
        .map_err(|e| format!("node-selector: {e}"))?;
    let empty = BTreeMap::new();
    let mut chosen: Vec<&Node> = nodes
        .iter()
        .filter(|n| passes_predicates(n))
        .filter(|n| selector.matches(n.metadata.labels.as_ref().unwrap_or(&empty)))
        .collect();
    chosen.sort_by(|a, b| node_name(a).cmp(node_name(b)));
    Ok(chosen)
}

/// The CCM's `serverMapper`: by providerID (`cloudscale://<uuid>`), else by node name, which
/// must name exactly one server. Any node without its server fails the whole reconcile.
pub fn server_of<'s>(node: &Node, servers: &'s [ServerObject]) -> Result<&'s ServerObject, String> {
    let name = node_name(node);
    let provider_id = node.spec.as_ref().and_then(|s| s.provider_id.as_deref());
    if let Some(provider_id) = provider_id.filter(|p| !p.is_empty()) {
        let uuid = provider_id
            .split_once("://")
            .filter(|(scheme, _)| scheme.trim() == super::super::servers::SCHEME)
            .map(|(_, uuid)| uuid.trim().to_lowercase())
            .ok_or_else(|| {
                format!("node {name} has providerID {provider_id}, not a cloudscale server")
            })?;
        return servers
            .iter()
            .find(|s| s.uuid.to_lowercase() == uuid)
            .ok_or_else(|| format!("node {name}: no server {uuid} in the account (providerID {provider_id}); the CCM fails the whole reconcile until the node is gone"));
    }
    let named: Vec<&ServerObject> = servers.iter().filter(|s| s.name == name).collect();
    match named.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("node {name} has no providerID and no server is named {name}; the CCM fails the whole reconcile")),
        many => Err(format!("node {name} has no providerID and {} servers are named {name}", many.len())),
    }
}

/// Every member address: each chosen node's server's non-public interface addresses that have
/// a subnet (Kubernetes node addresses are never used).
pub fn member_addresses(
    spec: &CloudscaleLoadBalancerSpec,
    nodes: &[Node],
    servers: &[ServerObject],
) -> Result<Vec<String>, String> {
    let mut addresses = Vec::new();
    for node in member_nodes(nodes, spec.node_selector.as_deref())? {
        let server = server_of(node, servers)?;
        for interface in server.interfaces.iter().filter(|i| i.kind != "public") {
            for address in interface.addresses.iter().filter(|a| a.subnet.is_some()) {
                if !addresses.contains(&address.address) {
                    addresses.push(address.address.clone());
                }
            }
        }
    }
    Ok(addresses)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use skyplan_kubernetes::lb_nodes::{EXCLUDE_LABEL, TO_BE_DELETED_TAINT};

    fn spec(selector: Option<&str>) -> CloudscaleLoadBalancerSpec {
        let mut spec = CloudscaleLoadBalancerSpec::with_defaults("shop", "lpg1");
        spec.node_selector = selector.map(String::from);
        spec
    }

    #[test]
    fn the_exclude_label_excludes_whatever_its_value_and_readiness_does_not_matter() {
        let servers: Vec<_> = (1..=3).map(server).collect();
        let nodes = vec![
            node(1, &[(EXCLUDE_LABEL, "false")]),
            node(2, &[]),
            node(3, &[]),
        ];
        let addresses = member_addresses(&spec(None), &nodes, &servers).unwrap();
        assert_eq!(addresses, ["10.0.0.12", "10.0.0.13"]);
    }

    #[test]
    fn deleting_and_autoscaled_away_nodes_are_left_out() {
        let mut deleting = node(1, &[]);
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2024-01-01T00:00:00Z".parse().unwrap(),
            ));
        let mut tainted = node(2, &[]);
        tainted.spec.as_mut().unwrap().taints = Some(vec![k8s_openapi::api::core::v1::Taint {
            key: TO_BE_DELETED_TAINT.into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        }]);
        let nodes = vec![deleting, tainted, node(3, &[])];
        let chosen = member_nodes(&nodes, None).unwrap();
        assert_eq!(chosen.len(), 1);
    }

    #[test]
    fn the_node_selector_filters_and_a_node_without_server_is_an_error() {
        let servers: Vec<_> = (1..=3).map(server).collect();
        let nodes = vec![node(1, &[("tier", "web")]), node(2, &[]), node(3, &[])];
        let addresses = member_addresses(&spec(Some("tier=web")), &nodes, &servers).unwrap();
        assert_eq!(addresses, ["10.0.0.11"]);

        let nodes = vec![node(1, &[]), node(4, &[])];
        let error = member_addresses(&spec(None), &nodes, &servers).unwrap_err();
        assert!(error.contains("node node-4: no server"), "{error}");
    }

    #[test]
    fn a_node_without_provider_id_is_found_by_name() {
        let servers: Vec<_> = (1..=3).map(server).collect();
        let mut named = node(2, &[]);
        named.spec.as_mut().unwrap().provider_id = None;
        assert_eq!(server_of(&named, &servers).unwrap().name, "node-2");
    }
}
