//! The config's load balancer resolved against the live inventory: the network its rules live
//! in, the member VMs (or the cluster they come from once it is applied), and one rule per
//! port — with the checks that let `plan` report what the server would refuse.

use super::super::api::{Network, PublicIpAddress, VirtualMachine};
use super::super::live::{ClusterRef, Inventory};
use super::found::Found;
use super::ops::{MemberVm, NetworkRef};
use crate::spec::{CloudstackLoadBalancerSpec, CsMembers, CsPort, CsProtocol};

/// haproxy's stats port on the virtual router (`network.loadbalancer.haproxy.stats.port`,
/// default 8081): the server refuses it as a public port.
pub const HAPROXY_STATS_PORT: u16 = 8081;
/// DNS: refused as a public port on a source-NAT IP of a network offering DNS.
const DNS_PORT: u16 = 53;
/// What a firewall rule with no CIDRs opens to (the CCM and the server default alike).
pub const ANYWHERE: &str = "0.0.0.0/0";

/// The network of the rules and what it offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkFacts {
    pub reference: NetworkRef,
    /// The LB provider is the virtual router (haproxy): it refuses udp and reloads every rule
    /// of the network on each change.
    pub virtual_router: bool,
    /// The network has the Firewall service; VPC tiers use network ACLs instead.
    pub firewall: bool,
}

impl NetworkFacts {
    pub fn id(&self) -> Option<&str> {
        match &self.reference {
            NetworkRef::Known { id, .. } => Some(id),
            NetworkRef::OfCluster { .. } => None,
        }
    }

    pub fn name(&self) -> String {
        match &self.reference {
            NetworkRef::Known { name, .. } => name.clone(),
            NetworkRef::OfCluster { cluster } => format!("of cluster {cluster}"),
        }
    }
}

/// The rules' backends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Members {
    /// Known at plan time.
    Vms(Vec<MemberVm>),
    /// The workers of a cluster that is created or scaled in the same apply.
    AfterCluster {
        /// Its CloudStack name, to find it when the operation runs.
        cluster: String,
        /// Its address, for the plan.
        address: String,
        workers: u32,
    },
}

/// One rule the config asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredRule {
    pub name: String,
    pub port: CsPort,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desired {
    pub network: NetworkFacts,
    pub members: Members,
    pub rules: Vec<DesiredRule>,
    /// The firewall rules' CIDRs, sorted (empty in the config: open to anyone).
    pub firewall_cidrs: Vec<String>,
    /// The rules' source ACL, sorted.
    pub allowed_cidrs: Vec<String>,
}

/// Resolves the spec. `cluster` is the members' cluster when the spec names one.
pub fn desired(
    spec: &CloudstackLoadBalancerSpec,
    live: &Inventory,
    cluster: Option<ClusterRef<'_>>,
) -> Result<Desired, String> {
    let members = members(spec, live, cluster)?;
    let network = network(spec, live, cluster, &members)?;
    check_members_in(&network, &members, live)?;
    let mut rules: Vec<DesiredRule> = spec
        .ports
        .iter()
        .map(|port| DesiredRule {
            name: spec.rule_name(port),
            port: *port,
        })
        .collect();
    rules.sort_by_key(|r| r.port.port);
    Ok(Desired {
        network,
        members,
        rules,
        firewall_cidrs: firewall_cidrs(&spec.firewall_cidrs),
        allowed_cidrs: sorted(&spec.allowed_cidrs),
    })
}

fn sorted(cidrs: &[String]) -> Vec<String> {
    super::super::api::split_cidrs(&cidrs.join(","))
}

/// An empty list opens the port to anyone, as the CCM and createFirewallRule both do.
pub fn firewall_cidrs(cidrs: &[String]) -> Vec<String> {
    if cidrs.is_empty() {
        vec![ANYWHERE.to_string()]
    } else {
        sorted(cidrs)
    }
}

fn member(vm: &VirtualMachine) -> MemberVm {
    MemberVm {
        id: vm.id.clone(),
        name: vm.name.clone(),
    }
}

fn members(
    spec: &CloudstackLoadBalancerSpec,
    live: &Inventory,
    cluster: Option<ClusterRef<'_>>,
) -> Result<Members, String> {
    match &spec.members {
        CsMembers::Vms(names) => vms_by_name(live, names).map(Members::Vms),
        CsMembers::Cluster(key) => {
            let cluster = cluster.ok_or_else(|| {
                format!("members: cluster.{key} is neither in the config nor in the account")
            })?;
            match cluster_workers_now(live, cluster)? {
                Some(vms) => Ok(Members::Vms(vms)),
                None => Ok(after_cluster(cluster)),
            }
        }
    }
}

/// The live cluster's workers, when the config keeps its worker count (or leaves it to the
/// autoscaler); `None` when it does not exist yet or is scaled in the same apply (it is applied
/// before its load balancers).
fn cluster_workers_now(
    live: &Inventory,
    cluster: ClusterRef<'_>,
) -> Result<Option<Vec<MemberVm>>, String> {
    let Some(running) = cluster.live else {
        return match cluster.spec {
            Some(_) => Ok(None),
            None => Err(format!(
                "members: {} does not exist and is not in the config",
                cluster.address
            )),
        };
    };
    // With autoscaling the autoscaler owns the worker count: the config's is not applied.
    let scaled = |spec: &crate::spec::CloudstackClusterSpec| {
        spec.autoscaling.is_none() && spec.workers != running.size
    };
    if cluster.spec.is_some_and(scaled) {
        return Ok(None);
    }
    Ok(Some(
        live.cluster_workers(running)
            .into_iter()
            .map(member)
            .collect(),
    ))
}

fn after_cluster(cluster: ClusterRef<'_>) -> Members {
    let spec = cluster
        .spec
        .expect("a cluster that is not live is in the config");
    Members::AfterCluster {
        cluster: spec.name.clone(),
        address: cluster.address.to_string(),
        workers: spec.workers,
    }
}

fn vms_by_name(live: &Inventory, names: &[String]) -> Result<Vec<MemberVm>, String> {
    let unknown: Vec<&str> = names
        .iter()
        .filter(|name| live.vm_by_name(name).is_none())
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        let mut existing: Vec<&str> = live.vms.iter().map(|vm| vm.name.as_str()).collect();
        existing.sort_unstable();
        return Err(format!(
            "members: no VM named {} in the account; the VMs are: {}",
            unknown.join(", "),
            if existing.is_empty() {
                "(none)".to_string()
            } else {
                existing.join(", ")
            }
        ));
    }
    Ok(names
        .iter()
        .filter_map(|name| live.vm_by_name(name))
        .map(member)
        .collect())
}

fn has_service(network: &Network, service: &str) -> bool {
    network.service.iter().any(|s| s.name == service)
}

/// What a live network offers. A network listed without its services is taken as CKS's default
/// (isolated, virtual router, firewall unless it is a VPC tier): for udp that is the stricter
/// reading.
pub(crate) fn facts(network: &Network) -> Result<NetworkFacts, String> {
    let reference = NetworkRef::Known {
        id: network.id.clone(),
        name: network.name.clone(),
    };
    if network.service.is_empty() {
        return Ok(NetworkFacts {
            reference,
            virtual_router: true,
            firewall: network.vpcid.is_none(),
        });
    }
    if !has_service(network, "Lb") {
        return Err(format!(
            "network {} has no Lb service: it cannot hold load-balancer rules",
            network.name
        ));
    }
    Ok(NetworkFacts {
        reference,
        // Isolated networks and VPC tiers balance with the (VPC) virtual router's haproxy;
        // only a shared network may have another LB provider. Unknown counts as the router.
        virtual_router: !network.kind.eq_ignore_ascii_case("shared"),
        firewall: has_service(network, "Firewall"),
    })
}

fn network(
    spec: &CloudstackLoadBalancerSpec,
    live: &Inventory,
    cluster: Option<ClusterRef<'_>>,
    members: &Members,
) -> Result<NetworkFacts, String> {
    let named = |wanted: &str| {
        live.network(wanted)
            .ok_or_else(|| {
                let mut existing: Vec<&str> =
                    live.networks.iter().map(|n| n.name.as_str()).collect();
                existing.sort_unstable();
                let listed = match existing.as_slice() {
                    [] => "none".to_string(),
                    _ => existing.join(", "),
                };
                format!("network: network `{wanted}` does not exist; networks: {listed}")
            })
            .and_then(facts)
    };
    if let Some(wanted) = &spec.network {
        return named(wanted);
    }
    if let Some(cluster) = cluster {
        if let Some(id) = cluster.live.and_then(|c| c.networkid.as_deref()) {
            return named(id);
        }
        if let Some(wanted) = cluster.spec.and_then(|s| s.network.as_deref()) {
            return named(wanted);
        }
        if let Some(spec) = cluster.spec {
            // CKS creates an isolated network with the virtual router, Lb and Firewall.
            return Ok(NetworkFacts {
                reference: NetworkRef::OfCluster {
                    cluster: spec.name.clone(),
                },
                virtual_router: true,
                firewall: true,
            });
        }
    }
    let Members::Vms(vms) = members else {
        return Err("network: set `network`, it cannot be derived from the members".into());
    };
    network_of_vms(live, vms).and_then(named)
}

/// The network of the VMs' default NICs, which must be one.
fn network_of_vms<'a>(live: &'a Inventory, vms: &[MemberVm]) -> Result<&'a str, String> {
    let mut networks: Vec<&str> = vms
        .iter()
        .filter_map(|vm| live.vm(&vm.id))
        .filter_map(|vm| vm.nic.iter().find(|n| n.isdefault).or(vm.nic.first()))
        .map(|nic| nic.networkid.as_str())
        .collect();
    networks.sort_unstable();
    networks.dedup();
    match networks.as_slice() {
        [one] => Ok(one),
        [] => Err("network: set `network`, the members have none to take it from".into()),
        _ => Err(format!(
            "network: the members are in different networks ({}); set `network`",
            networks.join(", ")
        )),
    }
}

/// assignToLoadBalancerRule refuses a VM without a NIC in the rule's network.
fn check_members_in(
    network: &NetworkFacts,
    members: &Members,
    live: &Inventory,
) -> Result<(), String> {
    let (Some(id), Members::Vms(vms)) = (network.id(), members) else {
        return Ok(());
    };
    let outside: Vec<&str> = vms
        .iter()
        .filter(|vm| {
            // A VM listed without its NICs is not judged.
            live.vm(&vm.id).is_some_and(|found| {
                !found.nic.is_empty() && !found.nic.iter().any(|nic| nic.networkid == id)
            })
        })
        .map(|vm| vm.name.as_str())
        .collect();
    if outside.is_empty() {
        return Ok(());
    }
    Err(format!(
        "members: {} {} no NIC in network {}, so the server would refuse to assign {}",
        outside.join(", "),
        if outside.len() == 1 { "has" } else { "have" },
        network.name(),
        if outside.len() == 1 { "it" } else { "them" },
    ))
}

/// What the server refuses of the ports, checked before anything is sent.
pub fn check_ports(desired: &Desired, ip: Option<&PublicIpAddress>) -> Result<(), String> {
    for rule in &desired.rules {
        let port = rule.port.port;
        if port == HAPROXY_STATS_PORT {
            return Err(format!(
                "ports.{port}: {port} is haproxy's stats port on the virtual router; the server refuses it as a public port (\"LB service provider cannot support this rule\")"
            ));
        }
        if port == DNS_PORT && ip.is_some_and(|ip| ip.issourcenat) {
            return Err(format!(
                "ports.{port}: port 53 cannot be used on the source-NAT IP {} (the server refuses it on networks with DNS and Source NAT); use public-ip = \"auto\"",
                ip.map(|ip| ip.ipaddress.as_str()).unwrap_or_default()
            ));
        }
        if rule.port.protocol == CsProtocol::Udp && desired.network.virtual_router {
            return Err(format!(
                "ports.{port}.protocol: udp is refused on network {} — its LB provider is the virtual router (haproxy), which answers 431 \"LB service provider cannot support this rule\"",
                desired.network.name()
            ));
        }
    }
    Ok(())
}

/// A public port another rule on the IP already holds (CKS's API rule on a source-NAT IP, a
/// hand-made one): the server refuses a second rule on it (537).
pub fn check_taken_ports(desired: &Desired, found: &Found, live: &Inventory) -> Result<(), String> {
    let Some(ip) = found.ip else {
        return Ok(());
    };
    let own = |id: &str| found.rules.iter().any(|r| r.id == id);
    for rule in &desired.rules {
        let port = u32::from(rule.port.port);
        let taken = live
            .rules_on(&ip.id)
            .find(|r| r.publicport == port && !own(&r.id));
        if let Some(other) = taken {
            return Err(format!(
                "ports.{port}: {} already has LB rule {} on port {port}, which is not this load balancer's; the server refuses a second rule on it (537)",
                ip.ipaddress, other.name
            ));
        }
    }
    Ok(())
}
