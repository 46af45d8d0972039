//! cloudscale's config section: `[provider.cloudscale]` and `[load-balancer.NAME]` with
//! provider "cloudscale" → [`CloudscaleSettings`] and [`CloudscaleLoadBalancerSpec`] with the
//! cloudscale CCM's defaults (`load_balancer.rs`), bound to a Service or not (`binding.rs`).
//! Each bad value is reported at its position and replaced by its default, so one run reports
//! everything.

mod binding;
mod load_balancer;
mod raw;

use std::collections::HashMap;
use std::ops::Range;

use schemars::{json_schema, Schema, SchemaGenerator};
use skyplan_core::config::section::{
    self as values, once, Checker, ConfigSection, Declared, Endpoint, Invalid, Opaque, Problem,
    Problems, Raw, Resolving, Resource, SectionSchema, SourceFile, Table,
};
use skyplan_core::model::ResourceKind;
use toml::de::ValueDeserializer;

use crate::spec::{CloudscaleSettings, DEFAULT_MAX_CONCURRENT_REQUESTS};
use raw::{RawCloudscale, RawLoadBalancer, RawPort};

/// The section the registry lists.
pub struct CloudscaleConfig;

impl ConfigSection for CloudscaleConfig {
    fn provider(&self) -> &'static str {
        crate::diff::PROVIDER
    }

    fn secret_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[("token", "the environment variable CLOUDSCALE_API_TOKEN")]
    }

    fn kinds(&self) -> &'static [ResourceKind] {
        &[ResourceKind::LoadBalancer]
    }

    fn parse_settings(&self, table: ValueDeserializer<'_>) -> Result<Raw, toml::de::Error> {
        values::raw::<RawCloudscale>(table)
    }

    fn parse_resource(
        &self,
        _kind: ResourceKind,
        table: ValueDeserializer<'_>,
    ) -> Result<Raw, toml::de::Error> {
        values::raw::<RawLoadBalancer>(table)
    }

    fn settings(&self, table: &Table<'_>, problems: &mut Problems) -> Opaque {
        Opaque::new(settings(table, problems))
    }

    fn resource(
        &self,
        _kind: ResourceKind,
        key: &str,
        table: &Table<'_>,
        _context: &Resolving<'_>,
        problems: &mut Problems,
    ) -> Resource {
        load_balancer::resource(key, table, problems)
    }

    fn validate(&self, declared: &Declared<'_, '_>, problems: &mut Problems) {
        let lbs: Vec<Lb> = (declared.tables(ResourceKind::LoadBalancer))
            .map(|(key, table)| Lb {
                key,
                file: table.file,
                raw: table.get(),
            })
            .collect();
        for lb in &lbs {
            let mut check = Checker::new(lb.file, problems);
            ports_are_distinct(lb.raw, &mut check);
            health_check_node_port_needs_local(lb.raw, &mut check);
        }
        floating_ips_are_claimed_once(&lbs, problems);
        binding::validate(&lbs, &declared.cluster_names(), problems);
    }

    fn embedded_at(&self, settings: &Table<'_>) -> Option<Range<usize>> {
        let endpoint = settings.get::<RawCloudscale>().endpoint.as_ref();
        // No endpoint means the embedded simulator (contract.md).
        let embedded = endpoint.is_none_or(|e| e.get_ref() == "embedded");
        embedded.then(|| endpoint.map_or_else(|| settings.span(), |e| e.span()))
    }

    fn controller_mode<'t>(&self, table: &'t Table<'_>) -> Option<(Range<usize>, &'t str)> {
        let lb: &RawLoadBalancer = table.get();
        let mode = lb.mode.as_ref().filter(|m| m.get_ref() == "ccm")?;
        Some((mode.span(), lb.cluster.as_ref()?.get_ref()))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> SectionSchema {
        SectionSchema {
            settings: Some(generator.subschema_for::<RawCloudscale>()),
            resources: vec![(
                ResourceKind::LoadBalancer,
                generator.subschema_for::<RawLoadBalancer>(),
            )],
        }
    }
}

/// A load balancer table, for the rules across them.
struct Lb<'a> {
    key: &'a str,
    file: &'a SourceFile,
    raw: &'a RawLoadBalancer,
}

fn settings(table: &Table<'_>, problems: &mut Problems) -> CloudscaleSettings {
    let raw: &RawCloudscale = table.get();
    let mut check = Checker::new(table.file, problems);
    if let Some(token) = &raw.token {
        let message = "API tokens do not belong in config files";
        let help = "remove `token` and set the environment variable CLOUDSCALE_API_TOKEN";
        // The snippet would show the token's line.
        let problem = Problem::at(table.file, token.span(), message).without_snippet();
        check.push(problem.with_help(help));
    }
    let endpoint = raw.endpoint.as_ref();
    let concurrency = raw.max_concurrent_requests.as_ref();
    CloudscaleSettings {
        endpoint: endpoint
            .and_then(|e| check.text(e, values::endpoint))
            .unwrap_or(Endpoint::Embedded),
        max_concurrent_requests: concurrency
            .and_then(|n| check.number(n, max_concurrent_requests))
            .unwrap_or(DEFAULT_MAX_CONCURRENT_REQUESTS),
    }
}

/// `max-concurrent-requests`: at least one request, and no more than a real API would serve
/// one client at once.
fn max_concurrent_requests(number: i64) -> Result<usize, Invalid> {
    usize::try_from(number)
        .ok()
        .filter(|n| (1..=256).contains(n))
        .ok_or_else(|| {
            Invalid::new(format!(
                "{number} is not a number of requests from 1 to 256"
            ))
            .help("the default is 16; lower it if the API answers 429 often")
        })
}

/// Kubernetes requires the ports of a Service to differ in name and in number+protocol, and
/// every port to be named once there are several; the pool names depend on it.
fn ports_are_distinct(lb: &RawLoadBalancer, check: &mut Checker) {
    let ports = lb.ports.get_ref();
    if ports.is_empty() {
        let invalid = Invalid::new("a load balancer needs at least one port")
            .help("add a [[load-balancer.NAME.ports]] table with port and node-port");
        check.report(lb.ports.span(), invalid);
    }
    let mut names = HashMap::new();
    let mut numbers = HashMap::new();
    for port in ports {
        let span = port.span();
        let port = port.get_ref();
        match port.name.as_ref().filter(|name| !name.get_ref().is_empty()) {
            Some(name) => {
                let what = format!("port name `{}`", name.get_ref());
                once(
                    &mut names,
                    name.get_ref().clone(),
                    name.span(),
                    &what,
                    check,
                );
            }
            None if ports.len() > 1 => unnamed(port, span, check),
            None => {}
        }
        let protocol = port
            .protocol
            .as_ref()
            .map_or("tcp", |p| p.get_ref().as_str());
        // Each port gets a listener named `protocol/port`, with the listener protocol for TCP
        // ports: a TCP and a UDP port on one number clash when the listeners are both UDP.
        let listener = match protocol {
            "udp" => "udp",
            _ => lb
                .listener_protocol
                .as_ref()
                .map_or("tcp", |p| p.get_ref().as_str()),
        };
        let number = *port.port.get_ref();
        let what = if listener == "tcp" {
            format!("port {number}/{protocol}")
        } else {
            format!("port {number}/{protocol} (listener {listener}/{number})")
        };
        once(
            &mut numbers,
            (number, listener),
            port.port.span(),
            &what,
            check,
        );
    }
}

fn unnamed(port: &RawPort, table: Range<usize>, check: &mut Checker) {
    let span = port.name.as_ref().map_or(table, |name| name.span());
    let invalid = Invalid::new(format!("port {} needs a name", port.port.get_ref()))
        .help("a load balancer with several ports needs a name on each, as Kubernetes does");
    check.report(span, invalid);
}

fn health_check_node_port_needs_local(lb: &RawLoadBalancer, check: &mut Checker) {
    let Some(port) = &lb.health_check_node_port else {
        return;
    };
    // An invalid policy is reported on its own; do not guess what it meant.
    let policy = lb.traffic_policy.as_ref().map(|p| p.get_ref().as_str());
    if matches!(policy, None | Some("Cluster")) {
        let invalid =
            Invalid::new("health-check-node-port only applies with traffic-policy = \"Local\"")
                .help("remove health-check-node-port, or set traffic-policy = \"Local\"");
        check.report(port.span(), invalid);
    }
}

/// Where a load balancer lists a floating IP.
struct Claim<'a> {
    lb: &'a str,
    file: &'a SourceFile,
    span: Range<usize>,
}

/// The CCM refuses a floating IP claimed by two load balancers: each would take it from the
/// other in turn.
fn floating_ips_are_claimed_once(lbs: &[Lb<'_>], problems: &mut Problems) {
    let mut claims: HashMap<String, Claim> = HashMap::new();
    for lb in lbs {
        let name = lb.key;
        for ip in &lb.raw.floating_ips {
            let Ok(network) = values::cidr(ip.get_ref()) else {
                continue; // reported when the load balancer is resolved
            };
            let claim = Claim {
                lb: name,
                file: lb.file,
                span: ip.span(),
            };
            let network = network.to_string();
            match claims.get(&network) {
                Some(first) => problems.push(claimed_twice(&network, first, claim)),
                None => {
                    claims.insert(network, claim);
                }
            }
        }
    }
}

fn claimed_twice(network: &str, first: &Claim, second: Claim) -> Problem {
    let message = if first.lb == second.lb {
        format!(
            "floating IP {network} is listed twice in load-balancer.{}",
            first.lb
        )
    } else {
        format!(
            "floating IP {network} is claimed by load-balancer.{} and load-balancer.{}",
            first.lb, second.lb
        )
    };
    let note = Problem::at(first.file, first.span.clone(), "first claimed here");
    Problem::at(second.file, second.span, message)
        .with_help("a floating IP belongs to one load balancer; the cloudscale CCM refuses this")
        .with_note(note)
}

/// The JSON schema of the cloudscale tables' values that are checked after parsing.
mod schema {
    use super::*;

    /// `[provider.cloudscale] max-concurrent-requests`, checked like a port for the same reason.
    pub(super) fn max_concurrent_requests(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": 1, "maximum": 256 })
    }
}

#[cfg(test)]
mod tests;
