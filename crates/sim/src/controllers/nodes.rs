//! The cloud-node controller (`node_controller.go` syncNode) with the cloudscale CCM's
//! InstancesV2 (`instances.go`, `server_mapper.go`), and the cloud-node-lifecycle controller
//! (`node_lifecycle_controller.go` MonitorNodes): initialise nodes carrying the
//! `uninitialized` taint, taint nodes whose server is stopped, delete nodes whose server is
//! gone.

use serde_json::{json, Value};

use super::http::{Cloud, Kube, MERGE_PATCH, STRATEGIC_PATCH};
use super::objects::{Node, Server, Taint};
use super::servers::{provider_id, server_of};

pub const UNINITIALIZED_TAINT: &str = "node.cloudprovider.kubernetes.io/uninitialized";
pub const SHUTDOWN_TAINT: &str = "node.cloudprovider.kubernetes.io/shutdown";
/// client-go's `retry.DefaultRetry` steps.
pub(super) const CONFLICT_RETRIES: usize = 5;

/// `InstanceMetadata` of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub provider_id: String,
    pub instance_type: String,
    pub zone: String,
    pub region: String,
    /// `{"type", "address"}` in the CCM's order.
    pub addresses: Vec<Value>,
}

pub fn instance_metadata(server: &Server) -> Metadata {
    let zone = server.zone.slug.clone();
    Metadata {
        provider_id: provider_id(server),
        instance_type: server.flavor.slug.clone(),
        region: zone
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .to_owned(),
        zone,
        addresses: node_addresses(server),
    }
}

/// Hostname = the server name, then every address of every interface in API order: public
/// ones ExternalIP, the others InternalIP.
pub fn node_addresses(server: &Server) -> Vec<Value> {
    let mut addresses = vec![json!({"type": "Hostname", "address": server.name})];
    for interface in &server.interfaces {
        let kind = if interface.kind == "public" {
            "ExternalIP"
        } else {
            "InternalIP"
        };
        for address in &interface.addresses {
            addresses.push(json!({"type": kind, "address": address.address}));
        }
    }
    addresses
}

/// The node after syncNode's one Update: providerID if it had none, the instance-type, zone
/// and region labels (GA and beta, non-empty values only), the cloud taint removed. The rest
/// of the object, resourceVersion included, is kept, so the Update is conditional.
pub fn initialised(node: &Value, metadata: &Metadata) -> Value {
    let mut node = node.clone();
    let spec = &mut node["spec"];
    if spec["providerID"].as_str().unwrap_or("").is_empty() {
        spec["providerID"] = json!(metadata.provider_id);
    }
    if let Some(taints) = spec["taints"].as_array_mut() {
        taints.retain(|t| t["key"] != UNINITIALIZED_TAINT);
    }
    let labels = [
        ("node.kubernetes.io/instance-type", &metadata.instance_type),
        ("beta.kubernetes.io/instance-type", &metadata.instance_type),
        ("topology.kubernetes.io/zone", &metadata.zone),
        ("failure-domain.beta.kubernetes.io/zone", &metadata.zone),
        ("topology.kubernetes.io/region", &metadata.region),
        ("failure-domain.beta.kubernetes.io/region", &metadata.region),
    ];
    if !node["metadata"]["labels"].is_object() {
        node["metadata"]["labels"] = json!({});
    }
    for (key, value) in labels.into_iter().filter(|(_, v)| !v.is_empty()) {
        node["metadata"]["labels"][key] = json!(value);
    }
    node
}

pub(super) fn node_path(name: &str) -> String {
    format!("/api/v1/nodes/{name}")
}

/// Initialises every node still carrying the cloud taint; returns the names it initialised.
/// A node whose server cannot be found keeps its taint (the real controller requeues it).
pub async fn initialise_nodes(kube: &Kube, cloud: &Cloud, nodes: &[Node]) -> Vec<String> {
    let mut done = Vec::new();
    for node in nodes.iter().filter(|n| n.has_taint(UNINITIALIZED_TAINT)) {
        match initialise(kube, cloud, &node.metadata.name).await {
            Ok(true) => done.push(node.metadata.name.clone()),
            Ok(false) => {}
            Err(error) => {
                tracing::debug!(node = %node.metadata.name, %error, "node not initialised")
            }
        }
    }
    done
}

async fn initialise(kube: &Kube, cloud: &Cloud, name: &str) -> Result<bool, String> {
    for _ in 0..CONFLICT_RETRIES {
        let current = kube
            .get(&node_path(name))
            .await
            .map_err(|e| e.to_string())?;
        let node = Node::from_json(&current).ok_or("undecodable node")?;
        if !node.has_taint(UNINITIALIZED_TAINT) {
            return Ok(false);
        }
        let Some(server) = server_of(cloud, &node).await? else {
            return Ok(false);
        };
        let metadata = instance_metadata(&server);
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

/// `updateNodeAddress`: the status subresource; a server without one takes it on the node.
/// A merge patch, because addresses of one type share the strategic merge key.
pub(super) async fn patch_addresses(
    kube: &Kube,
    name: &str,
    addresses: &[Value],
) -> Result<(), String> {
    let body = json!({"status": {"addresses": addresses}});
    let status = format!("{}/status", node_path(name));
    match kube.patch(&status, MERGE_PATCH, &body).await {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.status, Some(404 | 405)) => kube
            .patch(&node_path(name), MERGE_PATCH, &body)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// MonitorNodes: a Ready node loses the shutdown taint; a node that is not Ready is deleted
/// when its server is gone, tainted when its server is stopped.
pub async fn monitor_nodes(kube: &Kube, cloud: &Cloud, nodes: &[Node]) {
    for node in nodes {
        let name = &node.metadata.name;
        let result = if node.is_ready() {
            set_shutdown_taint(kube, name, false).await
        } else {
            monitor_unready(kube, cloud, node).await
        };
        if let Err(error) = result {
            tracing::debug!(node = %name, %error, "node lifecycle");
        }
    }
}

async fn monitor_unready(kube: &Kube, cloud: &Cloud, node: &Node) -> Result<(), String> {
    // InstanceExists without a providerID is an error in the cloudscale CCM: skip the node.
    if node.provider_id().is_none() {
        return Ok(());
    }
    match server_of(cloud, node).await? {
        None => kube
            .delete(&node_path(&node.metadata.name))
            .await
            .map_err(|e| e.to_string()),
        Some(server) if server.status == "stopped" => {
            set_shutdown_taint(kube, &node.metadata.name, true).await
        }
        Some(_) => Ok(()),
    }
}

/// The taint list with or without the shutdown taint, written whole with the resourceVersion
/// read (cloud-provider `PatchNodeTaints`), retried on conflict.
pub(super) async fn set_shutdown_taint(
    kube: &Kube,
    name: &str,
    wanted: bool,
) -> Result<(), String> {
    for _ in 0..CONFLICT_RETRIES {
        let current = kube
            .get(&node_path(name))
            .await
            .map_err(|e| e.to_string())?;
        let node = Node::from_json(&current).ok_or("undecodable node")?;
        if node.has_taint(SHUTDOWN_TAINT) == wanted {
            return Ok(());
        }
        let mut taints: Vec<Taint> = node.spec.taints.clone();
        taints.retain(|t| t.key != SHUTDOWN_TAINT);
        if wanted {
            taints.push(Taint {
                key: SHUTDOWN_TAINT.into(),
                value: None,
                effect: "NoSchedule".into(),
            });
        }
        let body = json!({
            "metadata": {"resourceVersion": node.metadata.resource_version},
            "spec": {"taints": taints_json(&taints)},
        });
        match kube.patch(&node_path(name), STRATEGIC_PATCH, &body).await {
            Ok(_) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!("node {name}: taints still conflicting"))
}

/// `null` clears the list, as kubectl sends it.
fn taints_json(taints: &[Taint]) -> Value {
    if taints.is_empty() {
        return Value::Null;
    }
    taints
        .iter()
        .map(|t| {
            let mut taint = json!({"key": t.key, "effect": t.effect});
            if let Some(value) = &t.value {
                taint["value"] = json!(value);
            }
            taint
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::objects::{Interface, InterfaceAddress, Slug};
    use super::*;

    fn server() -> Server {
        let address = |a: &str, v| InterfaceAddress {
            version: v,
            address: a.into(),
            subnet: None,
        };
        Server {
            uuid: "6F5D4A1E-4F3B-4C2A-9D1E-1A2B3C4D5E6F".into(),
            name: "node-1".into(),
            status: "running".into(),
            flavor: Slug {
                slug: "plus-32-16".into(),
            },
            zone: Slug {
                slug: "rma1".into(),
            },
            interfaces: vec![
                Interface {
                    kind: "public".into(),
                    addresses: vec![address("5.102.144.7", 4), address("2a06:c00::7", 6)],
                },
                Interface {
                    kind: "private".into(),
                    addresses: vec![address("10.0.0.7", 4)],
                },
            ],
        }
    }

    #[test]
    fn metadata_of_a_server() {
        let metadata = instance_metadata(&server());
        assert_eq!(
            metadata.provider_id,
            "cloudscale://6f5d4a1e-4f3b-4c2a-9d1e-1a2b3c4d5e6f"
        );
        assert_eq!(metadata.instance_type, "plus-32-16");
        assert_eq!(
            (metadata.zone.as_str(), metadata.region.as_str()),
            ("rma1", "rma")
        );
        let kinds: Vec<_> = metadata
            .addresses
            .iter()
            .map(|a| {
                format!(
                    "{}={}",
                    a["type"].as_str().unwrap(),
                    a["address"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "Hostname=node-1",
                "ExternalIP=5.102.144.7",
                "ExternalIP=2a06:c00::7",
                "InternalIP=10.0.0.7"
            ]
        );
    }

    #[test]
    fn initialisation_sets_labels_and_provider_id_and_drops_only_the_cloud_taint() {
        let node = json!({
            "metadata": {"name": "node-1", "resourceVersion": "7", "labels": {"keep": "me"}},
            "spec": {"taints": [
                {"key": UNINITIALIZED_TAINT, "value": "true", "effect": "NoSchedule"},
                {"key": "dedicated", "value": "db", "effect": "NoSchedule"}
            ]}
        });
        let done = initialised(&node, &instance_metadata(&server()));
        assert_eq!(done["metadata"]["resourceVersion"], "7");
        assert_eq!(done["metadata"]["labels"]["keep"], "me");
        assert_eq!(
            done["metadata"]["labels"]["node.kubernetes.io/instance-type"],
            "plus-32-16"
        );
        assert_eq!(
            done["metadata"]["labels"]["failure-domain.beta.kubernetes.io/zone"],
            "rma1"
        );
        assert_eq!(
            done["metadata"]["labels"]["topology.kubernetes.io/region"],
            "rma"
        );
        assert_eq!(
            done["spec"]["providerID"],
            "cloudscale://6f5d4a1e-4f3b-4c2a-9d1e-1a2b3c4d5e6f"
        );
        assert_eq!(done["spec"]["taints"].as_array().unwrap().len(), 1);
        assert_eq!(done["spec"]["taints"][0]["key"], "dedicated");
    }

    #[test]
    fn an_existing_provider_id_is_kept() {
        let node = json!({"metadata": {"name": "n"}, "spec": {"providerID": "cloudscale://x"}});
        let done = initialised(&node, &instance_metadata(&server()));
        assert_eq!(done["spec"]["providerID"], "cloudscale://x");
    }
}
