//! A server joining and leaving a public network (BMC API):
//! `POST /servers/{id}/network-configuration/public-network-configuration/public-networks
//! {"id", "ips"}` (202 `ServerPublicNetwork`) and `DELETE …/public-networks/{networkId}`
//! (202, a JSON string). kube-vip needs the nodes on the network whose blocks it announces.
//! Simplification: the membership takes effect at once (`statusDescription: assigned`); the
//! real one is asynchronous (research §3). The addresses must lie in a block attached to the
//! network and be free there, unless `force=true`.

use std::net::Ipv4Addr;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::networks::find as find_network;
use super::servers::find as find_server;
use crate::phoenixnap::api::{parse_body, ApiError, ApiQuery, ApiResult};
use crate::phoenixnap::render::blocks_on;
use crate::phoenixnap::state::Sim;
use crate::phoenixnap::world::{Membership, World};

/// [UNVERIFIED] the spec gives no example of this answer's text.
const LEAVING: &str = "The server is being removed from the Public Network.";

#[derive(Debug, Deserialize)]
struct JoinRequest {
    id: String,
    #[serde(default)]
    ips: Vec<Ipv4Addr>,
}

#[derive(Debug, Deserialize)]
pub struct ForceQuery {
    #[serde(default)]
    force: bool,
}

pub async fn join(
    State(sim): State<Sim>,
    Path(server_id): Path<String>,
    ApiQuery(query): ApiQuery<ForceQuery>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: JoinRequest = parse_body(&body)?;
    sim.write(|world, ctx| {
        let server = find_server(world, &server_id)?;
        let network = find_network(world, &request.id)?;
        if server.location != network.location {
            return Err(ApiError::bad_request(format!(
                "Server {server_id} is in {}, Public Network {} in {}.",
                server.location, network.id, network.location
            )));
        }
        if network
            .memberships
            .iter()
            .any(|m| m.resource_id == server_id)
        {
            return Err(ApiError::conflict(format!(
                "Server {server_id} is already a member of Public Network {}.",
                network.id
            )));
        }
        if !query.force {
            check_addresses(world, &request.id, &request.ips, ctx.now)?;
        }
        let vlan_id = network.vlan_id;
        let network = world
            .public_networks
            .iter_mut()
            .find(|n| n.id == request.id)
            .expect("found above");
        network.memberships.push(Membership {
            resource_id: server_id,
            resource_type: "server".into(),
            ips: request.ips.clone(),
        });
        let answer = json!({
            "id": request.id,
            "ips": request.ips,
            "statusDescription": "assigned",
            "vlanId": vlan_id,
        });
        Ok((StatusCode::ACCEPTED, Json(answer)))
    })
}

/// At least one address, each in a block attached to the network and used by no member.
fn check_addresses(
    world: &World,
    network_id: &str,
    ips: &[Ipv4Addr],
    now: jiff::Timestamp,
) -> ApiResult<()> {
    if ips.is_empty() {
        return Err(ApiError::invalid(vec![
            "ips: at least 1 IP address is required".into(),
        ]));
    }
    let network = find_network(world, network_id)?;
    for ip in ips {
        if !blocks_on(world, network_id, now).any(|b| b.cidr.contains(ip)) {
            return Err(ApiError::bad_request(format!(
                "IP {ip} is not in an IP Block of Public Network {network_id}."
            )));
        }
        if network.memberships.iter().any(|m| m.ips.contains(ip)) {
            return Err(ApiError::conflict(format!(
                "IP {ip} is already configured on another resource in the network."
            )));
        }
    }
    Ok(())
}

pub async fn leave(
    State(sim): State<Sim>,
    Path((server_id, network_id)): Path<(String, String)>,
) -> ApiResult<(StatusCode, Json<&'static str>)> {
    sim.write(|world, _| {
        find_server(world, &server_id)?;
        find_network(world, &network_id)?;
        let network = world
            .public_networks
            .iter_mut()
            .find(|n| n.id == network_id)
            .expect("found above");
        let before = network.memberships.len();
        network.memberships.retain(|m| m.resource_id != server_id);
        if network.memberships.len() == before {
            return Err(ApiError::conflict(format!(
                "Server {server_id} is not a member of Public Network {network_id}."
            )));
        }
        Ok((StatusCode::ACCEPTED, Json(LEAVING)))
    })
}
