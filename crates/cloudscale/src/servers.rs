//! The account's servers: what the cloudscale CCM maps nodes to. A Service-bound load
//! balancer's members are its nodes' servers' private addresses, and node-metadata drift
//! compares each Node with what the CCM would derive from its server. Read with one
//! `GET /v1/servers` per refresh, and only when something needs them.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};

use super::api::SlugRef;
use super::client::{CloudscaleClient, Error};
use skyplan_core::provider::ProviderError;
use skyplan_kubernetes::instances::{
    CloudInstance, CloudInstances, InstanceAddress, InstanceStatus,
};

/// The providerID scheme of the cloudscale CCM (`cloud.go`: ProviderName).
pub const SCHEME: &str = "cloudscale";

#[derive(Debug, Clone, Deserialize)]
struct ApiServer {
    uuid: String,
    name: String,
    status: String,
    flavor: SlugRef,
    zone: SlugRef,
    #[serde(default)]
    interfaces: Vec<ApiInterface>,
}

#[derive(Debug, Clone, Deserialize)]
struct ApiInterface {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    addresses: Vec<ApiAddress>,
}

#[derive(Debug, Clone, Deserialize)]
struct ApiAddress {
    address: String,
    subnet: Option<ApiSubnetRef>,
}

#[derive(Debug, Clone, Deserialize)]
struct ApiSubnetRef {
    uuid: String,
}

/// One address of a server's interface, with its subnet UUID when it has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerAddress {
    pub address: String,
    pub subnet: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInterface {
    /// `public` or `private`.
    pub kind: String,
    pub addresses: Vec<ServerAddress>,
}

/// A server as the CCM sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerObject {
    pub uuid: String,
    pub name: String,
    pub status: String,
    pub flavor: String,
    pub zone: String,
    pub interfaces: Vec<ServerInterface>,
}

impl From<ApiServer> for ServerObject {
    fn from(server: ApiServer) -> Self {
        ServerObject {
            uuid: server.uuid,
            name: server.name,
            status: server.status,
            flavor: server.flavor.slug,
            zone: server.zone.slug,
            interfaces: server
                .interfaces
                .into_iter()
                .map(|i| ServerInterface {
                    kind: i.kind,
                    addresses: i
                        .addresses
                        .into_iter()
                        .map(|a| ServerAddress {
                            address: a.address,
                            subnet: a.subnet.map(|s| s.uuid),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

impl ServerObject {
    /// `cloudscale://<lower-case uuid>` (the CCM's `provider_id.go`).
    pub fn provider_id(&self) -> String {
        format!("{SCHEME}://{}", self.uuid.to_lowercase())
    }

    /// What the CCM's InstanceMetadata derives from the server (`instances.go`,
    /// `server_mapper.go`): flavor as instance type, zone, the zone without its trailing digits
    /// as region, and the addresses Hostname first, then per interface in API order public →
    /// ExternalIP, anything else → InternalIP.
    pub fn instance(&self) -> CloudInstance {
        let mut addresses = vec![InstanceAddress {
            kind: "Hostname".into(),
            address: self.name.clone(),
        }];
        for interface in &self.interfaces {
            let kind = match interface.kind.as_str() {
                "public" => "ExternalIP",
                _ => "InternalIP",
            };
            addresses.extend(interface.addresses.iter().map(|a| InstanceAddress {
                kind: kind.into(),
                address: a.address.clone(),
            }));
        }
        CloudInstance {
            name: self.name.clone(),
            provider_id: self.provider_id(),
            instance_type: Some(self.flavor.clone()),
            zone: Some(self.zone.clone()),
            region: Some(region_of(&self.zone)),
            addresses,
            status: match self.status.as_str() {
                "running" => InstanceStatus::Running,
                "stopped" => InstanceStatus::Stopped,
                _ => InstanceStatus::Other,
            },
        }
    }
}

/// `rma1` → `rma`: the CCM trims the zone's trailing digits.
pub fn region_of(zone: &str) -> String {
    zone.trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

pub async fn read_servers(client: &CloudscaleClient) -> Result<Vec<ServerObject>, Error> {
    let servers: Vec<ApiServer> = client.get("/servers").await?;
    Ok(servers.into_iter().map(ServerObject::from).collect())
}

/// The servers read in this run: refresh fills it when a bound load balancer needs them, and
/// node-metadata drift reads them through the same cache, so a run lists servers once.
#[derive(Default)]
pub struct ServerCache {
    servers: Mutex<Option<Arc<Vec<ServerObject>>>>,
}

impl ServerCache {
    pub fn get(&self) -> Option<Arc<Vec<ServerObject>>> {
        self.servers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set(&self, servers: Vec<ServerObject>) -> Arc<Vec<ServerObject>> {
        let servers = Arc::new(servers);
        *self.servers.lock().unwrap_or_else(|p| p.into_inner()) = Some(servers.clone());
        servers
    }

    /// The cached servers, or one list read now.
    pub async fn get_or_read(
        &self,
        client: &CloudscaleClient,
    ) -> Result<Arc<Vec<ServerObject>>, Error> {
        if let Some(servers) = self.get() {
            return Ok(servers);
        }
        Ok(self.set(read_servers(client).await?))
    }
}

/// The account's servers as node-metadata drift asks for them.
pub struct CloudscaleInstances {
    pub client: Arc<CloudscaleClient>,
    pub cache: Arc<ServerCache>,
}

impl CloudInstances for CloudscaleInstances {
    fn scheme(&self) -> &'static str {
        SCHEME
    }

    fn instances(&self) -> BoxFuture<'_, Result<Vec<CloudInstance>, ProviderError>> {
        async move {
            let servers = self.cache.get_or_read(&self.client).await.map_err(|e| {
                let message = format!("listing servers: {e}");
                ProviderError::new(SCHEME, message)
                    .kind(e.kind())
                    .caused_by(e)
            })?;
            Ok(servers.iter().map(ServerObject::instance).collect())
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ServerObject {
        let api: ApiServer = serde_json::from_value(serde_json::json!({
            "uuid": "6C2E3AE0-0000-4000-8000-000000000001",
            "name": "node-1",
            "status": "running",
            "flavor": {"slug": "flex-4-2", "name": "Flex-4-2"},
            "zone": {"slug": "rma1"},
            "interfaces": [
                {"type": "public", "addresses": [
                    {"version": 4, "address": "5.102.145.10", "subnet": {"uuid": "p", "cidr": "5.102.145.0/24", "href": "h"}},
                    {"version": 6, "address": "2a06:c01::10", "subnet": {"uuid": "p6", "cidr": "2a06:c01::/64", "href": "h"}}
                ]},
                {"type": "private", "addresses": [
                    {"version": 4, "address": "10.0.0.11", "subnet": {"uuid": "s", "cidr": "10.0.0.0/24", "href": "h"}}
                ]}
            ]
        }))
        .unwrap();
        api.into()
    }

    #[test]
    fn the_instance_is_what_the_ccm_derives_from_the_server() {
        let instance = server().instance();
        assert_eq!(
            instance.provider_id,
            "cloudscale://6c2e3ae0-0000-4000-8000-000000000001"
        );
        assert_eq!(instance.instance_type.as_deref(), Some("flex-4-2"));
        assert_eq!(instance.zone.as_deref(), Some("rma1"));
        assert_eq!(instance.region.as_deref(), Some("rma"));
        let addresses: Vec<(&str, &str)> = instance
            .addresses
            .iter()
            .map(|a| (a.kind.as_str(), a.address.as_str()))
            .collect();
        assert_eq!(
            addresses,
            [
                ("Hostname", "node-1"),
                ("ExternalIP", "5.102.145.10"),
                ("ExternalIP", "2a06:c01::10"),
                ("InternalIP", "10.0.0.11"),
            ]
        );
        assert_eq!(instance.status, InstanceStatus::Running);
    }
}
