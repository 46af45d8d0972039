//! The parameters of each API call the executor makes and the reading of their answers: pure,
//! so they are tested without a cloud.

use serde_json::Value;

use super::super::client::Params;
use super::super::OWNER_TAG;
use super::ops::{MemberVm, NewRule, RuleUpdate};

/// Request parameters from (name, value) pairs.
pub(super) fn params(pairs: &[(&str, &str)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The object a command returned (`{"loadbalancer": {"id": …}}` or `{"id": …}`), if it has an ID.
pub(super) fn created_object(result: &Value, key: &str) -> Option<Value> {
    [result.get(key), Some(result)]
        .into_iter()
        .flatten()
        .find(|o| o.get("id").and_then(Value::as_str).is_some())
        .cloned()
}

pub(super) fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

pub(super) fn port_of(value: &Value, key: &str) -> Option<u32> {
    match value.get(key)? {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The IDs of comma-joined VMs, as assign/remove take them.
pub(super) fn vm_ids(vms: &[MemberVm]) -> String {
    vms.iter()
        .map(|vm| vm.id.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The parameters of createLoadBalancerRule (openfirewall=false: skyplan makes the firewall
/// rules itself, with the configured CIDRs).
pub fn create_rule_params(rule: &NewRule, public_ip: &str, network: &str) -> Params {
    let public_port = rule.public_port.to_string();
    let private_port = rule.private_port.to_string();
    let mut p = params(&[
        ("name", &rule.name),
        ("publicipid", public_ip),
        ("networkid", network),
        ("publicport", &public_port),
        ("privateport", &private_port),
        ("protocol", rule.protocol.as_str()),
        ("algorithm", rule.algorithm.as_str()),
        ("openfirewall", "false"),
    ]);
    if let Some(description) = &rule.description {
        p.push(("description".into(), description.clone()));
    }
    // Left out when empty: before 4.18 the parameter itself is refused.
    if !rule.cidrs.is_empty() {
        p.push(("cidrlist".into(), rule.cidrs.join(",")));
    }
    p
}

/// The parameters of updateLoadBalancerRule.
pub fn update_rule_params(id: &str, update: &RuleUpdate) -> Params {
    let mut p = params(&[("id", id)]);
    if let Some(name) = &update.name {
        p.push(("name".into(), name.clone()));
    }
    if let Some(description) = &update.description {
        p.push(("description".into(), description.clone()));
    }
    if let Some(algorithm) = update.algorithm {
        p.push(("algorithm".into(), algorithm.as_str().into()));
    }
    if let Some(cidrs) = &update.cidrs {
        p.push(("cidrlist".into(), cidrs.join(",")));
    }
    p
}

/// The parameters of createTags marking an object as the load balancer's.
pub fn tag_params(resource_type: &str, id: &str, owner: &str) -> Params {
    params(&[
        ("resourcetype", resource_type),
        ("resourceids", id),
        ("tags[0].key", OWNER_TAG),
        ("tags[0].value", owner),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::ops::NetworkRef;
    use crate::spec::{CsAlgorithm, CsProtocol};

    fn value_of<'a>(params: &'a Params, key: &str) -> Option<&'a str> {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn rule(cidrs: &[&str]) -> NewRule {
        NewRule {
            name: "edge-tcp-80".into(),
            description: None,
            public_port: 80,
            private_port: 30080,
            protocol: CsProtocol::TcpProxy,
            algorithm: CsAlgorithm::Source,
            cidrs: cidrs.iter().map(|c| c.to_string()).collect(),
            network: NetworkRef::Known {
                id: "net-1".into(),
                name: "k8s-net".into(),
            },
        }
    }

    #[test]
    fn a_rule_is_created_without_opening_the_firewall_and_cidrlist_only_when_set() {
        let p = create_rule_params(&rule(&[]), "ip-1", "net-1");
        assert_eq!(value_of(&p, "openfirewall"), Some("false"));
        assert_eq!(value_of(&p, "protocol"), Some("tcp-proxy"));
        assert_eq!(value_of(&p, "algorithm"), Some("source"));
        assert_eq!(value_of(&p, "privateport"), Some("30080"));
        assert_eq!(value_of(&p, "cidrlist"), None);
        let p = create_rule_params(&rule(&["10.0.0.0/8", "192.168.0.0/16"]), "ip-1", "net-1");
        assert_eq!(value_of(&p, "cidrlist"), Some("10.0.0.0/8,192.168.0.0/16"));
    }

    #[test]
    fn an_update_sends_only_what_changes() {
        let update = RuleUpdate {
            algorithm: Some(CsAlgorithm::LeastConn),
            ..RuleUpdate::default()
        };
        let p = update_rule_params("r-1", &update);
        assert_eq!(value_of(&p, "algorithm"), Some("leastconn"));
        assert_eq!(value_of(&p, "cidrlist"), None);
        assert_eq!(value_of(&p, "name"), None);
    }

    #[test]
    fn tags_name_the_owner() {
        let p = tag_params("LoadBalancer", "r-1", "load-balancer.edge");
        assert_eq!(value_of(&p, "tags[0].key"), Some(OWNER_TAG));
        assert_eq!(value_of(&p, "tags[0].value"), Some("load-balancer.edge"));
        assert_eq!(value_of(&p, "resourcetype"), Some("LoadBalancer"));
    }

    #[test]
    fn created_objects_are_read_from_their_key_or_the_top() {
        let id = |result: Value, key: &str| created_object(&result, key).map(|o| text(&o, "id"));
        let result = serde_json::json!({"loadbalancer": {"id": "r-9"}});
        assert_eq!(id(result, "loadbalancer").as_deref(), Some("r-9"));
        let result = serde_json::json!({"id": "f-1"});
        assert_eq!(id(result, "firewallrule").as_deref(), Some("f-1"));
        assert_eq!(
            id(serde_json::json!({"success": true}), "firewallrule"),
            None
        );
    }
}
