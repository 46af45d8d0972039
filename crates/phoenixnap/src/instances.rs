//! The servers as the PhoenixNAP CCM describes them to Kubernetes (`phoenixnap/instances.go`,
//! InstancesV2): providerID `phoenixnap://<id>`, instance type = the server's type, region = its
//! location and no zone, addresses Hostname, then ExternalIP per public and InternalIP per
//! private address; `powered-off` is shut down.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::api::Server;
use super::client::PnapClient;
use skyplan_core::provider::ProviderError;
use skyplan_kubernetes::instances::{
    CloudInstance, CloudInstances, InstanceAddress, InstanceStatus,
};

pub struct PnapInstances {
    client: Arc<PnapClient>,
}

impl PnapInstances {
    pub fn new(client: Arc<PnapClient>) -> Arc<Self> {
        Arc::new(PnapInstances { client })
    }
}

impl CloudInstances for PnapInstances {
    fn scheme(&self) -> &'static str {
        "phoenixnap"
    }

    fn instances(&self) -> BoxFuture<'_, Result<Vec<CloudInstance>, ProviderError>> {
        async move {
            let servers = self
                .client
                .servers()
                .await
                .map_err(|e| e.for_address("phoenixnap"))?;
            Ok(servers.iter().map(instance).collect())
        }
        .boxed()
    }
}

fn instance(server: &Server) -> CloudInstance {
    let address = |kind: &str, address: &String| InstanceAddress {
        kind: kind.into(),
        address: address.clone(),
    };
    let mut addresses = vec![address("Hostname", &server.hostname)];
    addresses.extend(
        server
            .public_ip_addresses
            .iter()
            .map(|a| address("ExternalIP", a)),
    );
    addresses.extend(
        server
            .private_ip_addresses
            .iter()
            .map(|a| address("InternalIP", a)),
    );
    CloudInstance {
        name: server.hostname.clone(),
        provider_id: format!("phoenixnap://{}", server.id),
        instance_type: Some(server.server_type.clone()).filter(|t| !t.is_empty()),
        zone: None,
        region: Some(server.location.clone()).filter(|l| !l.is_empty()),
        addresses,
        status: match server.status.as_str() {
            "powered-on" => InstanceStatus::Running,
            "powered-off" => InstanceStatus::Stopped,
            _ => InstanceStatus::Other,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_becomes_what_the_ccm_sets_on_its_node() {
        let server = Server {
            id: "5fa9".into(),
            hostname: "node-1".into(),
            status: "powered-off".into(),
            server_type: "s2.c1.medium".into(),
            location: "PHX".into(),
            public_ip_addresses: vec!["198.51.100.5".into()],
            private_ip_addresses: vec!["10.0.0.11".into()],
        };
        let instance = instance(&server);
        assert_eq!(instance.provider_id, "phoenixnap://5fa9");
        assert_eq!(instance.instance_type.as_deref(), Some("s2.c1.medium"));
        assert_eq!(instance.region.as_deref(), Some("PHX"));
        assert_eq!(instance.zone, None);
        assert_eq!(instance.status, InstanceStatus::Stopped);
        let kinds: Vec<&str> = instance.addresses.iter().map(|a| a.kind.as_str()).collect();
        assert_eq!(kinds, ["Hostname", "ExternalIP", "InternalIP"]);
    }
}
