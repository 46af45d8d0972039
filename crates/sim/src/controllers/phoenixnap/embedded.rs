//! The PhoenixNAP side of the embedded cluster: the BMC servers `node-1`..`node-3` behind its
//! nodes, created when the account lacks them, as kubelets with `--cloud-provider=external`
//! register them (uninitialised, with the server's private address).

use std::io;

use serde_json::json;

use super::client::{Credentials, PnapApi};
use super::instances::Server;
use super::PnapEndpoint;
use crate::kubernetes::FreshNode;

pub const NODE_NAMES: [&str; 3] = ["node-1", "node-2", "node-3"];
const SERVER_TYPE: &str = "s1.c1.small";
const SERVER_OS: &str = "ubuntu/jammy";
/// Where the servers go when the CCM has no location (the load balancer off).
const DEFAULT_LOCATION: &str = "PHX";

pub async fn cloud_backed_nodes(endpoint: &PnapEndpoint) -> io::Result<Vec<FreshNode>> {
    let api = PnapApi::new(
        &endpoint.base_url,
        &Credentials {
            client_id: endpoint.client_id.clone(),
            client_secret: endpoint.client_secret.clone(),
        },
    );
    let existing = api.bmc.list("/servers").await.map_err(io::Error::other)?;
    let location = match endpoint.location.as_str() {
        "" => DEFAULT_LOCATION,
        location => location,
    };
    let mut nodes = Vec::new();
    for name in NODE_NAMES {
        let raw = match existing.iter().find(|s| s["hostname"] == name) {
            Some(server) => server.clone(),
            None => api
                .bmc
                .post("/servers", &server_request(name, location))
                .await
                .map_err(io::Error::other)?,
        };
        let server = Server::from_json(&raw).unwrap_or_default();
        nodes.push(FreshNode {
            name: name.to_owned(),
            internal_ip: server
                .private_ip_addresses
                .first()
                .cloned()
                .unwrap_or_default(),
            uninitialized: true,
            provider_id: None,
        });
    }
    Ok(nodes)
}

/// `ServerCreate`'s required fields (hostname, os, type, location), public and private.
fn server_request(name: &str, location: &str) -> serde_json::Value {
    json!({
        "hostname": name,
        "os": SERVER_OS,
        "type": SERVER_TYPE,
        "location": location,
        "networkType": "PUBLIC_AND_PRIVATE",
    })
}
