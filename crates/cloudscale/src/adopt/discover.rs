//! The load balancers of the account no target manages, and the Services the targets are
//! bound to. A target manages a load balancer when its state names it by UUID, when the load
//! balancer carries the target's `skyplan.address` tag (what a plan adopts), or — controller
//! mode — when it is the load balancer the CCM made for the target's Service.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Service;

use super::super::ccm::predict::{find_ccm_lb, Found};
use super::super::diff::PROVIDER;
use super::super::live::Live;
use super::super::objects::{LbObjects, OWNER_TAG};
use super::{Origin, CCM};
use crate::spec::CloudscaleLoadBalancerSpec;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::{Discovered, Maker, ServiceRef, Unmanaged};
use skyplan_core::provider::Target;
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

pub fn discover(targets: &[Target], live: &Live) -> Discovered {
    let mut managed: BTreeSet<&str> = targets
        .iter()
        .filter_map(|t| t.prior)
        .map(|p| p.id.as_str())
        .collect();
    let addresses: BTreeSet<String> = targets.iter().map(|t| t.address.to_string()).collect();
    let mut bound = Vec::new();
    for target in targets {
        let Some(spec) = spec_of(target) else {
            continue;
        };
        let Some(binding) = &spec.binding else {
            continue;
        };
        bound.push(ServiceRef {
            cluster: binding.cluster.clone(),
            service: binding.service_ref(),
        });
        if binding.mode == LbMode::Ccm {
            let service = bound_service(target, binding, live);
            match find_ccm_lb(&live.snapshot, service, &spec.name) {
                Found::Lb(lb) | Found::OnlyUnderOldName(lb) => {
                    managed.extend(lb.lb.uuid.as_deref());
                }
                Found::New => {}
            }
        }
    }
    let unmanaged = live
        .snapshot
        .load_balancers
        .iter()
        .filter(|lb| {
            let uuid = lb.lb.uuid.as_deref().unwrap_or_default();
            let tag = lb.lb.tags.get(OWNER_TAG);
            !managed.contains(uuid) && !tag.is_some_and(|a| addresses.contains(a))
        })
        .map(|lb| unmanaged(lb, live))
        .collect();
    bound.sort();
    bound.dedup();
    Discovered { unmanaged, bound }
}

/// The target's spec: the config's, else (removed from the config) the one last applied.
fn spec_of(target: &Target) -> Option<CloudscaleLoadBalancerSpec> {
    if let Some(resource) = target.resource {
        return resource.spec.get::<CloudscaleLoadBalancerSpec>().cloned();
    }
    serde_json::from_value(target.prior?.attributes.clone()).ok()
}

/// A controller-mode target's Service: as the survey listed it, else as its refresh read it.
fn bound_service<'l>(
    target: &Target,
    binding: &ServiceBinding,
    live: &'l Live,
) -> Option<&'l Service> {
    let listed = (live.services).get(&binding.cluster, &binding.namespace, &binding.name);
    let read = || {
        let view = live.views.get(target.address)?.as_ref().ok()?;
        view.service.as_ref()
    };
    listed.or_else(read)
}

fn unmanaged(lb: &LbObjects, live: &Live) -> Unmanaged {
    let origin = Origin::of(&lb.lb, &live.services);
    let proposed = |name: &str| Address::new(ResourceKind::LoadBalancer, name);
    let mut why_not = None;
    let (made_by, cluster, service, address, importable) = match &origin {
        Origin::Skyplan(tagged) => {
            // The address it was made as, so its tag stays its own once adopted.
            let address = match tagged.kind {
                ResourceKind::LoadBalancer => tagged.clone(),
                _ => proposed(&lb.lb.name),
            };
            (Maker::Skyplan(tagged.clone()), None, None, address, true)
        }
        Origin::Ccm(at) => {
            let name = at.service.metadata.name.as_deref().unwrap_or(&lb.lb.name);
            let service = ServiceRef {
                cluster: at.cluster.clone(),
                service: at.reference(),
            };
            let cluster = Some(at.cluster.clone());
            let maker = Maker::Controller(CCM.to_string());
            (maker, cluster, Some(service), proposed(name), true)
        }
        Origin::CcmElsewhere => {
            let maker = Maker::Controller(CCM.to_string());
            why_not = Some(super::ccm_elsewhere(&lb.lb.name).to_string());
            (maker, None, None, proposed(&lb.lb.name), false)
        }
        Origin::Unknown => (Maker::Unknown, None, None, proposed(&lb.lb.name), true),
    };
    Unmanaged {
        provider: PROVIDER.to_string(),
        kind: ResourceKind::LoadBalancer,
        id: lb.lb.uuid.clone().unwrap_or_default(),
        name: lb.lb.name.clone(),
        made_by,
        cluster,
        service,
        address,
        summary: summary(lb),
        importable,
        why_not_importable: why_not,
    }
}

/// `5.102.144.7, lpg1, lb-standard, ports 80/tcp 443/tcp, floating IP 5.102.150.123/32`.
pub(super) fn summary(lb: &LbObjects) -> String {
    let vips: Vec<&str> = (lb.lb.vip_addresses.iter())
        .filter_map(|v| v.address.as_deref())
        .collect();
    let mut parts = vec![match vips.as_slice() {
        [] => "no VIP yet".to_string(),
        vips => vips.join(" "),
    }];
    parts.push(lb.lb.zone.clone());
    parts.push(lb.lb.flavor.clone());
    let mut ports: Vec<(u16, &str)> = (lb.pools.values())
        .filter_map(|set| set.listener.as_ref())
        .map(|l| (l.protocol_port, l.protocol.as_str()))
        .collect();
    ports.sort();
    let ports: Vec<String> = ports
        .iter()
        .map(|(p, proto)| format!("{p}/{proto}"))
        .collect();
    parts.push(match ports.as_slice() {
        [] => "no ports".to_string(),
        [one] => format!("port {one}"),
        many => format!("ports {}", many.join(" ")),
    });
    let floating: Vec<&str> = lb.floating_ips.iter().map(String::as_str).collect();
    match floating.as_slice() {
        [] => {}
        [one] => parts.push(format!("floating IP {one}")),
        many => parts.push(format!("floating IPs {}", many.join(" "))),
    }
    parts.join(", ")
}
