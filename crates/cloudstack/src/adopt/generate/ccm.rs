//! The rules the CloudStack CCM made for a Service, adopted in controller mode: `mode = "ccm"`
//! with the Service's `cluster` and `service`, and its spec read back into keys — the
//! inverse of `lb::ccm::service` (ports named `<tcp|udp>-<port>` with targetPort = port,
//! sessionAffinity → algorithm, the proxy-protocol annotation → tcp-proxy ports, source-cidrs →
//! allowed-cidrs, loadBalancerSourceRanges → firewall-cidrs, loadBalancerIP → public-ip).
//! Node ports are left to the apiserver, which keeps them. Refused: what skyplan would write
//! differently (another port name or target port, an annotation it has no key for or writes
//! otherwise), and a cluster the config neither has nor adopts in the same run.

use k8s_openapi::api::core::v1::{Service, ServicePort};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::cluster::adoptable;
use super::{claimed_entry, config_cidr, plans_nothing, refuse, Outcome, Refusal};
use crate::adopt::survey::SurveyedCluster;
use crate::lb::ccm::names::service_port_name;
use crate::lb::ccm::plan::{plan, CcmPlanInput};
use crate::lb::ccm::service::{IP_ASSOCIATED, MANAGED, PROXY_PROTOCOL, SOURCE_CIDRS};
use crate::live::Live;
use crate::spec::{
    CloudstackLoadBalancerSpec, CsAlgorithm, CsMembers, CsPort, CsProtocol, PublicIp,
};
use crate::PROVIDER;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::Adopting;
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

pub(super) fn generate(
    address: &Address,
    rules: &[&crate::api::LoadBalancerRule],
    cluster: &SurveyedCluster,
    service: &Service,
    live: &Live,
    adopting: &Adopting,
) -> Outcome {
    let key = cluster_key(cluster, live, adopting)?;
    let meta = &service.metadata;
    let namespace = meta.namespace.clone().unwrap_or_else(|| "default".into());
    let name = meta.name.clone().unwrap_or_default();
    let spec = service.spec.clone().unwrap_or_default();
    if spec.type_.as_deref() != Some("LoadBalancer") {
        return Err(refuse(
            "service",
            format!("Service {namespace}/{name} is no longer of type LoadBalancer"),
        ));
    }
    let annotations = meta.annotations.clone().unwrap_or_default();
    for key in annotations.keys() {
        let own = [PROXY_PROTOCOL, SOURCE_CIDRS, IP_ASSOCIATED];
        if key.starts_with(MANAGED.prefix) && !own.contains(&key.as_str()) {
            return Err(refuse(
                format!("service.annotations.{key}"),
                "the config has no key for this annotation of the CCM's, and skyplan manages all of them in controller mode",
            ));
        }
    }
    let proxy = match annotations.get(PROXY_PROTOCOL).map(String::as_str) {
        None => false,
        Some("true") => true,
        Some(other) => {
            return Err(refuse(
                format!("service.annotations.{PROXY_PROTOCOL}"),
                format!("it is {other:?}; skyplan writes \"true\" for tcp-proxy ports and leaves it out otherwise"),
            ))
        }
    };
    let ports = spec
        .ports
        .iter()
        .flatten()
        .map(|p| port(p, proxy))
        .collect::<Result<Vec<_>, _>>()?;
    if proxy && !ports.iter().any(|p| p.protocol == CsProtocol::TcpProxy) {
        return Err(refuse(
            format!("service.annotations.{PROXY_PROTOCOL}"),
            "it is \"true\" on a Service without TCP ports; skyplan would remove it",
        ));
    }
    let algorithm = match spec.session_affinity.as_deref() {
        None | Some("None") => CsAlgorithm::RoundRobin,
        Some("ClientIP") => CsAlgorithm::Source,
        Some(other) => {
            return Err(refuse(
                "algorithm",
                format!("sessionAffinity {other} has no algorithm"),
            ))
        }
    };
    let allowed_cidrs = match annotations.get(SOURCE_CIDRS) {
        None => vec![],
        Some(text) => source_cidrs(text)?,
    };
    let firewall_cidrs = spec
        .load_balancer_source_ranges
        .iter()
        .flatten()
        .map(|c| config_cidr(c, "firewall-cidrs"))
        .collect::<Result<Vec<_>, _>>()?;
    let public_ip = match spec.load_balancer_ip.as_deref().filter(|ip| !ip.is_empty()) {
        Some(ip) => PublicIp::Address(ip.to_string()),
        None => PublicIp::Auto,
    };
    let cluster_address = Address::new(ResourceKind::Cluster, key.clone());
    let spec = CloudstackLoadBalancerSpec {
        name: address.name.clone(),
        description: None,
        public_ip,
        network: None,
        members: CsMembers::Cluster(key),
        algorithm,
        allowed_cidrs,
        firewall_cidrs,
        ports,
        binding: Some(ServiceBinding {
            cluster: cluster_address,
            namespace,
            name,
            mode: LbMode::Ccm,
        }),
    };
    check(address, &spec, rules, cluster, service, live)?;
    Ok(super::lb_toml(address, &spec))
}

/// The cluster's key in the config: adopted in this run (and not refused), or configured.
fn cluster_key(
    cluster: &SurveyedCluster,
    live: &Live,
    adopting: &Adopting,
) -> Result<String, Refusal> {
    let adopted = cluster.cks_id.as_deref().and_then(|id| {
        let address = adopting.address(PROVIDER, id)?;
        Some((address, live.inventory.cluster_by_id(id)?))
    });
    match (adopted, cluster.configured) {
        (Some((address, cks)), _) => match adoptable(address, cks, &live.inventory) {
            Ok(_) => Ok(address.name.clone()),
            Err(refused) => Err(refuse(
                "cluster",
                format!(
                    "its cluster, adopted as {address}, is refused ({}: {}), so the config would not declare it",
                    refused.attribute, refused.reason
                ),
            )),
        },
        (None, true) => Ok(cluster.address.name.clone()),
        (None, false) => Err(refuse(
            "cluster",
            format!(
                "the Service is in CKS cluster {}, which the config does not have: adopt the cluster with it",
                cluster.address.name
            ),
        )),
    }
}

/// A Service port as a config port: named and targeted as skyplan writes it.
fn port(port: &ServicePort, proxy: bool) -> Result<CsPort, Refusal> {
    let at = format!("ports.{}", port.port);
    let number = u16::try_from(port.port)
        .map_err(|_| refuse(&at, format!("{} is not a port", port.port)))?;
    let protocol = match (port.protocol.as_deref().unwrap_or("TCP"), proxy) {
        ("TCP", false) => CsProtocol::Tcp,
        ("TCP", true) => CsProtocol::TcpProxy,
        ("UDP", _) => CsProtocol::Udp,
        (other, _) => {
            return Err(refuse(
                format!("{at}.protocol"),
                format!("the CloudStack CCM does not balance {other}"),
            ))
        }
    };
    let named = service_port_name(protocol, number);
    let live_name = port.name.as_deref().unwrap_or_default();
    let target = match &port.target_port {
        None => Some(port.port),
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(_)) => None,
    };
    if live_name != named || target != Some(port.port) {
        let target = match &port.target_port {
            Some(IntOrString::Int(n)) => n.to_string(),
            Some(IntOrString::String(s)) => s.clone(),
            None => port.port.to_string(),
        };
        return Err(refuse(
            at,
            format!(
                "the Service port is named {live_name:?} with targetPort {target}; skyplan writes it named {named:?} with targetPort {}, which the config cannot change",
                port.port
            ),
        ));
    }
    Ok(CsPort {
        port: number,
        protocol,
        node_port: 0,
    })
}

/// The source-cidrs annotation as allowed-cidrs, which skyplan writes back joined by commas.
fn source_cidrs(text: &str) -> Result<Vec<String>, Refusal> {
    let cidrs = text
        .split(',')
        .map(|c| config_cidr(c, "allowed-cidrs"))
        .collect::<Result<Vec<_>, _>>()?;
    if cidrs.join(",") != text || cidrs.is_empty() {
        return Err(refuse(
            "allowed-cidrs",
            format!("the annotation is {text:?}; skyplan writes allowed-cidrs joined by commas"),
        ));
    }
    Ok(cidrs)
}

/// Imported and planned against the same survey, the Service is not written and the CCM is
/// predicted to do nothing.
fn check(
    address: &Address,
    spec: &CloudstackLoadBalancerSpec,
    rules: &[&crate::api::LoadBalancerRule],
    cluster: &SurveyedCluster,
    service: &Service,
    live: &Live,
) -> Result<(), Refusal> {
    let nodes = match &cluster.nodes {
        Some(Ok(nodes)) => nodes.as_slice(),
        Some(Err(why)) => return Err(refuse("members", format!("the cluster's nodes: {why}"))),
        None => return Err(refuse("members", "the cluster's nodes were not read")),
    };
    let entry = claimed_entry(&rules[0].publicipid);
    let input = crate::live::PlanInput {
        address,
        desired: Some(spec),
        prior: Some(&entry),
        live: &live.inventory,
        replace: false,
        allow_delete: false,
    };
    crate::lb::import(&input).map_err(|e| refuse("public-ip", e.message))?;
    plans_nothing(Ok(plan(&CcmPlanInput {
        address,
        spec,
        service: Some(service),
        nodes,
        live: &live.inventory,
        scaled_workers: 0,
    })))
}
