//! The CCM's InstancesV2 (`instances.go`, research §5): node → server by providerID
//! (`phoenixnap://<id>` or a bare id; 403 and 404 mean gone) or, for InstanceMetadata only,
//! by hostname == node name; the metadata the cloud-node controller writes from it.

use serde::Deserialize;
use serde_json::{json, Value};

use super::super::nodes::Metadata;
use super::super::objects::Node;
use super::client::PnapApi;

pub const PROVIDER_NAME: &str = "phoenixnap";
/// `InstanceStatusPoweredOff`: the only status InstanceShutdown looks at.
pub const POWERED_OFF: &str = "powered-off";

/// A BMC server as `GET /bmc/v1/servers` renders it (the fields the CCM reads).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Server {
    pub id: String,
    pub hostname: String,
    pub status: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub location: String,
    pub public_ip_addresses: Vec<String>,
    pub private_ip_addresses: Vec<String>,
}

impl Server {
    pub fn from_json(value: &Value) -> Option<Server> {
        serde_json::from_value(value.clone()).ok()
    }
}

/// A lookup that failed: `NotFound` is `cloudprovider.InstanceNotFound`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    NotFound,
    Failed(String),
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupError::NotFound => f.write_str("instance not found"),
            LookupError::Failed(message) => f.write_str(message),
        }
    }
}

/// `serverIDFromProviderID`: `phoenixnap://<id>` or `<id>`; another scheme is an error.
pub fn server_id(provider_id: &str) -> Result<String, String> {
    if provider_id.is_empty() {
        return Err("providerID cannot be empty string".into());
    }
    let parts: Vec<&str> = provider_id.split("://").collect();
    match parts.as_slice() {
        [id] => Ok((*id).to_owned()),
        [scheme, id] if *scheme == PROVIDER_NAME => Ok((*id).to_owned()),
        [scheme, _] => Err(format!(
            "provider name from providerID should be {PROVIDER_NAME}, was {scheme}"
        )),
        _ => Err(format!(
            "unexpected providerID format: {provider_id}, format should be: 'server-id' or \
             'phoenixnap://server-id'"
        )),
    }
}

/// `serverFromProviderID`: InstanceExists and InstanceShutdown use only this, so a node
/// without a providerID is an error there.
pub async fn server_by_provider_id(api: &PnapApi, node: &Node) -> Result<Server, LookupError> {
    let provider_id = node.spec.provider_id.as_deref().unwrap_or("");
    let id = server_id(provider_id).map_err(LookupError::Failed)?;
    match api.bmc.get(&format!("/servers/{id}")).await {
        Ok(raw) => Server::from_json(&raw)
            .ok_or_else(|| LookupError::Failed(format!("undecodable server {id}"))),
        // Commit d84a2c5: a deleted server answers 403.
        Err(e) if matches!(e.status, Some(403 | 404)) => Err(LookupError::NotFound),
        Err(e) => Err(LookupError::Failed(e.to_string())),
    }
}

/// `serverByNode`: by providerID when the node has one, else the server whose hostname is the
/// node's name.
pub async fn server_by_node(api: &PnapApi, node: &Node) -> Result<Server, LookupError> {
    if node.provider_id().is_some() {
        return server_by_provider_id(api, node).await;
    }
    let name = &node.metadata.name;
    let servers = api
        .bmc
        .list("/servers")
        .await
        .map_err(|e| LookupError::Failed(e.to_string()))?;
    servers
        .iter()
        .filter_map(Server::from_json)
        .find(|s| s.hostname == *name)
        .ok_or(LookupError::NotFound)
}

/// `InstanceMetadata`: no zone (PhoenixNAP has locations only); an error when the server
/// lacks a private or a public address.
pub fn instance_metadata(server: &Server) -> Result<Metadata, String> {
    Ok(Metadata {
        provider_id: format!("{PROVIDER_NAME}://{}", server.id),
        instance_type: server.kind.clone(),
        zone: String::new(),
        region: server.location.clone(),
        addresses: node_addresses(server)?,
    })
}

/// Hostname, then each public address as ExternalIP, then each private one as InternalIP.
pub fn node_addresses(server: &Server) -> Result<Vec<Value>, String> {
    if server.private_ip_addresses.is_empty() {
        return Err("could not get at least one private ip".into());
    }
    if server.public_ip_addresses.is_empty() {
        return Err("could not get at least one public ip".into());
    }
    let mut addresses = vec![json!({"type": "Hostname", "address": server.hostname})];
    for address in &server.public_ip_addresses {
        addresses.push(json!({"type": "ExternalIP", "address": address}));
    }
    for address in &server.private_ip_addresses {
        addresses.push(json!({"type": "InternalIP", "address": address}));
    }
    Ok(addresses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server {
            id: "5ff5cc9bc1acf144d9106233".into(),
            hostname: "node-1".into(),
            status: "powered-on".into(),
            kind: "s1.c1.small".into(),
            location: "PHX".into(),
            public_ip_addresses: vec!["198.15.65.2".into()],
            private_ip_addresses: vec!["10.0.0.11".into(), "10.0.0.12".into()],
        }
    }

    #[test]
    fn provider_ids_are_ours_or_bare() {
        assert_eq!(server_id("phoenixnap://abc").unwrap(), "abc");
        assert_eq!(server_id("abc").unwrap(), "abc");
        assert!(server_id("cloudscale://abc")
            .unwrap_err()
            .contains("should be phoenixnap, was cloudscale"));
        assert!(server_id("a://b://c").is_err());
        assert!(server_id("").is_err());
    }

    #[test]
    fn metadata_has_type_and_location_but_no_zone() {
        let metadata = instance_metadata(&server()).unwrap();
        assert_eq!(
            metadata.provider_id,
            "phoenixnap://5ff5cc9bc1acf144d9106233"
        );
        assert_eq!(metadata.instance_type, "s1.c1.small");
        assert_eq!(metadata.region, "PHX");
        assert_eq!(metadata.zone, "");
        let addresses: Vec<String> = metadata
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
            addresses,
            [
                "Hostname=node-1",
                "ExternalIP=198.15.65.2",
                "InternalIP=10.0.0.11",
                "InternalIP=10.0.0.12"
            ]
        );
    }

    #[test]
    fn a_server_without_a_public_or_private_address_is_refused() {
        let mut private_only = server();
        private_only.public_ip_addresses.clear();
        assert_eq!(
            instance_metadata(&private_only).unwrap_err(),
            "could not get at least one public ip"
        );
        let mut none = server();
        none.private_ip_addresses.clear();
        none.public_ip_addresses.clear();
        assert_eq!(
            instance_metadata(&none).unwrap_err(),
            "could not get at least one private ip"
        );
    }
}
