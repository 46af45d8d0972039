//! The LB rules on one public IP in direct mode, as `[load-balancer.NAME]`: the address
//! itself as `public-ip`; the rules' common base as `name` (skyplan names each rule
//! `<name>-<protocol>-<port>`); what every rule shares — description, algorithm, source CIDRs,
//! members — once; the members as `cluster = "<key>"` when they are exactly the workers of a
//! CKS cluster the config has (or adopts in the same run) with its worker count as it is,
//! else by VM name; the network only where the members would not give the rules' own; the
//! firewall rules' CIDRs when every port has one alike. What differs from rule to rule, or
//! what the config has no key for, is refused.

use std::collections::BTreeSet;
use std::fmt::Debug;

use super::cluster::adoptable;
use super::{catalog_name, claimed_entry, config_cidr, plans_nothing, refuse, Outcome, Refusal};
use crate::adopt::split_rule_name;
use crate::api::{KubernetesCluster, LoadBalancerRule, PublicIpAddress, VirtualMachine};
use crate::cluster::find_live;
use crate::lb::desired::{facts, ANYWHERE};
use crate::lb::diff::firewall_protocol;
use crate::live::{ClusterRef, Inventory, Live, PlanInput};
use crate::spec::{
    CloudstackClusterSpec, CloudstackLoadBalancerSpec, CsAlgorithm, CsMembers, CsPort, CsProtocol,
    PublicIp,
};
use crate::PROVIDER;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::Adopting;

/// The members' cluster, as the config will name it.
struct MembersCluster<'a> {
    address: Address,
    spec: CloudstackClusterSpec,
    live: &'a KubernetesCluster,
}

pub(super) fn generate(
    address: &Address,
    ip: &PublicIpAddress,
    rules: &[&LoadBalancerRule],
    live: &Live,
    adopting: &Adopting,
) -> Outcome {
    let inventory = &live.inventory;
    let ports = ports(rules)?;
    let name = base_name(rules, &ports)?;
    let description = same(rules, "description", |r| {
        r.description.clone().filter(|d| !d.is_empty())
    })?;
    let algorithm = same(rules, "algorithm", |r| r.algorithm.clone())?;
    let algorithm = CsAlgorithm::parse(&algorithm).ok_or_else(|| {
        refuse(
            "algorithm",
            format!("`{algorithm}` is not an algorithm the config knows (roundrobin, source, leastconn)"),
        )
    })?;
    let allowed_cidrs = same(rules, "allowed-cidrs", LoadBalancerRule::cidrs)?
        .iter()
        .map(|c| config_cidr(c, "allowed-cidrs"))
        .collect::<Result<Vec<_>, _>>()?;
    let vms = members(rules, inventory)?;
    let cluster = members_cluster(&vms, live, adopting);
    let members = match &cluster {
        Some(c) => CsMembers::Cluster(c.address.name.clone()),
        None => CsMembers::Vms(vms.iter().map(|vm| vm.name.clone()).collect()),
    };
    let live_network = rules
        .iter()
        .find_map(|r| r.networkid.clone())
        .or(ip.associatednetworkid.clone());
    let derived = match &cluster {
        Some(c) => c.live.networkid.clone(),
        None => network_of(&vms),
    };
    let network = match (&live_network, derived) {
        (Some(own), Some(derived)) if *own == derived => None,
        (Some(own), _) => Some(network_written(own, inventory)?),
        (None, Some(_)) => None,
        (None, None) => {
            return Err(refuse(
                "network",
                "the rules name no network and the members give none",
            ))
        }
    };
    let firewall_cidrs = firewall(ip, rules, live_network.as_deref(), inventory)?;
    let spec = CloudstackLoadBalancerSpec {
        name,
        description,
        public_ip: PublicIp::Address(ip.ipaddress.clone()),
        network,
        members,
        algorithm,
        allowed_cidrs,
        firewall_cidrs,
        ports,
        binding: None,
    };
    check(address, &spec, &ip.id, cluster.as_ref(), inventory)?;
    Ok(super::lb_toml(address, &spec))
}

fn ports(rules: &[&LoadBalancerRule]) -> Result<Vec<CsPort>, Refusal> {
    rules
        .iter()
        .map(|rule| {
            let at = format!("ports.{}", rule.publicport);
            let port = u16::try_from(rule.publicport)
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| refuse(&at, format!("{} is not a port", rule.publicport)))?;
            let protocol =
                CsProtocol::parse(&rule.protocol.to_ascii_lowercase()).ok_or_else(|| {
                    refuse(
                        format!("{at}.protocol"),
                        format!(
                            "rule {} has protocol {}; the config knows tcp, udp and tcp-proxy",
                            rule.name, rule.protocol
                        ),
                    )
                })?;
            let node_port = u16::try_from(rule.privateport)
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| {
                    refuse(
                        format!("{at}.node-port"),
                        format!("rule {} has private port {}", rule.name, rule.privateport),
                    )
                })?;
            Ok(CsPort {
                port,
                protocol,
                node_port,
            })
        })
        .collect()
}

/// The base every rule is named from: skyplan names rule `<name>-<protocol>-<port>`, and would
/// rename any other.
fn base_name(rules: &[&LoadBalancerRule], ports: &[CsPort]) -> Result<String, Refusal> {
    let bases: BTreeSet<&str> = rules
        .iter()
        .filter_map(|r| split_rule_name(&r.name).map(|(base, _, _)| base))
        .collect();
    let base = match bases.iter().collect::<Vec<_>>().as_slice() {
        [one] => one.to_string(),
        _ => {
            let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
            return Err(refuse(
                "name",
                format!(
                    "skyplan names the rules of a load balancer <name>-<protocol>-<port> from one name; these are named {}",
                    names.join(", ")
                ),
            ));
        }
    };
    for (rule, port) in rules.iter().zip(ports) {
        let wanted = format!("{base}-{}-{}", port.protocol, port.port);
        if rule.name != wanted {
            return Err(refuse(
                "name",
                format!(
                    "rule {} ({} {}) would be renamed {wanted}: skyplan names the rules <name>-<protocol>-<port>",
                    rule.name, rule.protocol, rule.publicport
                ),
            ));
        }
    }
    Ok(base)
}

/// The value every rule has; the config gives the rules of a load balancer one.
fn same<T: PartialEq + Debug>(
    rules: &[&LoadBalancerRule],
    attribute: &str,
    read: impl Fn(&LoadBalancerRule) -> T,
) -> Result<T, Refusal> {
    let first = read(rules[0]);
    for rule in &rules[1..] {
        let other = read(rule);
        if other != first {
            return Err(refuse(
                attribute,
                format!(
                    "rule {} has {first:?} and rule {} {other:?}: the config gives every rule of a load balancer one {attribute}",
                    rules[0].name, rule.name
                ),
            ));
        }
    }
    Ok(first)
}

/// The rules' member VMs (every rule has the same), sorted by name; each name must find its
/// VM, as the config names them.
fn members<'a>(
    rules: &[&LoadBalancerRule],
    inventory: &'a Inventory,
) -> Result<Vec<&'a VirtualMachine>, Refusal> {
    let read = |rule: &LoadBalancerRule| {
        let ids = inventory.rule_members.get(&rule.id);
        ids.map(|ids| ids.iter().cloned().collect::<BTreeSet<String>>())
    };
    let ids = same(rules, "members", read)?
        .ok_or_else(|| refuse("members", "the rules' members were not read"))?;
    let mut vms = Vec::new();
    for id in &ids {
        let vm = inventory
            .vm(id)
            .ok_or_else(|| refuse("members", format!("member VM {id} is not in the account")))?;
        if inventory.vm_by_name(&vm.name).map(|v| v.id.as_str()) != Some(id) {
            return Err(refuse(
                "members",
                format!(
                    "two VMs are named {}: the config names members by name",
                    vm.name
                ),
            ));
        }
        vms.push(vm);
    }
    vms.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(vms)
}

/// The CKS cluster whose workers are exactly the members, as the config names it: adopted in
/// this run, or configured with its live worker count (or autoscaled).
fn members_cluster<'a>(
    vms: &[&VirtualMachine],
    live: &'a Live,
    adopting: &Adopting,
) -> Option<MembersCluster<'a>> {
    let inventory = &live.inventory;
    let ids: BTreeSet<&str> = vms.iter().map(|vm| vm.id.as_str()).collect();
    if ids.is_empty() {
        return None;
    }
    inventory
        .clusters
        .iter()
        .filter(|c| crate::adopt::alive(c))
        .filter(|c| {
            let workers: BTreeSet<&str> = inventory
                .cluster_workers(c)
                .iter()
                .map(|vm| vm.id.as_str())
                .collect();
            workers == ids
        })
        .find_map(|c| {
            if let Some(address) = adopting.address(PROVIDER, &c.id) {
                // A cluster refused is not declared: the members are then named.
                let spec = adoptable(address, c, inventory).ok()?;
                return Some(MembersCluster {
                    address: address.clone(),
                    spec,
                    live: c,
                });
            }
            let (address, known) = live.clusters.iter().find(|(_, known)| {
                let name = known.spec.as_ref().map(|s| s.name.as_str());
                known.spec.is_some()
                    && find_live(inventory, known.prior_id.as_deref(), name)
                        .is_some_and(|found| found.id == c.id)
            })?;
            let spec = known.spec.clone()?;
            let keeps_size = spec.autoscaling.is_some() || spec.workers == c.size;
            keeps_size.then(|| MembersCluster {
                address: address.clone(),
                spec,
                live: c,
            })
        })
}

/// The network of the VMs' default NICs, when they share one.
fn network_of(vms: &[&VirtualMachine]) -> Option<String> {
    let networks: BTreeSet<&str> = vms
        .iter()
        .filter_map(|vm| vm.nic.iter().find(|n| n.isdefault).or(vm.nic.first()))
        .map(|nic| nic.networkid.as_str())
        .collect();
    match networks.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

fn network_written(id: &str, inventory: &Inventory) -> Result<String, Refusal> {
    let network = inventory
        .networks
        .iter()
        .find(|n| n.id == id)
        .ok_or_else(|| {
            refuse(
                "network",
                format!("the rules' network {id} is not among the account's networks"),
            )
        })?;
    let written = catalog_name(&network.id, Some(&network.name), |name| {
        inventory.network(name).map(|n| n.id.as_str())
    });
    Ok(written.to_string())
}

/// The CIDRs of the port's one firewall rule, alike on every port; open to everyone when the
/// network has no firewall (a VPC tier: the config's value is not applied there).
fn firewall(
    ip: &PublicIpAddress,
    rules: &[&LoadBalancerRule],
    network: Option<&str>,
    inventory: &Inventory,
) -> Result<Vec<String>, Refusal> {
    let open = vec![ANYWHERE.to_string()];
    let has_firewall = network
        .and_then(|id| inventory.networks.iter().find(|n| n.id == id))
        .and_then(|n| facts(n).ok())
        .is_some_and(|f| f.firewall);
    if !has_firewall {
        return Ok(open);
    }
    let per_port = |rule: &LoadBalancerRule| {
        let protocol = firewall_protocol(&rule.protocol);
        let port = rule.publicport;
        let matching: Vec<_> = inventory
            .firewall_rules_on(&ip.id)
            .filter(|f| f.protocol.eq_ignore_ascii_case(protocol))
            .filter(|f| f.startport == port && f.endport == port)
            .collect();
        match matching.as_slice() {
            [one] => Ok(one.cidrs()),
            [] => Err(refuse(
                "firewall-cidrs",
                format!(
                    "{protocol}/{port} on {} has no firewall rule, so it is closed; skyplan opens every port of a load balancer to firewall-cidrs",
                    ip.ipaddress
                ),
            )),
            many => Err(refuse(
                "firewall-cidrs",
                format!(
                    "{protocol}/{port} on {} has {} firewall rules; skyplan keeps one per port",
                    ip.ipaddress,
                    many.len()
                ),
            )),
        }
    };
    let mut cidrs = None;
    for rule in rules {
        let these = per_port(rule)?;
        match &cidrs {
            None => cidrs = Some(these),
            Some(first) if *first != these => {
                return Err(refuse(
                    "firewall-cidrs",
                    format!(
                        "the firewall rules differ by port ({first:?} and {these:?} on port {}): the config gives every port one list",
                        rule.publicport
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    cidrs
        .unwrap_or(open)
        .iter()
        .map(|c| config_cidr(c, "firewall-cidrs"))
        .collect()
}

/// Imported and planned against the same account, the load balancer plans nothing.
fn check(
    address: &Address,
    spec: &CloudstackLoadBalancerSpec,
    ip_id: &str,
    cluster: Option<&MembersCluster<'_>>,
    inventory: &Inventory,
) -> Result<(), Refusal> {
    let entry = claimed_entry(ip_id);
    let input = PlanInput {
        address,
        desired: Some(spec),
        prior: Some(&entry),
        live: inventory,
        replace: false,
        allow_delete: false,
    };
    let imported = crate::lb::import(&input).map_err(|e| refuse("public-ip", e.message))?;
    let cluster_ref = cluster.map(|c| ClusterRef {
        address: &c.address,
        spec: Some(&c.spec),
        live: Some(c.live),
    });
    debug_assert!(cluster.is_none_or(|c| c.address.kind == ResourceKind::Cluster));
    plans_nothing(crate::lb::plan(
        &PlanInput {
            prior: Some(&imported),
            ..input
        },
        cluster_ref,
    ))
}
