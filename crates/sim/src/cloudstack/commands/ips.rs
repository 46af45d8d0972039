//! Public IP addresses: associate one with a network (async; the address is `Allocating`
//! until the job ends), release it, list them (only allocated ones unless
//! `allocatedonly=false`).

use std::net::Ipv4Addr;

use serde_json::{json, Value};

use super::{matches_tags, new_id, tags_of, zone_name, Reply};
use crate::cloudstack::api::{cs_time, list as page, ApiError, ApiResult};
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{PublicIp, World};

const ASSOCIATE_CMD: &str = "org.apache.cloudstack.api.command.user.address.AssociateIPAddrCmd";
const DISASSOCIATE_CMD: &str =
    "org.apache.cloudstack.api.command.user.address.DisassociateIPAddrCmd";

pub fn render(world: &World, ip: &PublicIp) -> Value {
    let mut body = json!({
        "id": ip.id, "ipaddress": ip.ipaddress, "state": ip.state,
        "issourcenat": ip.issourcenat, "isstaticnat": false, "issystem": false,
        "zoneid": ip.zoneid, "zonename": zone_name(world, &ip.zoneid),
        "forvirtualnetwork": true, "tags": tags_of(world, &ip.id),
    });
    if let Some(network) = &ip.associatednetworkid {
        body["associatednetworkid"] = network.clone().into();
        body["associatednetworkname"] = world.network(network).map(|n| n.name.clone()).into();
        // The network the address's rules go to, as the server reports it.
        body["networkid"] = network.clone().into();
    }
    if let Some(at) = ip.allocated {
        body["allocated"] = cs_time(at).into();
    }
    body
}

pub fn associate(world: &mut World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let network = p.optional_id("networkid", |id| world.network(id).is_some())?;
    let Some(network) = network else {
        return Err(ApiError::param(
            "Unable to figure out the network to associate the ip with",
        ));
    };
    let zone = world.network(&network).expect("checked").zoneid.clone();
    let index = match p.text("ipaddress") {
        Some(wanted) => {
            let found = world
                .public_ips
                .iter()
                .position(|ip| ip.ipaddress == wanted);
            match found {
                Some(i) if world.public_ips[i].state == "Free" => i,
                Some(_) => {
                    return Err(ApiError::param(format!(
                        "IP address {wanted} is already in use"
                    )))
                }
                None => return Err(p.invalid("ipaddress", wanted)),
            }
        }
        None => take_free(world, &zone, cx),
    };
    let ip = &mut world.public_ips[index];
    ip.state = "Allocating".into();
    ip.associatednetworkid = Some(network);
    ip.allocated = Some(cx.now);
    let id = ip.id.clone();
    Ok(Reply::Job(Start {
        cmd: ASSOCIATE_CMD,
        instance_type: Some("IpAddress"),
        instance_id: Some(id.clone()),
        id: Some(id.clone()),
        action: Action::IpAssociate { id },
    }))
}

/// The first free address, or a new one past the pool when every one is taken.
pub fn take_free(world: &mut World, zone: &str, cx: &Ctx) -> usize {
    if let Some(index) = world.public_ips.iter().position(|ip| ip.state == "Free") {
        return index;
    }
    // Skip network (.0) and broadcast (.255) addresses of each /24 on the way.
    let mut address = Ipv4Addr::from(world.next_public_ip);
    while matches!(address.octets()[3], 0 | 255) {
        world.next_public_ip += 1;
        address = Ipv4Addr::from(world.next_public_ip);
    }
    world.next_public_ip += 1;
    world.public_ips.push(PublicIp {
        id: new_id(),
        ipaddress: address.to_string(),
        state: "Free".into(),
        associatednetworkid: None,
        issourcenat: false,
        zoneid: zone.to_owned(),
        allocated: Some(cx.now),
    });
    world.public_ips.len() - 1
}

pub fn finish_associate(world: &mut World, id: &str) -> ApiResult<Value> {
    let ip = world.public_ips.iter_mut().find(|ip| ip.id == id);
    let ip = ip.ok_or_else(|| ApiError::internal("The address was released meanwhile"))?;
    ip.state = "Allocated".into();
    let ip = world.public_ip(id).expect("found above");
    Ok(json!({ "ipaddress": render(world, ip) }))
}

pub fn abandon_associate(world: &mut World, id: &str) {
    if let Some(ip) = world.public_ips.iter_mut().find(|ip| ip.id == id) {
        release(ip);
    }
}

fn release(ip: &mut PublicIp) {
    ip.state = "Free".into();
    ip.associatednetworkid = None;
    ip.allocated = None;
}

pub fn disassociate(world: &mut World, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| {
        world.public_ip(id).is_some_and(|ip| ip.state != "Free")
    })?;
    let ip = world.public_ip(&id).expect("checked");
    let refusal = if ip.issourcenat {
        Some("ip address is used for source nat purposes and can not be disassociated.")
    } else if has_rules(world, &id) {
        // Sim choice: the real server releases an address together with its rules; refusing
        // keeps a client from losing rules it still lists by accident.
        Some("Unable to release the IP address: it still has load balancing or firewall rules")
    } else {
        None
    };
    let action = match refusal {
        Some(text) => Action::fail(ApiError::param(text)),
        None => Action::IpDisassociate { id: id.clone() },
    };
    Ok(Reply::Job(Start {
        cmd: DISASSOCIATE_CMD,
        instance_type: Some("IpAddress"),
        instance_id: Some(id),
        id: None,
        action,
    }))
}

fn has_rules(world: &World, ip_id: &str) -> bool {
    world.lb_rules.iter().any(|r| r.publicipid == ip_id)
        || world.firewall_rules.iter().any(|r| r.ipaddressid == ip_id)
}

pub fn finish_disassociate(world: &mut World, id: &str) -> ApiResult<Value> {
    if let Some(ip) = world.public_ips.iter_mut().find(|ip| ip.id == id) {
        release(ip);
    }
    world.tags.retain(|t| t.resourceid != id);
    Ok(json!({ "success": true }))
}

pub fn list(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let address = p.text("ipaddress");
    let network = p.text("associatednetworkid").or(p.text("networkid"));
    let allocated_only = p.optional_bool("allocatedonly").unwrap_or(true);
    let source_nat = p.optional_bool("issourcenat");
    let zone = p.text("zoneid");
    let items = world
        .public_ips
        .iter()
        .filter(|ip| !allocated_only || ip.state != "Free")
        .filter(|ip| id.is_none_or(|id| ip.id == id))
        .filter(|ip| address.is_none_or(|a| ip.ipaddress == a))
        .filter(|ip| network.is_none_or(|n| ip.associatednetworkid.as_deref() == Some(n)))
        .filter(|ip| source_nat.is_none_or(|s| ip.issourcenat == s))
        .filter(|ip| zone.is_none_or(|z| ip.zoneid == z))
        .filter(|ip| matches_tags(world, p, &ip.id))
        .map(|ip| render(world, ip))
        .collect();
    Reply::read(page(p, "publicipaddress", items, cx.page_size)?)
}
