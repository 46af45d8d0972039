//! The user's change as the plan's attribute. In controller mode the user changes a config key
//! that skyplan writes into the Service (the ports, the algorithm, the CIDRs, the public IP);
//! the LB rules and firewall rules change only as the CloudStack CCM's consequence. So each
//! config key whose value differs from what the live Service says is one attribute, named and
//! valued as the config spells it (`algorithm: "roundrobin" → "source"`), with the CCM's
//! predicted actions on the rules listed under it as its effects — and its class the highest of
//! theirs. A predicted change no key explains (the node set, a rule changed behind the CCM)
//! stays an attribute of its own, one per path.

use k8s_openapi::api::core::v1::{Service, ServicePort};
use serde_json::{json, Value};

use super::impact::{rule, Change};
use super::names::service_port_name;
use super::predict::Finding;
use super::service::{
    explicit_node_port, session_affinity, ServiceChange, PROXY_PROTOCOL, SOURCE_CIDRS,
};
use crate::spec::{CloudstackLoadBalancerSpec, CsPort, PublicIp};
use skyplan_core::model::Downtime;
use skyplan_core::plan::{AttributeChange, Effect};

/// A live Service port as the config would spell it.
struct LivePort {
    port: u16,
    protocol: &'static str,
    name: String,
    target: String,
    node_port: Option<u16>,
}

fn live_ports(live: &Service) -> Vec<LivePort> {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let proxy = live
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROXY_PROTOCOL))
        .is_some_and(|v| v == "true");
    let ports: Vec<ServicePort> = live
        .spec
        .as_ref()
        .and_then(|s| s.ports.clone())
        .unwrap_or_default();
    ports
        .into_iter()
        .map(|p| LivePort {
            port: u16::try_from(p.port).unwrap_or_default(),
            protocol: match (p.protocol.as_deref(), proxy) {
                (Some("UDP"), _) => "udp",
                (_, true) => "tcp-proxy",
                (_, false) => "tcp",
            },
            target: match p.target_port {
                Some(IntOrString::Int(n)) => n.to_string(),
                Some(IntOrString::String(s)) => s,
                None => p.port.to_string(),
            },
            name: p.name.unwrap_or_default(),
            node_port: p
                .node_port
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n != 0),
        })
        .collect()
}

/// A port as the config spells it: `{port, protocol}`, with `node-port` when set.
fn port_value(port: u16, protocol: &str, node_port: Option<u16>) -> Value {
    let mut value = json!({"port": port, "protocol": protocol});
    if let Some(node_port) = node_port {
        value["node-port"] = json!(node_port);
    }
    value
}

/// What writing the desired Service changes, as config keys: `algorithm`, `allowed-cidrs`,
/// `firewall-cidrs`, `public-ip`, and per port (matched by public port, a moved one paired by
/// protocol) `ports.<port>`, `ports.<port>.port`, `.protocol`, `.node-port`. A Service field no
/// config key sets keeps its Service path (`service.type`, `service.ports.80.name`).
pub fn config_changes(spec: &CloudstackLoadBalancerSpec, live: &Service) -> Vec<ServiceChange> {
    let mut out = Vec::new();
    let mut differs = |path: String, before: Value, after: Value| {
        if before != after {
            out.push(ServiceChange {
                path,
                before,
                after,
            });
        }
    };
    let annotations = live.metadata.annotations.clone().unwrap_or_default();
    let live_spec = live.spec.clone().unwrap_or_default();
    if live_spec.type_.as_deref() != Some("LoadBalancer") {
        differs(
            "service.type".into(),
            json!(live_spec.type_),
            json!("LoadBalancer"),
        );
    }
    let affinity = live_spec
        .session_affinity
        .clone()
        .unwrap_or_else(|| "None".into());
    if affinity != session_affinity(spec.algorithm) {
        let before = match affinity.as_str() {
            "ClientIP" => json!("source"),
            _ => json!("roundrobin"),
        };
        differs(
            "algorithm".into(),
            before,
            json!(spec.algorithm.to_string()),
        );
    }
    // Compared as written (the annotation is the list joined), shown as lists.
    let live_cidrs: Vec<&str> = annotations
        .get(SOURCE_CIDRS)
        .map(|c| c.split(',').filter(|c| !c.is_empty()).collect())
        .unwrap_or_default();
    if live_cidrs.join(",") != spec.allowed_cidrs.join(",") {
        differs(
            "allowed-cidrs".into(),
            json!(live_cidrs),
            json!(spec.allowed_cidrs),
        );
    }
    differs(
        "firewall-cidrs".into(),
        json!(live_spec.load_balancer_source_ranges.unwrap_or_default()),
        json!(spec.firewall_cidrs),
    );
    let live_ip = live_spec.load_balancer_ip.filter(|ip| !ip.is_empty());
    let want_ip = match &spec.public_ip {
        PublicIp::Address(address) => Some(address.clone()),
        PublicIp::Auto => None,
    };
    differs("public-ip".into(), json!(live_ip), json!(want_ip));
    ports(spec, live, &mut differs);
    out
}

fn ports(
    spec: &CloudstackLoadBalancerSpec,
    live: &Service,
    differs: &mut impl FnMut(String, Value, Value),
) {
    let mut unmatched: Vec<LivePort> = live_ports(live);
    let mut added: Vec<&CsPort> = Vec::new();
    for want in &spec.ports {
        let protocol = want.protocol.to_string();
        // The same public port, of the same protocol if there is one.
        let at = unmatched
            .iter()
            .position(|l| l.port == want.port && l.protocol == protocol)
            .or_else(|| unmatched.iter().position(|l| l.port == want.port));
        let Some(at) = at else {
            added.push(want);
            continue;
        };
        let had = unmatched.remove(at);
        let key = format!("ports.{}", want.port);
        if had.protocol != protocol {
            // The Service port's name follows the protocol: that is the change.
            differs(
                format!("{key}.protocol"),
                json!(had.protocol),
                json!(protocol),
            );
            continue;
        }
        if let Some(node_port) = explicit_node_port(want.node_port) {
            differs(
                format!("{key}.node-port"),
                json!(had.node_port),
                json!(node_port),
            );
        }
        let service = format!("service.{key}");
        differs(
            format!("{service}.name"),
            json!(had.name),
            json!(service_port_name(want.protocol, want.port)),
        );
        differs(
            format!("{service}.targetPort"),
            json!(had.target),
            json!(want.port.to_string()),
        );
    }
    for want in added {
        let protocol = want.protocol.to_string();
        let node_port = explicit_node_port(want.node_port);
        // A port of the same protocol that went away: the user moved it.
        match unmatched.iter().position(|l| l.protocol == protocol) {
            Some(at) => {
                let had = unmatched.remove(at);
                differs(
                    format!("ports.{}.port", had.port),
                    json!(had.port),
                    json!(want.port),
                );
                if let Some(node_port) = node_port {
                    differs(
                        format!("ports.{}.node-port", had.port),
                        json!(had.node_port),
                        json!(node_port),
                    );
                }
            }
            None => differs(
                format!("ports.{}", want.port),
                Value::Null,
                port_value(want.port, &protocol, node_port),
            ),
        }
    }
    for had in unmatched {
        differs(
            format!("ports.{}", had.port),
            port_value(had.port, had.protocol, had.node_port),
            Value::Null,
        );
    }
}

/// How well key `key` explains `finding` (higher is better; `None`: it does not).
fn cause_score(finding: &Finding, key: &str) -> Option<u8> {
    use Change::*;
    let under = |prefix: &str| key == prefix || key.starts_with(&format!("{prefix}."));
    // The finding's port key: `ports.80` of `ports.80.node-port`.
    let port = || -> String {
        let mut parts = finding.path.splitn(3, '.');
        match (parts.next(), parts.next()) {
            (Some("ports"), Some(n)) => format!("ports.{n}"),
            _ => String::from("\u{0}"),
        }
    };
    match finding.change {
        Algorithm => (key == "algorithm").then_some(2),
        CidrsInPlace | CidrsRecreated => (key == "allowed-cidrs").then_some(2),
        FirewallCidrs | FirewallIgnored => (key == "firewall-cidrs").then_some(2),
        PublicIpIgnored => (key == "public-ip").then_some(2),
        PortAdded | PortRemoved | SamePortTwice | PublicPort | ProtocolProxy | ProtocolUdp
        | NodePort => {
            let port = port();
            if key == finding.path {
                Some(3)
            } else if under(&port) {
                Some(2)
            } else if under(&format!("service.{port}")) {
                Some(1)
            } else {
                None
            }
        }
        Members | ServiceCreated | ServiceRemoved | ServiceDeleted | ServiceWritten => None,
    }
}

/// The effect's path: the cloud object it acts on, config-shaped (`rules.<name>.algorithm`,
/// `firewall.<port>.cidrlist`); a finding on the Service itself keeps its path.
fn effect_path(finding: &Finding) -> String {
    use Change::*;
    let rule = finding
        .object
        .strip_prefix("LB rule ")
        .map(|name| format!("rules.{name}"));
    let Some(rule) = rule else {
        if let Some(port) = finding
            .path
            .strip_prefix("ports.")
            .and_then(|p| p.strip_suffix(".firewall-cidrs"))
        {
            return format!("firewall.{port}.cidrlist");
        }
        return finding.path.clone();
    };
    match finding.change {
        NodePort => format!("{rule}.private-port"),
        Algorithm => format!("{rule}.algorithm"),
        CidrsInPlace | CidrsRecreated => format!("{rule}.cidrlist"),
        Members => format!("{rule}.members"),
        ProtocolProxy | ProtocolUdp => format!("{rule}.protocol"),
        PublicPort => format!("{rule}.public-port"),
        _ => rule,
    }
}

/// The finding as a plan row: its reason names the object it acts on.
pub fn row(finding: &Finding) -> AttributeChange {
    let rule = rule(finding.change);
    AttributeChange {
        path: finding.path.clone(),
        before: finding.before.clone(),
        after: finding.after.clone(),
        impact: rule.impact,
        reason: format!("{}: {}{}", finding.object, rule.happens, finding.note),
        downtime: rule.downtime,
        group: finding.object.clone(),
        effects: Vec::new(),
    }
}

/// The plan's attributes: one per config key that differs (`written`), each with the findings
/// it causes as effects; the findings no key explains grouped by path, each group one
/// attribute. `service` names the Service in a reason.
pub fn attributes(
    written: &[ServiceChange],
    findings: &[Finding],
    service: &str,
) -> Vec<AttributeChange> {
    let mut under: Vec<Vec<&Finding>> = written.iter().map(|_| Vec::new()).collect();
    let mut alone: Vec<(String, Vec<&Finding>)> = Vec::new();
    for finding in findings {
        let cause = written
            .iter()
            .enumerate()
            .filter_map(|(i, w)| Some((i, cause_score(finding, &w.path)?)))
            // The first of the best.
            .fold(None, |best: Option<(usize, u8)>, (i, s)| match best {
                Some((_, b)) if b >= s => best,
                _ => Some((i, s)),
            });
        match cause {
            Some((i, _)) => under[i].push(finding),
            None => match alone.iter_mut().find(|(p, _)| *p == finding.path) {
                Some((_, group)) => group.push(finding),
                None => alone.push((finding.path.clone(), vec![finding])),
            },
        }
    }
    let mut out: Vec<AttributeChange> = written
        .iter()
        .zip(under)
        .map(|(field, effects)| {
            cause(
                &field.path,
                field.before.clone(),
                field.after.clone(),
                &effects,
                service,
            )
        })
        .collect();
    out.extend(
        alone
            .into_iter()
            .map(|(path, group)| match group.as_slice() {
                [one] => row(one),
                many => cause(
                    &path,
                    many[0].before.clone(),
                    many[0].after.clone(),
                    many,
                    service,
                ),
            }),
    );
    out
}

/// One attribute with its effects: the class, reason and group of the first of the highest
/// effect (without the object: each effect names its own), or the Service written with no
/// cloud effect.
fn cause(
    path: &str,
    before: Value,
    after: Value,
    effects: &[&Finding],
    service: &str,
) -> AttributeChange {
    let rows: Vec<(String, AttributeChange)> =
        effects.iter().map(|f| (effect_path(f), row(f))).collect();
    let worst = effects.iter().zip(&rows).fold(
        None,
        |worst: Option<(&Finding, &AttributeChange)>, (f, (_, r))| match worst {
            Some((_, w)) if w.impact >= r.impact => worst,
            _ => Some((f, r)),
        },
    );
    let (impact, reason, group) = match worst {
        Some((f, r)) => (
            r.impact,
            format!("{}{}", rule(f.change).happens, f.note),
            r.group.clone(),
        ),
        None => {
            let written = rule(Change::ServiceWritten);
            (
                written.impact,
                written.happens.to_string(),
                format!("service {service}"),
            )
        }
    };
    let all: Vec<&AttributeChange> = rows.iter().map(|(_, r)| r).collect();
    AttributeChange {
        path: path.to_string(),
        before,
        after,
        impact,
        reason,
        downtime: downtime(&all),
        group,
        effects: rows
            .into_iter()
            // A finding on the key's own path is the attribute itself, not listed again.
            .filter(|(p, _)| p != path)
            .map(|(p, r)| Effect {
                path: p,
                before: r.before,
                after: r.after,
                impact: r.impact,
                reason: r.reason,
            })
            .collect(),
    }
}

/// Effects on one object overlap (one disruption), effects on different objects add up — as
/// a resource's attributes do.
fn downtime(rows: &[&AttributeChange]) -> Downtime {
    let mut groups: Vec<(&str, Downtime)> = Vec::new();
    for row in rows {
        match groups.iter_mut().find(|(g, _)| *g == row.group) {
            Some((_, d)) => *d = d.alongside(row.downtime),
            None => groups.push((&row.group, row.downtime)),
        }
    }
    groups
        .into_iter()
        .fold(Downtime::ZERO, |total, (_, d)| total.then(d))
}
