//! A spec written back as the TOML the config section reads into it: keys in the order the
//! contract lists them, and only where the value is not the section's default (a name equal
//! to the table key, one control node, no etcd nodes, one worker, running; public IP "auto",
//! roundrobin, no allowed CIDRs, firewall open to 0.0.0.0/0, protocol tcp, no node port).

use std::fmt::Write;

use crate::spec::{
    CloudstackClusterSpec, CloudstackLoadBalancerSpec, ClusterRunState, CsAlgorithm, CsMembers,
    CsProtocol, PublicIp,
};
use crate::PROVIDER;
use skyplan_core::model::Address;

/// A TOML value as the config writes it (strings quoted and escaped, arrays inline).
fn value(value: impl Into<toml::Value>) -> String {
    value.into().to_string()
}

fn strings(items: &[String]) -> String {
    value(toml::Value::Array(
        items.iter().cloned().map(toml::Value::String).collect(),
    ))
}

struct Table(String);

impl Table {
    fn new(header: &str) -> Table {
        Table(format!("{header}\nprovider = {}\n", value(PROVIDER)))
    }

    fn key(&mut self, key: &str, written: String) {
        let _ = writeln!(self.0, "{key} = {written}");
    }
}

pub fn cluster_toml(address: &Address, spec: &CloudstackClusterSpec) -> String {
    let mut table = Table::new(&format!("[{address}]"));
    if spec.name != address.name {
        table.key("name", value(spec.name.as_str()));
    }
    if let Some(description) = &spec.description {
        table.key("description", value(description.as_str()));
    }
    table.key("zone", value(spec.zone.as_str()));
    table.key(
        "kubernetes-version",
        value(spec.kubernetes_version.as_str()),
    );
    let counts = [
        ("control-nodes", spec.control_nodes, 1),
        ("etcd-nodes", spec.etcd_nodes, 0),
        ("workers", spec.workers, 1),
    ];
    for (key, count, default) in counts {
        if count != default {
            table.key(key, value(i64::from(count)));
        }
    }
    table.key("service-offering", value(spec.service_offering.as_str()));
    if !spec.node_offerings.is_empty() {
        let entries: Vec<String> = spec
            .node_offerings
            .iter()
            .map(|(node, offering)| format!("{node} = {}", value(offering.as_str())))
            .collect();
        table.key("node-offerings", format!("{{ {} }}", entries.join(", ")));
    }
    if let Some(network) = &spec.network {
        table.key("network", value(network.as_str()));
    }
    if let Some(keypair) = &spec.keypair {
        table.key("keypair", value(keypair.as_str()));
    }
    if let Some(bounds) = spec.autoscaling {
        let written = format!("{{ min = {}, max = {} }}", bounds.min, bounds.max);
        table.key("autoscaling", written);
    }
    if spec.state != ClusterRunState::Running {
        table.key("state", value(spec.state.as_str()));
    }
    table.0
}

pub fn lb_toml(address: &Address, spec: &CloudstackLoadBalancerSpec) -> String {
    let mut table = Table::new(&format!("[{address}]"));
    if spec.name != address.name {
        table.key("name", value(spec.name.as_str()));
    }
    if let Some(description) = &spec.description {
        table.key("description", value(description.as_str()));
    }
    if let Some(binding) = &spec.binding {
        table.key("mode", value(binding.mode.as_str()));
        table.key("service", value(binding.service_ref()));
    }
    if let PublicIp::Address(ip) = &spec.public_ip {
        table.key("public-ip", value(ip.as_str()));
    }
    if let Some(network) = &spec.network {
        table.key("network", value(network.as_str()));
    }
    match &spec.members {
        CsMembers::Cluster(key) => table.key("cluster", value(key.as_str())),
        CsMembers::Vms(vms) if vms.is_empty() => {}
        CsMembers::Vms(vms) => table.key("members", strings(vms)),
    }
    if spec.algorithm != CsAlgorithm::RoundRobin {
        table.key("algorithm", value(spec.algorithm.as_str()));
    }
    if !spec.allowed_cidrs.is_empty() {
        table.key("allowed-cidrs", strings(&spec.allowed_cidrs));
    }
    if spec.firewall_cidrs != [crate::lb::desired::ANYWHERE] {
        table.key("firewall-cidrs", strings(&spec.firewall_cidrs));
    }
    let mut text = table.0;
    for port in &spec.ports {
        let _ = write!(
            text,
            "\n[[{address}.ports]]\nport = {}\n",
            i64::from(port.port)
        );
        if port.protocol != CsProtocol::Tcp {
            let _ = writeln!(text, "protocol = {}", value(port.protocol.as_str()));
        }
        if port.node_port != 0 {
            let _ = writeln!(text, "node-port = {}", i64::from(port.node_port));
        }
    }
    text
}
