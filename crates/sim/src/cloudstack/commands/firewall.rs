//! Ingress firewall rules of public addresses (the CCM opens each LB port with one). The
//! cidrlist comes back comma-separated.

use serde_json::{json, Value};

use super::{new_id, tags_of, Reply};
use crate::cloudstack::api::{cs_time, list as page, ApiError, ApiResult};
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{FirewallRule, World};

const PROTOCOLS: [&str; 4] = ["tcp", "udp", "icmp", "all"];
const CREATE_CMD: &str = "org.apache.cloudstack.api.command.user.firewall.CreateFirewallRuleCmd";
const DELETE_CMD: &str = "org.apache.cloudstack.api.command.user.firewall.DeleteFirewallRuleCmd";

pub fn render(world: &World, rule: &FirewallRule) -> Value {
    let ip = world.public_ip(&rule.ipaddressid);
    let mut body = json!({
        "id": rule.id, "ipaddressid": rule.ipaddressid,
        "ipaddress": ip.map(|ip| ip.ipaddress.clone()),
        "networkid": ip.and_then(|ip| ip.associatednetworkid.clone()),
        "protocol": rule.protocol, "cidrlist": rule.cidrlist.join(","), "state": rule.state,
        "created": cs_time(rule.created), "tags": tags_of(world, &rule.id),
    });
    if let (Some(start), Some(end)) = (rule.startport, rule.endport) {
        body["startport"] = start.into();
        body["endport"] = end.into();
    }
    body
}

pub fn create(world: &mut World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let ip = p.id("ipaddressid", |id| {
        world.public_ip(id).is_some_and(|ip| ip.state != "Free")
    })?;
    let protocol = p.required("protocol")?.trim().to_lowercase();
    if !PROTOCOLS.contains(&protocol.as_str()) {
        return Err(ApiError::param(format!(
            "Invalid protocol [{protocol}]. Expected one of: [tcp,udp,icmp,all]"
        )));
    }
    let start = port(p, "startport")?;
    let end = port(p, "endport")?.or(start);
    if let (Some(s), Some(e)) = (start, end) {
        if s > e {
            return Err(ApiError::param("Start port can't be bigger than end port"));
        }
    }
    let cidrs = p
        .list("cidrlist")
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| vec!["0.0.0.0/0".into()]);
    if let Some(bad) = cidrs.iter().find(|c| c.parse::<ipnet::IpNet>().is_err()) {
        return Err(ApiError::param(format!("Invalid cidr {bad}")));
    }
    let clash = world.firewall_rules.iter().find(|r| {
        r.ipaddressid == ip
            && r.protocol == protocol
            && share_a_cidr(&r.cidrlist, &cidrs)
            && overlap(r, start, end)
    });
    if let Some(other) = clash {
        return Err(conflict(start, end, other));
    }
    let id = new_id();
    let db_id = world.next_db_id();
    world.firewall_rules.push(FirewallRule {
        id: id.clone(),
        db_id,
        related: None,
        ipaddressid: ip,
        protocol,
        startport: start,
        endport: end,
        cidrlist: cidrs,
        state: "Add".into(),
        created: cx.now,
    });
    Ok(Reply::Job(Start {
        cmd: CREATE_CMD,
        instance_type: Some("FirewallRule"),
        instance_id: Some(id.clone()),
        id: Some(id.clone()),
        action: Action::FirewallCreate { id },
    }))
}

/// Two firewall rules only conflict when they share a source CIDR (`detectRulesConflict`).
fn share_a_cidr(a: &[String], b: &[String]) -> bool {
    a.iter().any(|cidr| b.contains(cidr))
}

/// Port ranges overlap; rules without ports (icmp, all) never conflict on ports.
fn overlap(rule: &FirewallRule, start: Option<u16>, end: Option<u16>) -> bool {
    match (rule.startport, rule.endport, start, end) {
        (Some(s1), Some(e1), Some(s2), Some(e2)) => s1 <= e2 && s2 <= e1,
        _ => false,
    }
}

/// `detectRulesConflict` for two firewall rules with the same protocol and a common source. The
/// rule's rendering follows the LB rule's (`id`, `uuid`, `purpose`, `state`); its exact fields
/// are not verified.
fn conflict(start: Option<u16>, end: Option<u16>, other: &FirewallRule) -> ApiError {
    let text = |s: &str| Value::from(s).to_string();
    let range = |s: Option<u16>, e: Option<u16>| {
        format!("{}-{}", s.unwrap_or_default(), e.unwrap_or_default())
    };
    ApiError::conflict(format!(
        "The range specified, {}, conflicts with rule FirewallRule {{\"id\":{},\"uuid\":{},\
         \"purpose\":\"Firewall\",\"state\":{}}} which has {}",
        range(start, end),
        other.db_id,
        text(&other.id),
        text(&other.state),
        range(other.startport, other.endport)
    ))
}

fn port(p: &Params, name: &str) -> ApiResult<Option<u16>> {
    p.optional_int(name)?
        .map(|v| {
            u16::try_from(v)
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| ApiError::param(format!("Invalid port: {v}")))
        })
        .transpose()
}

pub fn finish_create(world: &mut World, id: &str) -> ApiResult<Value> {
    let rule = world.firewall_rules.iter_mut().find(|r| r.id == id);
    let rule = rule.ok_or_else(|| ApiError::internal("The rule was deleted meanwhile"))?;
    rule.state = "Active".into();
    let rule = world
        .firewall_rules
        .iter()
        .find(|r| r.id == id)
        .expect("found");
    Ok(json!({ "firewallrule": render(world, rule) }))
}

pub fn delete(world: &mut World, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.firewall_rules.iter().any(|r| r.id == id))?;
    Ok(Reply::Job(Start {
        cmd: DELETE_CMD,
        instance_type: Some("FirewallRule"),
        instance_id: Some(id.clone()),
        id: None,
        action: Action::FirewallDelete { id },
    }))
}

pub fn finish_delete(world: &mut World, id: &str) -> ApiResult<Value> {
    world.firewall_rules.retain(|r| r.id != id);
    world.tags.retain(|t| t.resourceid != id);
    Ok(json!({ "success": true }))
}

pub fn list(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let ip = p.text("ipaddressid");
    let network = p.text("networkid");
    let items = world
        .firewall_rules
        .iter()
        .filter(|r| id.is_none_or(|id| r.id == id))
        .filter(|r| ip.is_none_or(|ip| r.ipaddressid == ip))
        .filter(|r| {
            network.is_none_or(|n| {
                world
                    .public_ip(&r.ipaddressid)
                    .is_some_and(|ip| ip.associatednetworkid.as_deref() == Some(n))
            })
        })
        .map(|r| render(world, r))
        .collect();
    Reply::read(page(p, "firewallrule", items, cx.page_size)?)
}
