//! The cloud-node and cloud-node-lifecycle controllers of cloud-provider v0.23.5 with the
//! PhoenixNAP InstancesV2, and the kubelet stand-in for BMC servers. The shape is the
//! cloudscale CCM's (`super::super::nodes`), whose Update, address patch and taint writes
//! are reused; only the cloud side differs.

use super::super::http::Kube;
use super::super::kubelet::next_conditions;
use super::super::nodes::{
    initialised, node_path, patch_addresses, set_shutdown_taint, CONFLICT_RETRIES,
    UNINITIALIZED_TAINT,
};
use super::super::objects::Node;
use super::client::PnapApi;
use super::instances::{
    instance_metadata, server_by_node, server_by_provider_id, LookupError, POWERED_OFF,
};

/// The status a kubelet keeps posting from; any other and it falls silent.
const POWERED_ON: &str = "powered-on";

/// Initialises every node still carrying the cloud taint; returns the names it initialised.
/// A node whose server is not found or lacks an address keeps its taint (requeued).
pub async fn initialise_nodes(kube: &Kube, api: &PnapApi, nodes: &[Node]) -> Vec<String> {
    let mut done = Vec::new();
    for node in nodes.iter().filter(|n| n.has_taint(UNINITIALIZED_TAINT)) {
        match initialise(kube, api, &node.metadata.name).await {
            Ok(true) => done.push(node.metadata.name.clone()),
            Ok(false) => {}
            Err(error) => {
                tracing::debug!(node = %node.metadata.name, %error, "node not initialised")
            }
        }
    }
    done
}

async fn initialise(kube: &Kube, api: &PnapApi, name: &str) -> Result<bool, String> {
    for _ in 0..CONFLICT_RETRIES {
        let current = kube
            .get(&node_path(name))
            .await
            .map_err(|e| e.to_string())?;
        let node = Node::from_json(&current).ok_or("undecodable node")?;
        if !node.has_taint(UNINITIALIZED_TAINT) {
            return Ok(false);
        }
        let server = server_by_node(api, &node)
            .await
            .map_err(|e| format!("failed to get instance metadata: {e}"))?;
        let metadata = instance_metadata(&server)?;
        match kube
            .put(&node_path(name), &initialised(&current, &metadata))
            .await
        {
            Ok(_) => {
                patch_addresses(kube, name, &metadata.addresses).await?;
                return Ok(true);
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!(
        "node {name}: still conflicting after {CONFLICT_RETRIES} tries"
    ))
}

/// MonitorNodes: a Ready node loses the shutdown taint; a node that is not Ready is deleted
/// when InstanceExists says its server is gone, tainted when InstanceShutdown says
/// `powered-off`. Both read the server by providerID only, so a node without one is skipped
/// (the lookup errors).
pub async fn monitor_nodes(kube: &Kube, api: &PnapApi, nodes: &[Node]) {
    for node in nodes {
        let name = &node.metadata.name;
        let result = if node.is_ready() {
            set_shutdown_taint(kube, name, false).await
        } else {
            monitor_unready(kube, api, node).await
        };
        if let Err(error) = result {
            tracing::debug!(node = %name, %error, "node lifecycle");
        }
    }
}

async fn monitor_unready(kube: &Kube, api: &PnapApi, node: &Node) -> Result<(), String> {
    match server_by_provider_id(api, node).await {
        Err(LookupError::NotFound) => kube
            .delete(&node_path(&node.metadata.name))
            .await
            .map_err(|e| e.to_string()),
        Err(LookupError::Failed(error)) => Err(error),
        Ok(server) if server.status == POWERED_OFF => {
            set_shutdown_taint(kube, &node.metadata.name, true).await
        }
        Ok(_) => Ok(()),
    }
}

/// Not the CCM: the kubelet of a node with a providerID stops posting status while its
/// server is not powered on (or gone), and posts Ready again when it is.
pub async fn follow_servers(kube: &Kube, api: &PnapApi, raw_nodes: &[serde_json::Value]) {
    for raw in raw_nodes {
        let Some(node) = Node::from_json(raw) else {
            continue;
        };
        if node.provider_id().is_none() {
            continue;
        }
        let running = match server_by_provider_id(api, &node).await {
            Ok(server) => server.status == POWERED_ON,
            Err(LookupError::NotFound) => false,
            Err(LookupError::Failed(_)) => continue,
        };
        if let Some(conditions) = next_conditions(raw, running) {
            let body = serde_json::json!({"status": {"conditions": conditions}});
            let path = format!("{}/status", node_path(&node.metadata.name));
            let patched = kube
                .patch(&path, super::super::http::MERGE_PATCH, &body)
                .await;
            if let Err(e) = patched {
                tracing::debug!(node = %node.metadata.name, error = %e, "node condition");
            }
        }
    }
}
