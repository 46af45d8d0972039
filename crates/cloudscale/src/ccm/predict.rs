//! What the cloudscale CCM will want once the Service is written, and which live load balancer
//! it will compare that with — computed from the desired spec, the live Service, the nodes and
//! the servers, the way the CCM's `desiredLbState` and `lb_mapper` do (research §1.3-1.5).

use k8s_openapi::api::core::v1::Service;

use super::super::binding::members::member_addresses;
use super::super::binding::ClusterView;
use super::super::objects::{LbObjects, Snapshot};
use super::super::servers::ServerObject;
use super::annotations::{NAME, UUID};
use super::service::live_node_ports;
use crate::spec::{CloudscaleLoadBalancerSpec, TrafficPolicy};

/// A node port the apiserver has not allocated yet (a new or renamed port): known only once
/// the Service is written, so the members on it are predicted to be created anew.
pub const UNKNOWN_PORT: u16 = 0;

/// The spec as the CCM will see it after the write: members from the nodes' servers, node
/// ports as configured, else kept by port name from the live Service (new names get a new,
/// unknown one), and with
/// `Local` the live healthCheckNodePort when the Service already had one.
pub fn predicted_spec(
    spec: &CloudscaleLoadBalancerSpec,
    view: &ClusterView,
    servers: &[ServerObject],
) -> Result<CloudscaleLoadBalancerSpec, String> {
    let live = view.service.as_ref();
    let mut predicted = spec.clone();
    predicted.members = member_addresses(spec, &view.nodes, servers)
        .map_err(|e| format!("{e}: the CCM's reconcile would fail and change nothing"))?;
    let kept = live_node_ports(live);
    for port in predicted.ports.iter_mut().filter(|p| p.node_port == 0) {
        port.node_port = kept.get(&port.name).copied().unwrap_or(UNKNOWN_PORT);
    }
    predicted.health_check_node_port = match spec.traffic_policy {
        TrafficPolicy::Cluster => None,
        TrafficPolicy::Local => Some(live_health_check_port(live).unwrap_or(UNKNOWN_PORT)),
    };
    Ok(predicted)
}

/// A configured node port another Service of the cluster holds: the apiserver refuses the
/// write (422 Invalid, "provided port is already allocated"), so the plan says so first.
pub fn node_ports_free(
    spec: &CloudscaleLoadBalancerSpec,
    view: &ClusterView,
) -> Result<(), String> {
    let own = spec.binding.as_ref().map(|b| b.service_ref());
    for port in spec.ports.iter().filter(|p| p.node_port != 0) {
        match view.node_ports_held.get(&port.node_port) {
            Some(holder) if Some(holder) != own.as_ref() => {
                return Err(format!(
                    "node-port {} of port {} is held by Service {holder}: the apiserver would refuse the write (422, provided port is already allocated); pick another node port or remove node-port",
                    port.node_port,
                    port.key()
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

fn live_health_check_port(live: Option<&Service>) -> Option<u16> {
    let spec = live?.spec.as_ref()?;
    if spec.external_traffic_policy.as_deref() != Some("Local") {
        return None;
    }
    u16::try_from(spec.health_check_node_port?)
        .ok()
        .filter(|p| *p != 0)
}

/// The CCM's default load balancer name.
pub fn default_name(service: &Service) -> Option<String> {
    Some(format!("k8s-service-{}", service.metadata.uid.as_deref()?))
}

fn annotation<'s>(service: &'s Service, key: &str) -> Option<&'s str> {
    service
        .metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// What refresh needs to read the CCM's load balancer with its members.
pub struct LookupKeys {
    pub uuid: Option<String>,
    pub names: Vec<String>,
}

pub fn lookup_keys(view: &ClusterView) -> Option<LookupKeys> {
    let service = view.service.as_ref()?;
    let mut names: Vec<String> = annotation(service, NAME)
        .map(String::from)
        .into_iter()
        .collect();
    names.extend(default_name(service));
    Some(LookupKeys {
        uuid: annotation(service, UUID).map(String::from),
        names,
    })
}

/// How the CCM will find its load balancer after the write.
pub enum Found<'a> {
    /// By the uuid annotation, or by the (new) name.
    Lb(&'a LbObjects),
    /// None yet: the CCM creates one.
    New,
    /// Only under the name the Service had before, and no uuid annotation to find it by: the
    /// CCM would create a second load balancer under the new name.
    OnlyUnderOldName(&'a LbObjects),
}

pub fn find_ccm_lb<'a>(
    snapshot: &'a Snapshot,
    live: Option<&Service>,
    new_name: &str,
) -> Found<'a> {
    let by_name = |name: &str| snapshot.load_balancers.iter().find(|l| l.lb.name == name);
    if let Some(lb) = live
        .and_then(|s| annotation(s, UUID))
        .and_then(|uuid| snapshot.load_balancer(uuid))
    {
        return Found::Lb(lb);
    }
    if let Some(lb) = by_name(new_name) {
        return Found::Lb(lb);
    }
    let old_name = live.and_then(|s| {
        annotation(s, NAME)
            .map(String::from)
            .or_else(|| default_name(s))
    });
    match old_name.as_deref().and_then(by_name) {
        Some(lb) => Found::OnlyUnderOldName(lb),
        None => Found::New,
    }
}
