//! What the apiserver does to a Service before it stores it (research §2.7): defaults
//! (`SetDefaults_Service`), dropping type-dependent fields when the type changes, keeping
//! allocated values an update omits (`patchAllocatedValues`: node ports by port *name*, the
//! health-check port, the cluster IP), validation, then allocation.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use serde_json::{json, Map, Value};

use super::names::{self, NameRule};
use crate::kubernetes::alloc;
use crate::kubernetes::status::FieldError;
use crate::kubernetes::world::World;

type Errors = Vec<FieldError>;

pub fn prepare_create(world: &World, key: &str, service: &mut Value) -> Result<(), Errors> {
    set_defaults(world, service);
    service["status"] = json!({"loadBalancer": {}});
    validate(service)?;
    allocate(world, key, service, None)
}

pub fn prepare_update(
    world: &World,
    key: &str,
    old: &Value,
    service: &mut Value,
) -> Result<(), Errors> {
    set_defaults(world, service);
    drop_type_dependent_fields(old, service);
    patch_allocated_values(old, service);
    validate(service)?;
    allocate(world, key, service, Some(old))
}

/// Status writes (the cloud controller's load-balancer ingress) are defaulted too.
pub fn prepare_status_update(world: &World, service: &mut Value) -> Result<(), Errors> {
    default_ingress_ip_mode(world, service);
    Ok(())
}

fn service_type(service: &Value) -> &str {
    service["spec"]["type"].as_str().unwrap_or("ClusterIP")
}

fn needs_cluster_ip(service: &Value) -> bool {
    service_type(service) != "ExternalName"
}

fn needs_node_ports(service: &Value) -> bool {
    match service_type(service) {
        "NodePort" => true,
        "LoadBalancer" => service["spec"]["allocateLoadBalancerNodePorts"] != json!(false),
        _ => false,
    }
}

fn needs_health_check_port(service: &Value) -> bool {
    service_type(service) == "LoadBalancer" && service["spec"]["externalTrafficPolicy"] == "Local"
}

fn external_facing(service: &Value) -> bool {
    matches!(service_type(service), "NodePort" | "LoadBalancer")
}

fn spec_mut(service: &mut Value) -> &mut Map<String, Value> {
    if !service["spec"].is_object() {
        service["spec"] = json!({});
    }
    service["spec"]
        .as_object_mut()
        .expect("spec was just made a map")
}

/// `SetDefaults_Service` and `SetDefaults_ServicePort`.
fn set_defaults(world: &World, service: &mut Value) {
    let spec = spec_mut(service);
    spec.entry("type").or_insert("ClusterIP".into());
    spec.entry("sessionAffinity").or_insert("None".into());
    let kind = spec["type"].as_str().unwrap_or("").to_owned();
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert("TCP".into());
            if !port.contains_key("targetPort") {
                let target = port.get("port").cloned().unwrap_or(Value::Null);
                port.insert("targetPort".into(), target);
            }
        }
    }
    if kind != "ExternalName" {
        spec.entry("internalTrafficPolicy")
            .or_insert("Cluster".into());
        spec.entry("ipFamilies").or_insert(json!(["IPv4"]));
        spec.entry("ipFamilyPolicy").or_insert("SingleStack".into());
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer") {
        spec.entry("externalTrafficPolicy")
            .or_insert("Cluster".into());
    }
    if kind == "LoadBalancer" {
        spec.entry("allocateLoadBalancerNodePorts")
            .or_insert(true.into());
    }
    default_ingress_ip_mode(world, service);
}

/// The first version whose servers know `ipMode` by default (LoadBalancerIPMode: alpha in
/// v1.29, off by default; beta and on in v1.30).
const IP_MODE_SINCE: (u32, u32) = (1, 30);

/// An LB ingress IP without a mode is `VIP`. Before v1.30 the field is dropped: v1.28's types
/// have no such field (kube-apiserver v1.28.4 answers without it), v1.29 drops it while its
/// gate is off.
fn default_ingress_ip_mode(world: &World, service: &mut Value) {
    let known = world.version.is_none_or(|version| version >= IP_MODE_SINCE);
    if known && service_type(service) != "LoadBalancer" {
        return;
    }
    // `pointer_mut`, not indexing: indexing a missing key would insert a null.
    let ingress = service.pointer_mut("/status/loadBalancer/ingress");
    if let Some(ingress) = ingress.and_then(Value::as_array_mut) {
        for entry in ingress.iter_mut().filter_map(Value::as_object_mut) {
            if !known {
                entry.remove("ipMode");
            } else if entry.contains_key("ip") {
                entry.entry("ipMode").or_insert("VIP".into());
            }
        }
    }
}

/// The service strategy's `dropTypeDependentFields`: a field the new type does not use is
/// cleared when the update left it as it was, so `type: ClusterIP` alone is a valid change.
fn drop_type_dependent_fields(old: &Value, service: &mut Value) {
    let same = |field: &str, service: &Value| old["spec"][field] == service["spec"][field];
    if needs_node_ports(old) && !needs_node_ports(service) && same_node_ports(old, service) {
        if let Some(Value::Array(ports)) = spec_mut(service).get_mut("ports") {
            ports
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(|p| drop(p.remove("nodePort")));
        }
    }
    let dependent = [
        ("healthCheckNodePort", needs_health_check_port(service)),
        ("externalTrafficPolicy", external_facing(service)),
        (
            "allocateLoadBalancerNodePorts",
            service_type(service) == "LoadBalancer",
        ),
        ("loadBalancerClass", service_type(service) == "LoadBalancer"),
    ];
    for (field, needed) in dependent {
        if !needed && same(field, service) {
            spec_mut(service).remove(field);
        }
    }
    if !needs_cluster_ip(service) && same("clusterIP", service) {
        spec_mut(service).remove("clusterIP");
        spec_mut(service).remove("clusterIPs");
    }
}

fn same_node_ports(old: &Value, service: &Value) -> bool {
    let node_ports = |s: &Value| -> Vec<Value> {
        let ports = s["spec"]["ports"].as_array().cloned().unwrap_or_default();
        ports.iter().map(|p| p["nodePort"].clone()).collect()
    };
    node_ports(old) == node_ports(service)
}

/// `patchAllocatedValues`: what the update omits but the old object had allocated.
fn patch_allocated_values(old: &Value, service: &mut Value) {
    if needs_cluster_ip(old) && needs_cluster_ip(service) && unset(&service["spec"]["clusterIP"]) {
        for field in ["clusterIP", "clusterIPs"] {
            if let Some(value) = old["spec"].get(field) {
                spec_mut(service).insert(field.into(), value.clone());
            }
        }
    }
    if needs_node_ports(old) && needs_node_ports(service) {
        keep_node_ports_by_name(old, service);
    }
    if needs_health_check_port(old)
        && needs_health_check_port(service)
        && unset(&service["spec"]["healthCheckNodePort"])
    {
        let kept = old["spec"]["healthCheckNodePort"].clone();
        spec_mut(service).insert("healthCheckNodePort".into(), kept);
    }
}

fn keep_node_ports_by_name(old: &Value, service: &mut Value) {
    let old_ports = old["spec"]["ports"].as_array().cloned().unwrap_or_default();
    let by_name: BTreeMap<String, u64> = old_ports
        .iter()
        .filter_map(|p| Some((name_of(p), p["nodePort"].as_u64().filter(|n| *n != 0)?)))
        .collect();
    let Some(Value::Array(ports)) = spec_mut(service).get_mut("ports") else {
        return;
    };
    let mut used: BTreeSet<u64> = ports
        .iter()
        .filter_map(|p| p["nodePort"].as_u64())
        .collect();
    for port in ports.iter_mut().filter(|p| unset(&p["nodePort"])) {
        if let Some(kept) = by_name.get(&name_of(port)) {
            if used.insert(*kept) {
                port["nodePort"] = json!(kept);
            }
        }
    }
}

fn name_of(port: &Value) -> String {
    port["name"].as_str().unwrap_or("").to_owned()
}

/// Absent, null or 0 / "": nothing requested, so something may be allocated.
fn unset(value: &Value) -> bool {
    matches!(value, Value::Null) || *value == json!(0) || *value == json!("")
}

fn validate(service: &Value) -> Result<(), Errors> {
    let mut errors = names::validate(service, NameRule::Dns1035Label);
    let spec = &service["spec"];
    let kind = service_type(service);
    const TYPES: [&str; 4] = ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"];
    if !TYPES.contains(&kind) {
        errors.push(FieldError::not_supported(
            "spec.type",
            json!(kind),
            TYPES.to_vec(),
        ));
    }
    errors.extend(validate_ports(service));
    if let Some(policy) = spec.get("externalTrafficPolicy") {
        if !external_facing(service) {
            errors.push(FieldError::invalid(
                "spec.externalTrafficPolicy",
                policy.clone(),
                "may only be set when `type` is 'NodePort' or 'LoadBalancer'",
            ));
        } else if !["Cluster", "Local"].contains(&policy.as_str().unwrap_or("")) {
            errors.push(FieldError::not_supported(
                "spec.externalTrafficPolicy",
                policy.clone(),
                vec!["Cluster", "Local"],
            ));
        }
    }
    let hc = &spec["healthCheckNodePort"];
    if !unset(hc) && !needs_health_check_port(service) {
        errors.push(FieldError::invalid(
            "spec.healthCheckNodePort",
            hc.clone(),
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ));
    }
    let affinity = &spec["sessionAffinity"];
    if !["None", "ClientIP"].contains(&affinity.as_str().unwrap_or("")) {
        errors.push(FieldError::not_supported(
            "spec.sessionAffinity",
            affinity.clone(),
            vec!["ClientIP", "None"],
        ));
    }
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors),
    }
}

fn validate_ports(service: &Value) -> Errors {
    let mut errors = Vec::new();
    let ports = service["spec"]["ports"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let kind = service_type(service);
    if ports.is_empty() && kind != "ExternalName" {
        errors.push(FieldError::required("spec.ports", ""));
    }
    let mut names = BTreeSet::new();
    let mut port_protocols = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let field = |name: &str| format!("spec.ports[{i}].{name}");
        let name = name_of(port);
        if ports.len() > 1 && name.is_empty() {
            errors.push(FieldError::required(field("name"), ""));
        } else if !name.is_empty() && !names.insert(name.clone()) {
            errors.push(FieldError::duplicate(field("name"), json!(name)));
        }
        let number = port["port"].as_u64().unwrap_or(0);
        if !(1..=65535).contains(&number) {
            errors.push(FieldError::invalid(
                field("port"),
                port["port"].clone(),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = port["protocol"].as_str().unwrap_or("");
        if !["TCP", "UDP", "SCTP"].contains(&protocol) {
            errors.push(FieldError::not_supported(
                field("protocol"),
                json!(protocol),
                vec!["SCTP", "TCP", "UDP"],
            ));
        }
        if !port_protocols.insert((number, protocol.to_owned())) {
            errors.push(FieldError::duplicate(
                format!("spec.ports[{i}]"),
                json!({"port": number, "protocol": protocol}),
            ));
        }
        if !unset(&port["nodePort"]) && kind == "ClusterIP" {
            errors.push(FieldError::forbidden(
                field("nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            ));
        }
        if let Some(target) = port["targetPort"].as_u64() {
            if !(1..=65535).contains(&target) {
                errors.push(FieldError::invalid(
                    field("targetPort"),
                    json!(target),
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
    errors
}

/// Cluster IP, node ports and the health-check port: the requested ones checked, the missing
/// ones given. The Service's own old ports count as taken for new allocations.
fn allocate(
    world: &World,
    key: &str,
    service: &mut Value,
    old: Option<&Value>,
) -> Result<(), Errors> {
    let mut errors = Vec::new();
    if needs_cluster_ip(service) {
        if let Err(e) = allocate_cluster_ip(world, key, service, old) {
            errors.push(e);
        }
    }
    if needs_node_ports(service) || needs_health_check_port(service) {
        let others = alloc::node_ports_in_use(world, key);
        let own_old = old.map(alloc::service_node_ports).unwrap_or_default();
        errors.extend(allocate_node_ports(service, &others, &own_old));
    }
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors),
    }
}

fn allocate_cluster_ip(
    world: &World,
    key: &str,
    service: &mut Value,
    old: Option<&Value>,
) -> Result<(), FieldError> {
    let requested = service["spec"]["clusterIP"].clone();
    let ip = match requested.as_str().unwrap_or("") {
        "None" => "None".to_owned(),
        "" => alloc::free_cluster_ip(&alloc::cluster_ips_in_use(world, key))
            .ok_or_else(|| {
                FieldError::invalid("spec.clusterIPs", requested.clone(), "range is full")
            })?
            .to_string(),
        text if old.is_some_and(|o| o["spec"]["clusterIP"] == requested) => text.to_owned(),
        text => check_requested_ip(world, key, text)?.to_string(),
    };
    let spec = spec_mut(service);
    spec.insert("clusterIP".into(), json!(ip));
    spec.insert("clusterIPs".into(), json!([ip]));
    Ok(())
}

fn check_requested_ip(world: &World, key: &str, text: &str) -> Result<Ipv4Addr, FieldError> {
    let invalid = |detail: String| FieldError::invalid("spec.clusterIPs", json!([text]), detail);
    let ip: Ipv4Addr = text
        .parse()
        .map_err(|_| invalid("must be a valid IP address".into()))?;
    if !alloc::in_service_cidr(ip) {
        return Err(invalid(format!(
            "failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. \
             The range of valid IPs is 10.96.0.0/12"
        )));
    }
    if alloc::cluster_ips_in_use(world, key).contains(&ip) {
        return Err(invalid(format!(
            "failed to allocate IP {ip}: provided IP is already allocated"
        )));
    }
    Ok(ip)
}

fn allocate_node_ports(
    service: &mut Value,
    others: &BTreeSet<u16>,
    own_old: &BTreeSet<u16>,
) -> Errors {
    let mut errors = Vec::new();
    let mut taken: BTreeSet<u16> = others.union(own_old).copied().collect();
    let wants_ports = needs_node_ports(service);
    let wants_hc = needs_health_check_port(service);
    let mut requested = Vec::new();
    if let Some(Value::Array(ports)) = service["spec"].get("ports") {
        for (i, port) in ports.iter().enumerate() {
            if wants_ports && !unset(&port["nodePort"]) {
                requested.push((
                    format!("spec.ports[{i}].nodePort"),
                    port["nodePort"].clone(),
                ));
            }
        }
    }
    if wants_hc && !unset(&service["spec"]["healthCheckNodePort"]) {
        let hc = service["spec"]["healthCheckNodePort"].clone();
        requested.push(("spec.healthCheckNodePort".into(), hc));
    }
    for (field, value) in requested {
        match check_requested_port(&value, others) {
            Ok(port) => drop(taken.insert(port)),
            Err(detail) => errors.push(FieldError::invalid(field, value, detail)),
        }
    }
    let mut next = || {
        let port = alloc::free_node_port(&taken)?;
        taken.insert(port);
        Some(port)
    };
    if wants_ports {
        if let Some(Value::Array(ports)) = spec_mut(service).get_mut("ports") {
            for port in ports.iter_mut().filter(|p| unset(&p["nodePort"])) {
                match next() {
                    Some(allocated) => port["nodePort"] = json!(allocated),
                    None => errors.push(FieldError::invalid(
                        "spec.ports",
                        json!(null),
                        "range is full",
                    )),
                }
            }
        }
    }
    if wants_hc && unset(&service["spec"]["healthCheckNodePort"]) {
        match next() {
            Some(allocated) => {
                spec_mut(service).insert("healthCheckNodePort".into(), json!(allocated));
            }
            None => errors.push(FieldError::invalid(
                "spec.healthCheckNodePort",
                json!(null),
                "range is full",
            )),
        }
    }
    errors
}

fn check_requested_port(value: &Value, others: &BTreeSet<u16>) -> Result<u16, String> {
    let number = value.as_u64().unwrap_or(0);
    if !alloc::in_node_port_range(number) {
        return Err(format!(
            "provided port is not in the valid range. The range of valid ports is {}-{}",
            alloc::NODE_PORT_MIN,
            alloc::NODE_PORT_MAX
        ));
    }
    let port = number as u16;
    if others.contains(&port) {
        return Err("provided port is already allocated".into());
    }
    Ok(port)
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
