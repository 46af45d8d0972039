//! The objects as the APIs answer them (camelCase, every field the SDKs require present, absent
//! optional values as null), rendered from the world at the moment of the request so that
//! running transitions show their current state.

use std::collections::BTreeSet;

use jiff::Timestamp;
use serde_json::{json, Value};

use super::world::{IpBlock, PublicNetwork, Server, Tag, TagRef, World};

/// How a public network is named in `assignedResourceType` (the CCM also accepts
/// `PUBLIC_NETWORK`; research §2 leaves open which one production sends).
pub const PUBLIC_NETWORK_RESOURCE_TYPE: &str = "public network";

pub fn ip_block(world: &World, block: &IpBlock, now: Timestamp) -> Value {
    let network = block.network_at(now);
    json!({
        "id": block.id,
        "location": block.location,
        "cidrBlockSize": format!("/{}", block.cidr.prefix_len()),
        "cidr": block.cidr.to_string(),
        "ipVersion": "V4",
        "status": block.status_at(now).as_str(),
        "assignedResourceId": network,
        "assignedResourceType": network.map(|_| PUBLIC_NETWORK_RESOURCE_TYPE),
        "description": block.description,
        "tags": tag_assignments(world, &block.tags),
        "isSystemManaged": false,
        "isBringYourOwn": false,
        "createdOn": block.created_on.to_string(),
    })
}

/// `TagAssignment`s: `id`, `name` and `isBillingTag` always (the SDK refuses them missing).
pub fn tag_assignments(world: &World, tags: &[TagRef]) -> Vec<Value> {
    tags.iter()
        .filter_map(|assigned| {
            let tag = world.tag(&assigned.tag_id)?;
            Some(json!({
                "id": tag.id,
                "name": tag.name,
                "value": assigned.value,
                "isBillingTag": tag.is_billing_tag,
                "createdBy": tag.created_by,
            }))
        })
        .collect()
}

/// A tag with its values in use and the resources carrying it, derived from the world.
pub fn tag(world: &World, tag: &Tag) -> Value {
    let blocks = world
        .ip_blocks
        .iter()
        .map(|b| (format!("/ips/ip-blocks/{}", b.id), &b.tags));
    let servers = world
        .servers
        .iter()
        .map(|s| (format!("/bmc/servers/{}", s.id), &s.tags));
    let mut values = BTreeSet::new();
    let mut assignments = Vec::new();
    for (resource, tags) in blocks.chain(servers) {
        for assigned in tags.iter().filter(|a| a.tag_id == tag.id) {
            values.extend(assigned.value.clone());
            assignments.push(json!({ "resourceName": resource, "value": assigned.value }));
        }
    }
    json!({
        "id": tag.id,
        "name": tag.name,
        "values": values,
        "description": tag.description,
        "isBillingTag": tag.is_billing_tag,
        "resourceAssignments": assignments,
        "createdBy": tag.created_by,
    })
}

pub fn public_network(world: &World, network: &PublicNetwork, now: Timestamp) -> Value {
    let memberships: Vec<Value> = network
        .memberships
        .iter()
        .map(|m| json!({ "resourceId": m.resource_id, "resourceType": m.resource_type, "ips": m.ips }))
        .collect();
    let blocks: Vec<Value> = blocks_on(world, &network.id, now)
        .map(|b| network_block(network, b))
        .collect();
    json!({
        "id": network.id,
        "vlanId": network.vlan_id,
        "memberships": memberships,
        "name": network.name,
        "location": network.location,
        "description": network.description,
        "status": if is_busy(world, &network.id, now) { "BUSY" } else { "READY" },
        "createdOn": network.created_on.to_string(),
        "ipBlocks": blocks,
        "raEnabled": network.ra_enabled,
    })
}

/// `PublicNetworkIpBlock`: the block as a network lists it, and as an attach answers.
pub fn network_block(network: &PublicNetwork, block: &IpBlock) -> Value {
    let used = network
        .memberships
        .iter()
        .flat_map(|m| &m.ips)
        .filter(|ip| block.cidr.contains(*ip))
        .count();
    json!({ "id": block.id, "cidr": block.cidr.to_string(), "usedIpsCount": used.to_string() })
}

/// The blocks attached to a network at `now` (assigning and unassigning ones included).
pub fn blocks_on<'a>(
    world: &'a World,
    network_id: &'a str,
    now: Timestamp,
) -> impl Iterator<Item = &'a IpBlock> + 'a {
    world
        .ip_blocks
        .iter()
        .filter(move |b| b.network_at(now) == Some(network_id))
}

/// A network is BUSY while an attach or detach on it runs.
pub fn is_busy(world: &World, network_id: &str, now: Timestamp) -> bool {
    blocks_on(world, network_id, now).any(|b| b.is_busy_at(now))
}

pub fn server(world: &World, server: &Server) -> Value {
    let network_type = match (server.public_ips.is_empty(), server.private_ips.is_empty()) {
        (false, false) => "PUBLIC_AND_PRIVATE",
        (true, false) => "PRIVATE_ONLY",
        (false, true) => "PUBLIC_ONLY",
        (true, true) => "NONE",
    };
    json!({
        "id": server.id,
        "status": server.status,
        "hostname": server.hostname,
        "description": server.description,
        "os": server.os,
        "type": server.server_type,
        "location": server.location,
        "cpu": "Intel Xeon E-2278G",
        "cpuCount": 1,
        "coresPerCpu": 8,
        "cpuFrequency": 3.4,
        "ram": "32GB",
        "storage": "2x 960GB NVMe",
        "privateIpAddresses": server.private_ips,
        "publicIpAddresses": server.public_ips,
        "reservationId": null,
        "pricingModel": "HOURLY",
        "networkType": network_type,
        "clusterId": null,
        "tags": tag_assignments(world, &server.tags),
        "provisionedOn": server.provisioned_on.to_string(),
        "osConfiguration": null,
        "networkConfiguration": server_networks(world, server),
        "storageConfiguration": { "rootPartition": { "raid": "NO_RAID", "size": -1 } },
    })
}

/// The server's `networkConfiguration`: the public networks it is a member of, with the
/// addresses it uses there.
fn server_networks(world: &World, server: &Server) -> Value {
    let public: Vec<Value> = world
        .public_networks
        .iter()
        .flat_map(|n| n.memberships.iter().map(move |m| (n, m)))
        .filter(|(_, m)| m.resource_id == server.id)
        .map(|(n, m)| json!({ "id": n.id, "ips": m.ips, "statusDescription": "assigned" }))
        .collect();
    json!({
        "gatewayAddress": null,
        "privateNetworkConfiguration": { "privateNetworks": [] },
        "ipBlocksConfiguration": { "ipBlocks": [] },
        "publicNetworkConfiguration": { "publicNetworks": public },
    })
}
