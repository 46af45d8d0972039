//! `serverMapper` (server_mapper.go) and the provider ID (provider_id.go): which cloudscale
//! server a node is.

use super::http::Cloud;
use super::objects::{Node, Server};

pub const PROVIDER_PREFIX: &str = "cloudscale://";

/// The server uuid of `cloudscale://<uuid>`: split on `://`, spaces trimmed, the provider
/// must be `cloudscale` and the rest a uuid.
pub fn parse_provider_id(provider_id: &str) -> Result<String, String> {
    let (provider, id) = provider_id
        .split_once("://")
        .ok_or_else(|| format!("invalid provider ID {provider_id:?}"))?;
    if provider.trim() != "cloudscale" {
        return Err(format!(
            "provider ID {provider_id:?} is not a cloudscale one"
        ));
    }
    let id = id.trim();
    uuid::Uuid::parse_str(id)
        .map(|uuid| uuid.to_string())
        .map_err(|_| format!("invalid server uuid in provider ID {provider_id:?}"))
}

pub fn provider_id(server: &Server) -> String {
    format!("{PROVIDER_PREFIX}{}", server.uuid.to_lowercase())
}

/// By provider ID (a 404 is no server), else by name among all servers (must be unique).
pub async fn server_of(cloud: &Cloud, node: &Node) -> Result<Option<Server>, String> {
    if let Some(provider_id) = node.provider_id() {
        let uuid = parse_provider_id(provider_id)?;
        return match cloud.get(&format!("servers/{uuid}")).await {
            Ok(server) => Ok(Server::from_json(&server)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.to_string()),
        };
    }
    let servers = cloud.list("servers").await.map_err(|e| e.to_string())?;
    let mut named: Vec<Server> = servers
        .iter()
        .filter(|s| s["name"].as_str() == Some(node.metadata.name.as_str()))
        .filter_map(Server::from_json)
        .collect();
    match named.len() {
        0 => Ok(None),
        1 => Ok(named.pop()),
        _ => Err(format!(
            "found more than one server named {}",
            node.metadata.name
        )),
    }
}

/// `mapNodes(...).All()`: exactly one server per node, or the whole mapping fails.
pub async fn servers_of(cloud: &Cloud, nodes: &[Node]) -> Result<Vec<Server>, String> {
    let mut servers = Vec::with_capacity(nodes.len());
    for node in nodes {
        match server_of(cloud, node).await? {
            Some(server) => servers.push(server),
            None => {
                return Err(format!(
                    "unable to find server for node {}",
                    node.metadata.name
                ))
            }
        }
    }
    Ok(servers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_ids_parse_as_the_ccm_parses_them() {
        let uuid = "6f5d4a1e-4f3b-4c2a-9d1e-1a2b3c4d5e6f";
        assert_eq!(
            parse_provider_id(&format!("cloudscale://{uuid}")).unwrap(),
            uuid
        );
        assert_eq!(
            parse_provider_id(&format!("cloudscale:// {uuid} ")).unwrap(),
            uuid
        );
        assert!(parse_provider_id(&format!("aws://{uuid}")).is_err());
        assert!(parse_provider_id("cloudscale://node-1").is_err());
        assert!(parse_provider_id(uuid).is_err());
    }
}
