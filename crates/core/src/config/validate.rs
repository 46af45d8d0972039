//! Rules that span several values: a load balancer's ports among themselves, the provider a
//! resource names, and floating IPs across load balancers.

use std::collections::HashMap;
use std::ops::Range;

use super::check::Checker;
use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::parse::RawConfig;
use super::raw::{RawLoadBalancer, RawPort};
use super::section::Declared;
use super::values::{self, Invalid};

pub(super) fn validate(raw: &RawConfig<'_>, problems: &mut Problems) {
    for lb in raw.load_balancers.values() {
        let mut check = Checker::new(lb.file, problems);
        provider_is_configured(lb.get(), raw, &mut check);
        ports_are_distinct(lb.get(), &mut check);
        health_check_node_port_needs_local(lb.get(), &mut check);
    }
    floating_ips_are_claimed_once(raw, problems);
    super::binding::validate(raw, problems);
    other_clusters_are_refused(raw, problems);
    sections_have_their_tables(raw, problems);
    for index in 0..raw.sections.len() {
        let declared = Declared {
            raw,
            section: index,
        };
        raw.sections[index].validate(&declared, problems);
    }
    super::kubernetes::validate(raw, problems);
    super::controller::validate(raw, problems);
}

fn provider_is_configured(lb: &RawLoadBalancer, raw: &RawConfig<'_>, check: &mut Checker) {
    provider_has_table(&lb.provider, raw, check);
}

/// A `[cluster.NAME]` is read by the provider it names; one naming no provider of clusters
/// is refused, saying which are.
fn other_clusters_are_refused(raw: &RawConfig<'_>, problems: &mut Problems) {
    let providers = raw.cluster_providers();
    let help = format!(
        "write provider = \"{}\" (an existing cluster skyplan connects to){}",
        providers[0],
        match &providers[1..] {
            [] => String::new(),
            creators => format!(
                " or \"{}\" (a cluster skyplan creates)",
                creators.join("\", \"")
            ),
        }
    );
    for cluster in raw.other_clusters.values() {
        let mut check = Checker::new(cluster.file, problems);
        let (span, message) = match &cluster.get().provider {
            None => (cluster.span(), "a cluster needs a provider".to_string()),
            Some(provider) if raw.provider_names().contains(&provider.get_ref().as_str()) => (
                provider.span(),
                format!("`{}` cannot manage clusters", provider.get_ref()),
            ),
            Some(provider) => (
                provider.span(),
                format!("`{}` is not a supported provider", provider.get_ref()),
            ),
        };
        check.report(span, Invalid::new(message).help(help.clone()));
    }
}

/// Every resource table of a section's provider comes with its provider's table.
fn sections_have_their_tables(raw: &RawConfig<'_>, problems: &mut Problems) {
    for resource in raw.section_resources.values() {
        let provider = raw.sections[resource.section].provider();
        let mut check = Checker::new(resource.table.file, problems);
        table_is_present(provider, resource.provider.clone(), raw, &mut check);
    }
}

/// The provider a resource names is one skyplan knows, and the config has its table.
pub(super) fn provider_has_table(
    provider: &serde_spanned::Spanned<String>,
    raw: &RawConfig<'_>,
    check: &mut Checker,
) {
    let names = raw.provider_names();
    let name = provider.get_ref();
    if !names.contains(&name.as_str()) {
        let invalid = Invalid::new(format!("`{name}` is not a supported provider"))
            .help(format!("expected one of \"{}\"", names.join("\", \"")));
        return check.report(provider.span(), invalid);
    }
    table_is_present(name, provider.span(), raw, check);
}

/// The config has a `[provider.NAME]` table for `provider`, named at `span`.
fn table_is_present(provider: &str, span: Range<usize>, raw: &RawConfig<'_>, check: &mut Checker) {
    if raw.has_provider(provider) {
        return;
    }
    let invalid = Invalid::new(format!(
        "provider `{provider}` has no [provider.{provider}] table"
    ))
    .help(format!(
        "add [provider.{provider}] with endpoint = \"embedded\" or an API URL"
    ));
    check.report(span, invalid);
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

/// Records `key` at `span`, or reports it as a duplicate of its first occurrence.
pub fn once<K: std::hash::Hash + Eq>(
    seen: &mut HashMap<K, Range<usize>>,
    key: K,
    span: Range<usize>,
    what: &str,
    check: &mut Checker,
) {
    match seen.get(&key) {
        Some(first) => {
            let note = Problem::at(check.file, first.clone(), "first used here");
            let problem = Problem::at(check.file, span, format!("{what} is used twice"));
            check.push(problem.with_note(note));
        }
        None => {
            seen.insert(key, span);
        }
    }
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
fn floating_ips_are_claimed_once(raw: &RawConfig<'_>, problems: &mut Problems) {
    let mut claims: HashMap<String, Claim> = HashMap::new();
    for (name, lb) in &raw.load_balancers {
        for ip in &lb.get().floating_ips {
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
