//! Load-balancer rules (research §2): create validates synchronously (ports, the port-53 and
//! conflict checks, the virtual router's limits, cidrlist), then the rule sits in `Add` until
//! its job ends; update, delete, assign and remove are async. The stored cidrlist keeps the
//! server's separators: spaces after create, commas after update.

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{matches_keyword, matches_tags, new_id, tags_of, vms, zone_name, Reply};
use crate::cloudstack::api::{cs_time, list as page, ApiError, ApiResult};
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{FirewallRule, LbRule, World};

const ALGORITHMS: [&str; 3] = ["source", "roundrobin", "leastconn"];
/// `validateHAproxyLbProtocol`: what the virtual router's haproxy can balance.
const HAPROXY_PROTOCOLS: [&str; 3] = ["tcp", "tcp-proxy", "ssl"];
/// `network.loadbalancer.haproxy.stats.port`.
const HAPROXY_STATS_PORT: u16 = 8081;
const PROVIDER_REFUSAL: &str = "LB service provider cannot support this rule";
const PRE_418_CIDRLIST: &str = "Parameter cidrList is deprecated; if you need to open firewall \
     rule for the specific CIDR, please refer to createFirewallRule command";
const PORT_53: &str = "Error adding load balancer rule, cannot add port 53 with network service \
     offering having DNS service and Source NAT.";

/// The commands' Java classes, reported as their jobs' `cmd`.
const CREATE_CMD: &str =
    "org.apache.cloudstack.api.command.user.loadbalancer.CreateLoadBalancerRuleCmd";
const UPDATE_CMD: &str =
    "org.apache.cloudstack.api.command.user.loadbalancer.UpdateLoadBalancerRuleCmd";
const DELETE_CMD: &str =
    "org.apache.cloudstack.api.command.user.loadbalancer.DeleteLoadBalancerRuleCmd";
const ASSIGN_CMD: &str =
    "org.apache.cloudstack.api.command.user.loadbalancer.AssignToLoadBalancerRuleCmd";
const REMOVE_CMD: &str =
    "org.apache.cloudstack.api.command.user.loadbalancer.RemoveFromLoadBalancerRuleCmd";

pub fn render(world: &World, rule: &LbRule) -> Value {
    let ip = world.public_ip(&rule.publicipid);
    let zone = ip.map(|ip| ip.zoneid.clone()).unwrap_or_default();
    let mut body = json!({
        "id": rule.id, "name": rule.name, "publicipid": rule.publicipid,
        "publicip": ip.map(|ip| ip.ipaddress.clone()),
        // The server sends both ports as strings.
        "publicport": rule.publicport.to_string(), "privateport": rule.privateport.to_string(),
        "algorithm": rule.algorithm, "protocol": rule.protocol, "networkid": rule.networkid,
        "zoneid": zone, "zonename": zone_name(world, &zone), "state": rule.state,
        "fordisplay": true, "created": cs_time(rule.created), "tags": tags_of(world, &rule.id),
    });
    if let Some(description) = &rule.description {
        body["description"] = description.clone().into();
    }
    if let Some(cidrs) = &rule.cidrlist {
        body["cidrlist"] = cidrs.clone().into();
    }
    body
}

pub fn create(world: &mut World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let name = p.required("name")?.to_owned();
    let algorithm = p.required("algorithm")?.to_owned();
    let public_port = port(p, "publicport")?;
    let private_port = port(p, "privateport")?;
    let ip_id = p.id("publicipid", |id| {
        world.public_ip(id).is_some_and(|ip| ip.state != "Free")
    })?;
    let ip = world.public_ip(&ip_id).expect("checked");
    let network = match p.optional_id("networkid", |id| world.network(id).is_some())? {
        Some(network) => network,
        None => ip.associatednetworkid.clone().unwrap_or_default(),
    };
    if ip.associatednetworkid.as_deref() != Some(network.as_str()) {
        return Err(ApiError::param(format!(
            "The IP address {} is not associated with network {network}",
            ip.ipaddress
        )));
    }
    if !ALGORITHMS.contains(&algorithm.as_str()) {
        return Err(ApiError::param(format!("Invalid algorithm: {algorithm}")));
    }
    let protocol = p.text("protocol").unwrap_or("tcp").trim().to_lowercase();
    let cidrlist = match p.list("cidrlist") {
        Some(_) if !cx.version_at_least(4, 18) => return Err(ApiError::param(PRE_418_CIDRLIST)),
        Some(cidrs) => Some(valid_cidrs(&cidrs)?.join(" ")),
        None => None,
    };
    if private_port == 0 {
        return Err(ApiError::param("privatePort is an invalid value: 0"));
    }
    if public_port == 53 && ip.issourcenat {
        return Err(ApiError::param(PORT_53));
    }
    // The provider's check (`validateLbRule`) runs before the conflict check, so a udp rule on
    // a taken port is refused as udp, not as a conflict.
    if !HAPROXY_PROTOCOLS.contains(&protocol.as_str()) || public_port == HAPROXY_STATS_PORT {
        return Err(ApiError::param(PROVIDER_REFUSAL));
    }
    if let Some(other) = world
        .lb_rules
        .iter()
        .find(|r| r.publicipid == ip_id && r.publicport == public_port)
    {
        return Err(conflict(public_port, other));
    }
    let id = new_id();
    let rule = LbRule {
        id: id.clone(),
        db_id: world.next_db_id(),
        name,
        description: p.text("description").map(str::to_owned),
        publicipid: ip_id.clone(),
        publicport: public_port,
        privateport: private_port,
        algorithm,
        protocol,
        cidrlist,
        networkid: network,
        state: "Add".into(),
        vm_ids: Vec::new(),
        created: cx.now,
    };
    world.lb_rules.push(rule);
    // Outside a VPC `openfirewall` defaults to true: the server opens the public port to
    // everyone with a firewall rule tied to the LB rule (`createRuleForAllCidrs`).
    if p.optional_bool("openfirewall").unwrap_or(true) {
        let db_id = world.next_db_id();
        world.firewall_rules.push(FirewallRule {
            id: new_id(),
            db_id,
            ipaddressid: ip_id,
            protocol: "tcp".into(),
            startport: Some(public_port),
            endport: Some(public_port),
            cidrlist: vec!["0.0.0.0/0".into()],
            state: "Add".into(),
            related: Some(id.clone()),
            created: cx.now,
        });
    }
    Ok(Reply::Job(Start {
        cmd: CREATE_CMD,
        instance_type: Some("LoadBalancerRule"),
        instance_id: Some(id.clone()),
        id: Some(id.clone()),
        action: Action::LbCreate { id },
    }))
}

/// `NetworkRuleConflictException` as `detectRulesConflict` words it.
fn conflict(port: u16, other: &LbRule) -> ApiError {
    // Written out by hand: the server's field order (id, uuid, name, purpose, state).
    let text = |s: &str| Value::from(s).to_string();
    let rule = format!(
        "{{\"id\":{},\"uuid\":{},\"name\":{},\"purpose\":\"LoadBalancing\",\"state\":{}}}",
        other.db_id,
        text(&other.id),
        text(&other.name),
        text(&other.state)
    );
    ApiError::conflict(format!(
        "The range specified, {port}-{port}, conflicts with rule LoadBalancer {rule} which has \
         {0}-{0}",
        other.publicport
    ))
}

fn port(p: &Params, name: &str) -> ApiResult<u16> {
    let value = p.int(name)?;
    u16::try_from(value)
        .map_err(|_| ApiError::param(format!("{name} is an invalid value: {value}")))
}

/// Each entry an IPv4/IPv6 CIDR or address (research §2.4).
fn valid_cidrs(cidrs: &[String]) -> ApiResult<Vec<String>> {
    for cidr in cidrs {
        let valid = cidr.parse::<IpNet>().is_ok() || cidr.parse::<std::net::IpAddr>().is_ok();
        if !valid {
            return Err(ApiError::param(format!("CIDR [{cidr}] is invalid.")));
        }
    }
    Ok(cidrs.to_vec())
}

pub fn finish_create(world: &mut World, id: &str) -> ApiResult<Value> {
    let rule = world.lb_rules.iter_mut().find(|r| r.id == id);
    let rule = rule.ok_or_else(|| ApiError::internal("The rule was deleted meanwhile"))?;
    rule.state = "Active".into();
    let opened = world.firewall_rules.iter_mut();
    for firewall in opened.filter(|f| f.related.as_deref() == Some(id)) {
        firewall.state = "Active".into();
    }
    let rule = world.lb_rule(id).expect("found above");
    Ok(json!({ "loadbalancer": render(world, rule) }))
}

/// An update, applied when its job ends.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Update {
    pub id: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub algorithm: Option<String>,
    pub protocol: Option<String>,
    /// Comma-joined, as the update stores it.
    pub cidrlist: Option<String>,
}

pub fn update(world: &mut World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.lb_rule(id).is_some())?;
    let owned = |name| p.text(name).map(str::to_owned);
    // Below 4.22 the server has no cidrlist parameter and ignores it like any unknown one.
    let cidrlist = if cx.version_at_least(4, 22) {
        p.list("cidrlist").map(|cidrs| cidrs.join(","))
    } else {
        None
    };
    let update = Update {
        id: id.clone(),
        name: owned("name"),
        description: owned("description"),
        algorithm: owned("algorithm"),
        protocol: owned("protocol"),
        cidrlist,
    };
    let action = match validate_update(&update) {
        Ok(()) => Action::LbUpdate(update),
        Err(error) => Action::fail(error),
    };
    Ok(Reply::Job(Start {
        cmd: UPDATE_CMD,
        instance_type: Some("LoadBalancerRule"),
        instance_id: Some(id),
        id: None,
        action,
    }))
}

fn validate_update(update: &Update) -> ApiResult<()> {
    if let Some(algorithm) = &update.algorithm {
        if !ALGORITHMS.contains(&algorithm.as_str()) {
            return Err(ApiError::param(format!("Invalid algorithm: {algorithm}")));
        }
    }
    if let Some(cidrs) = update.cidrlist.as_deref().filter(|c| !c.is_empty()) {
        let list: Vec<String> = cidrs.split(',').map(str::to_owned).collect();
        if valid_cidrs(&list).is_err() {
            return Err(ApiError::param(format!("Invalid CIDR list: {cidrs}")));
        }
    }
    Ok(())
}

pub fn finish_update(world: &mut World, update: Update) -> ApiResult<Value> {
    let rule = world.lb_rules.iter_mut().find(|r| r.id == update.id);
    let rule = rule.ok_or_else(|| ApiError::internal("The rule was deleted meanwhile"))?;
    let Update {
        name,
        description,
        algorithm,
        protocol,
        cidrlist,
        ..
    } = update;
    rule.name = name.unwrap_or(std::mem::take(&mut rule.name));
    rule.description = description.or(rule.description.take());
    rule.algorithm = algorithm.unwrap_or(std::mem::take(&mut rule.algorithm));
    rule.protocol = protocol.unwrap_or(std::mem::take(&mut rule.protocol));
    if let Some(cidrs) = cidrlist {
        rule.cidrlist = Some(cidrs);
    }
    let rule = world.lb_rule(&update.id).expect("found above");
    Ok(json!({ "loadbalancer": render(world, rule) }))
}

pub fn delete(world: &mut World, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.lb_rule(id).is_some())?;
    Ok(Reply::Job(Start {
        cmd: DELETE_CMD,
        instance_type: Some("LoadBalancerRule"),
        instance_id: Some(id.clone()),
        id: None,
        action: Action::LbDelete { id },
    }))
}

pub fn finish_delete(world: &mut World, id: &str) -> ApiResult<Value> {
    remove_rule(world, id);
    Ok(json!({ "success": true }))
}

/// Removes the rule with the firewall rule opened for it, and its tags.
pub fn remove_rule(world: &mut World, id: &str) {
    world.lb_rules.retain(|r| r.id != id);
    world.unhealthy_rules.remove(id);
    world
        .firewall_rules
        .retain(|f| f.related.as_deref() != Some(id));
    world.tags.retain(|t| t.resourceid != id);
}

/// assignToLoadBalancerRule (`assign`) or removeFromLoadBalancerRule.
pub fn assign(world: &mut World, p: &Params, assign: bool) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.lb_rule(id).is_some())?;
    let vm_ids = p.list("virtualmachineids").unwrap_or_default();
    if vm_ids.is_empty() {
        p.required("virtualmachineids")?;
    }
    for vm in &vm_ids {
        if world.vm(vm).is_none() {
            return Err(p.invalid("virtualmachineids", vm));
        }
    }
    let rule = world.lb_rule(&id).expect("checked");
    let refusal = vm_ids.iter().find_map(|vm_id| {
        let vm = world.vm(vm_id).expect("checked");
        if vm.networkid != rule.networkid {
            Some(format!(
                "VM {} is not in the network {} of load balancer {}",
                vm.name, rule.networkid, rule.name
            ))
        } else if assign && rule.vm_ids.contains(vm_id) {
            Some(format!(
                "VM {} is already mapped to load balancer.",
                vm.name
            ))
        } else {
            None
        }
    });
    let action = match (refusal, assign) {
        (Some(text), _) => Action::fail(ApiError::param(text)),
        (None, true) => Action::LbAssign {
            id: id.clone(),
            vm_ids,
        },
        (None, false) => Action::LbRemove {
            id: id.clone(),
            vm_ids,
        },
    };
    Ok(Reply::Job(Start {
        cmd: if assign { ASSIGN_CMD } else { REMOVE_CMD },
        instance_type: Some("LoadBalancerRule"),
        instance_id: Some(id),
        id: None,
        action,
    }))
}

pub fn finish_assign(world: &mut World, id: &str, vm_ids: &[String]) -> ApiResult<Value> {
    let existing: Vec<String> = vm_ids
        .iter()
        .filter(|vm| world.vm(vm).is_some())
        .cloned()
        .collect();
    let rule = world.lb_rules.iter_mut().find(|r| r.id == id);
    let rule = rule.ok_or_else(|| ApiError::internal("The rule was deleted meanwhile"))?;
    for vm in existing {
        if !rule.vm_ids.contains(&vm) {
            rule.vm_ids.push(vm);
        }
    }
    Ok(json!({ "success": true }))
}

pub fn finish_remove(world: &mut World, id: &str, vm_ids: &[String]) -> ApiResult<Value> {
    if let Some(rule) = world.lb_rules.iter_mut().find(|r| r.id == id) {
        rule.vm_ids.retain(|vm| !vm_ids.contains(vm));
    }
    Ok(json!({ "success": true }))
}

pub fn list(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let name = p.text("name");
    let ip = p.text("publicipid");
    let network = p.text("networkid");
    let vm = p.text("virtualmachineid");
    let zone = p.text("zoneid");
    let items = world
        .lb_rules
        .iter()
        .filter(|r| id.is_none_or(|id| r.id == id))
        .filter(|r| name.is_none_or(|n| r.name == n))
        .filter(|r| ip.is_none_or(|ip| r.publicipid == ip))
        .filter(|r| network.is_none_or(|n| r.networkid == n))
        .filter(|r| vm.is_none_or(|vm| r.vm_ids.iter().any(|v| v == vm)))
        .filter(|r| {
            zone.is_none_or(|z| {
                world
                    .public_ip(&r.publicipid)
                    .is_some_and(|ip| ip.zoneid == z)
            })
        })
        .filter(|r| {
            matches_keyword(
                p.text("keyword"),
                &[Some(&r.name), r.description.as_deref()],
            )
        })
        .filter(|r| matches_tags(world, p, &r.id))
        .map(|r| render(world, r))
        .collect();
    Reply::read(page(p, "loadbalancerrule", items, cx.page_size)?)
}

pub fn list_instances(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.lb_rule(id).is_some())?;
    let rule = world.lb_rule(&id).expect("checked");
    let items = rule
        .vm_ids
        .iter()
        .filter_map(|vm| world.vm(vm))
        .map(|vm| {
            let mut rendered = vms::render(world, vm);
            rendered["state"] = world.member_state(rule, vm).into();
            rendered
        })
        .collect();
    Reply::read(page(p, "loadbalancerruleinstance", items, cx.page_size)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conflict_names_the_rule_like_the_server() {
        let rule = LbRule {
            id: "u-1".into(),
            db_id: 7,
            name: "web".into(),
            description: None,
            publicipid: "ip".into(),
            publicport: 80,
            privateport: 30080,
            algorithm: "roundrobin".into(),
            protocol: "tcp".into(),
            cidrlist: None,
            networkid: "n".into(),
            state: "Active".into(),
            vm_ids: vec![],
            created: jiff::Timestamp::UNIX_EPOCH,
        };
        let error = conflict(80, &rule);
        assert_eq!(error.code, 537);
        assert_eq!(
            error.text,
            "The range specified, 80-80, conflicts with rule LoadBalancer \
             {\"id\":7,\"uuid\":\"u-1\",\"name\":\"web\",\"purpose\":\"LoadBalancing\",\
             \"state\":\"Active\"} which has 80-80"
        );
    }

    #[test]
    fn cidrs_are_checked_one_by_one() {
        let good = vec![
            "10.0.0.0/8".to_string(),
            "2001:db8::/32".into(),
            "1.2.3.4".into(),
        ];
        assert!(valid_cidrs(&good).is_ok());
        let bad = valid_cidrs(&["10.0.0.0/33".to_string()]).unwrap_err();
        assert_eq!(bad.text, "CIDR [10.0.0.0/33] is invalid.");
    }
}
