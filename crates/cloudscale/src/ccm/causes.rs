//! The user's change as the plan's attribute. In controller mode the user changes a Service
//! field (an annotation, the ports, the traffic policy); the cloud objects change only as the
//! CCM's consequence. So each Service field that differs is one attribute, named by the config
//! key that sets it (`traffic-policy: Cluster → Local`), with the CCM's predicted changes to the
//! cloud objects listed under it as its effects — and its class the highest of theirs.

use serde_json::Value;

use super::annotations::PREFIX;
use super::impact::{rule, Change};
use super::predict::UNKNOWN_PORT;
use super::service::ServiceChange;
use skyplan_core::model::Downtime;
use skyplan_core::plan::{unknown, AttributeChange, Effect};

/// Who decides a node port the plan cannot know yet.
pub const ALLOCATED: &str = "allocated by the apiserver";

/// A predicted change to a cloud object, with the controller-mode row it is.
pub struct Predicted {
    pub change: Change,
    pub attribute: AttributeChange,
    /// What this case adds to its row's general wording, said on the attribute it comes under
    /// (`port 80 serves nothing for about 6 s: …`, `emptied`).
    pub note: Option<String>,
}

/// The config key that sets a Service field: `service.annotations.k8s.cloudscale.ch/
/// loadbalancer-pool-algorithm` → `algorithm`, `service.externalTrafficPolicy` →
/// `traffic-policy`. A field no config key sets keeps its Service path.
pub fn config_key(service_path: &str) -> String {
    if let Some(suffix) = service_path
        .strip_prefix("service.annotations.")
        .and_then(|a| a.strip_prefix(PREFIX))
    {
        return annotation_key(suffix).to_string();
    }
    if service_path == "service.externalTrafficPolicy" {
        return "traffic-policy".into();
    }
    if let Some(ports) = service_path.strip_prefix("service.") {
        if ports == "ports" || ports.starts_with("ports.") {
            // The fields the config spells otherwise; name, port and protocol are the same.
            return match ports.rsplit_once('.') {
                Some((port, "nodePort")) => format!("{port}.node-port"),
                Some((port, "targetPort")) => format!("{port}.target-port"),
                _ => ports.to_string(),
            };
        }
    }
    service_path.to_string()
}

/// The config key of a managed annotation (annotations::MANAGED), by its suffix.
fn annotation_key(suffix: &str) -> &str {
    match suffix {
        "pool-algorithm" => "algorithm",
        "listener-allowed-cidrs" => "allowed-cidrs",
        "listener-allowed-subnets" => "allowed-subnets",
        "health-monitor-delay-s" => "health-monitor.delay-s",
        "health-monitor-timeout-s" => "health-monitor.timeout-s",
        "health-monitor-up-threshold" => "health-monitor.up-threshold",
        "health-monitor-down-threshold" => "health-monitor.down-threshold",
        "health-monitor-type" => "health-monitor.type",
        "health-monitor-http" => "health-monitor.http",
        "timeout-client-data-ms" => "timeouts.client-data-ms",
        "timeout-member-connect-ms" => "timeouts.member-connect-ms",
        "timeout-member-data-ms" => "timeouts.member-data-ms",
        // name, flavor, vip-addresses, floating-ips, pool-protocol, force-hostname, ip-mode,
        // listener-protocol and node-selector are spelled as their config keys.
        same => same,
    }
}

/// How well config key `key` explains `change` predicted at `path` (the higher the better;
/// `None`: it does not). A port's rows go to that port's key the row names
/// (`ports.web.name` for a rename), else to another key of that port, else to any port key.
fn cause_score(change: Change, path: &str, key: &str) -> Option<usize> {
    if !caused_by(change, key) {
        return None;
    }
    let Some(field) = port_field(change) else {
        // The most specific key wins.
        return Some(key.len());
    };
    let port = path
        .strip_prefix("ports.")
        .and_then(|rest| rest.split('.').next())
        .map(|name| format!("ports.{name}"));
    let Some(port) = port else { return Some(0) };
    let named = match field {
        "" => port.clone(),
        field => format!("{port}.{field}"),
    };
    Some(if key == named {
        3
    } else if key == port || key.starts_with(&format!("{port}.")) {
        2
    } else if key == "ports" {
        1
    } else {
        0
    })
}

/// The `[[ports]]` field whose change is the row (`""`: the port itself, added or removed).
fn port_field(change: Change) -> Option<&'static str> {
    use Change::*;
    Some(match change {
        PortRenamed => "name",
        PortProtocol => "protocol",
        ListenerPort => "port",
        NodePort | NewNodePort => "node-port",
        PortAdded | PortRemoved => "",
        _ => return None,
    })
}

/// Whether changing config key `key` is what makes the CCM do `change`. Rows no Service field
/// causes (the node set, a cloud object changed behind the CCM) match none.
fn caused_by(change: Change, key: &str) -> bool {
    use Change::*;
    let is = |k: &str| key == k;
    let under = |prefix: &str| key == prefix || key.starts_with(&format!("{prefix}."));
    match change {
        LbRenamed | RenameWithoutUuid => is("name"),
        ListenerTimeouts => under("timeouts"),
        StatusOnly => is("force-hostname") || is("ip-mode"),
        ListenerAllowedCidrs => is("allowed-cidrs"),
        FloatingIpAdded | FloatingIpRemoved => is("floating-ips"),
        MonitorUpdated | MonitorRecreated | MonitorCreated => under("health-monitor"),
        ListenerProtocol => is("listener-protocol"),
        ListenerPort | PortAdded | PortRemoved | PortRenamed | PortProtocol | NodePort
        | NewNodePort => under("ports"),
        PoolAlgorithm => is("algorithm"),
        PoolProtocol => is("pool-protocol"),
        TrafficPolicy => is("traffic-policy"),
        AllowedSubnets => is("allowed-subnets"),
        NodeSelector => is("node-selector"),
        LbFlavor => is("flavor"),
        LbVipAddresses | VipCleared => is("vip-addresses"),
        ServiceCreated | ListenerRecreated | MembersChanged | NodeLabelsPending | LbZone
        | ServiceRemoved | ServiceDeleted | ServiceWritten => false,
    }
}

/// The plan's attributes: one per Service field that differs (`written`), each with the
/// predicted changes it causes as effects; a predicted change no field causes stays an
/// attribute of its own, as the cloud object's path. `service` names the Service in reasons.
pub fn attributes(
    written: &[ServiceChange],
    predicted: Vec<Predicted>,
    service: &str,
) -> Vec<AttributeChange> {
    let keys: Vec<String> = written.iter().map(|c| config_key(&c.path)).collect();
    let mut under: Vec<Vec<Predicted>> = written.iter().map(|_| Vec::new()).collect();
    let mut alone = Vec::new();
    for effect in predicted {
        // The key that explains it best.
        let cause = (0..keys.len())
            .filter_map(|i| {
                let score = cause_score(effect.change, &effect.attribute.path, &keys[i])?;
                Some((i, score))
            })
            .max_by_key(|&(_, score)| score)
            .map(|(i, _)| i);
        match cause {
            Some(i) => under[i].push(effect),
            None => alone.push(AttributeChange {
                before: known(&effect.attribute.path, effect.attribute.before.clone()),
                after: known(&effect.attribute.path, effect.attribute.after.clone()),
                reason: noted(effect.attribute.reason.clone(), [&effect]),
                ..effect.attribute
            }),
        }
    }
    let mut out: Vec<AttributeChange> = written
        .iter()
        .zip(keys)
        .zip(under)
        .map(|((field, key), effects)| cause(field, key, effects, service))
        .collect();
    out.extend(alone);
    out
}

/// One Service field's attribute. An effect on the same path is the field itself (a VIP list
/// cleared): its row is the attribute's, not listed again.
fn cause(
    field: &ServiceChange,
    key: String,
    effects: Vec<Predicted>,
    service: &str,
) -> AttributeChange {
    let (same, listed): (Vec<_>, Vec<_>) =
        effects.into_iter().partition(|e| e.attribute.path == key);
    // The first of the highest: the CCM's reading of the user's change, said once here; each
    // effect's reason names the object it acts on.
    let worst = same
        .iter()
        .chain(&listed)
        .fold(None, |worst: Option<&Predicted>, e| match worst {
            Some(w) if w.attribute.impact >= e.attribute.impact => Some(w),
            _ => Some(e),
        });
    let (impact, reason, group) = match worst {
        Some(e) => (
            e.attribute.impact,
            rule(e.change).happens.to_string(),
            e.attribute.group.clone(),
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
    let all: Vec<&AttributeChange> = same.iter().chain(&listed).map(|e| &e.attribute).collect();
    let reason = noted(reason, same.iter().chain(&listed));
    AttributeChange {
        path: key,
        before: field.before.clone(),
        after: field.after.clone(),
        impact,
        reason,
        downtime: downtime(&all),
        group,
        effects: listed.into_iter().map(|e| effect(e.attribute)).collect(),
    }
}

/// `reason` with the notes of `effects`, each said once.
fn noted<'p>(reason: String, effects: impl IntoIterator<Item = &'p Predicted>) -> String {
    let mut notes: Vec<&str> = Vec::new();
    for note in effects.into_iter().filter_map(|e| e.note.as_deref()) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    std::iter::once(reason.as_str())
        .chain(notes)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Effects on one object overlap (one disruption), effects on different objects add up — as
/// a resource's attributes do.
fn downtime(effects: &[&AttributeChange]) -> Downtime {
    let mut groups: Vec<(&str, Downtime)> = Vec::new();
    for effect in effects {
        match groups.iter_mut().find(|(g, _)| *g == effect.group) {
            Some((_, d)) => *d = d.alongside(effect.downtime),
            None => groups.push((&effect.group, effect.downtime)),
        }
    }
    groups
        .into_iter()
        .fold(Downtime::ZERO, |total, (_, d)| total.then(d))
}

fn effect(attribute: AttributeChange) -> Effect {
    Effect {
        before: known(&attribute.path, attribute.before),
        after: known(&attribute.path, attribute.after),
        path: attribute.path,
        impact: attribute.impact,
        reason: attribute.reason,
    }
}

/// A node or health-check port the apiserver has yet to allocate is predicted as
/// [`UNKNOWN_PORT`]; shown as what it is, never as that number.
pub fn known(path: &str, value: Value) -> Value {
    if !(path.ends_with("node-port") || path.ends_with("monitor-port")) {
        return value;
    }
    let unknown_port = |v: &Value| v.as_u64() == Some(u64::from(UNKNOWN_PORT));
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| match unknown_port(&v) {
                    true => unknown(ALLOCATED),
                    false => v,
                })
                .collect(),
        ),
        v if unknown_port(&v) => unknown(ALLOCATED),
        v => v,
    }
}

#[cfg(test)]
#[path = "causes_tests.rs"]
mod tests;
