//! The generated spec held to its promise before it is handed over: planned against the live
//! objects as the plan after the import will plan it, it must change nothing. A change is
//! refused at its attribute, with the plan's reason. (That the text reads back as this spec
//! the pipeline checks, with the whole generated file; `tests/props.rs` holds it too.)

use serde_json::Value;

use super::super::catalog;
use super::super::ccm::predict::{find_ccm_lb, Found};
use super::super::ccm::service::{live_node_ports, service_changes, ServiceChange};
use super::super::desired::desired_objects;
use super::super::diff::{diff, DiffInput};
use super::super::live::Live;
use super::super::objects::LbObjects;
use super::{Refusal, ServiceAt, CCM};
use crate::spec::{CloudscaleLoadBalancerSpec, TrafficPolicy};
use skyplan_core::model::Address;
use skyplan_core::plan::AttributeChange;

/// Nothing to plan for `spec` against `lb` once imported (the state's applied spec is `spec`):
/// the plan's checks pass and it has no attribute.
pub(super) fn plans_nothing(
    address: &Address,
    spec: &CloudscaleLoadBalancerSpec,
    lb: &LbObjects,
    live: &Live,
    service: Option<ServiceAt>,
) -> Result<(), Refusal> {
    let snapshot = &live.snapshot;
    let unusable = |u: catalog::Unusable| Refusal::new(u.path, u.message);
    catalog::check_names(spec, snapshot).map_err(unusable)?;
    let own = lb.lb.uuid.as_deref();
    let predicted = match service {
        None => {
            catalog::check_vip_addresses(spec, snapshot, own).map_err(unusable)?;
            catalog::check_floating_ips(spec, snapshot, own).map_err(unusable)?;
            spec.clone()
        }
        Some(at) => {
            if let Some(change) = service_changes(spec, at.service).into_iter().next() {
                return Err(service_refusal(change));
            }
            let found = find_ccm_lb(snapshot, Some(at.service), &spec.name);
            if !matches!(found, Found::Lb(found) if found.lb.uuid.as_deref() == own) {
                return Err(Refusal::new(
                    "name",
                    format!(
                        "the {CCM} would not find this load balancer for Service {} by its uuid annotation or by the name {}",
                        at.reference(),
                        spec.name
                    ),
                ));
            }
            as_the_ccm_reads_it(spec, at)
        }
    };
    let desired = desired_objects(address, &predicted, &snapshot.subnets)
        .map_err(|e| Refusal::new("members", e.to_string()))?;
    let change = diff(&DiffInput {
        address,
        desired: Some((&predicted, &desired)),
        prior: Some(spec),
        live: Some(lb),
        replace: false,
        allow_delete: false,
        // The tag is what the import adds, shown by the next plan: not a difference the config
        // would make.
        tag: false,
    });
    // The CCM chooses the members from the nodes, not from the config: a difference there is
    // the CCM's to make, whatever the config says.
    let chosen_by_the_ccm = |path: &str| {
        service.is_some()
            && [".members", ".node-port", ".monitor-port"]
                .iter()
                .any(|suffix| path.ends_with(suffix))
    };
    match change
        .attributes
        .into_iter()
        .find(|a| !chosen_by_the_ccm(&a.path))
    {
        None => Ok(()),
        Some(attribute) => Err(plan_refusal(attribute, service.is_some())),
    }
}

/// The spec with what the CCM reads from the live Service: its node ports (kept by port name
/// when skyplan writes it) and, with `Local`, its health-check node port. No members: the CCM
/// takes them from the nodes.
fn as_the_ccm_reads_it(
    spec: &CloudscaleLoadBalancerSpec,
    at: ServiceAt,
) -> CloudscaleLoadBalancerSpec {
    let mut predicted = spec.clone();
    let kept = live_node_ports(Some(at.service));
    for port in &mut predicted.ports {
        port.node_port = kept.get(&port.name).copied().unwrap_or(port.node_port);
    }
    if spec.traffic_policy == TrafficPolicy::Local {
        predicted.health_check_node_port = (at.service.spec.as_ref())
            .and_then(|s| s.health_check_node_port)
            .and_then(|p| u16::try_from(p).ok())
            .filter(|p| *p != 0);
    }
    predicted
}

fn service_refusal(change: ServiceChange) -> Refusal {
    let shown = |value: &Value| match value {
        Value::Null => "none".to_string(),
        Value::String(text) => format!("`{text}`"),
        other => format!("`{other}`"),
    };
    let (have, want) = (shown(&change.before), shown(&change.after));
    let reason = if change.path.ends_with(".targetPort") {
        format!(
            "the Service's port targets {have}: in controller mode skyplan writes targetPort = port ({want}), which would send the traffic to another port of the pods"
        )
    } else if change.path.starts_with("service.annotations.") {
        format!(
            "the Service has {have} there, where skyplan writes {want} for the same settings (it writes only what differs from the CCM's defaults, lists as compact JSON): importing it would patch the Service; set the annotation as skyplan writes it and discover again"
        )
    } else {
        format!("the Service has {have}, where skyplan would write {want}")
    };
    Refusal::new(change.path, reason)
}

fn plan_refusal(attribute: AttributeChange, ccm: bool) -> Refusal {
    let whose = match ccm {
        true => format!(
            "the load balancer is not what the {CCM} makes of its Service, which it would change: "
        ),
        false => String::new(),
    };
    Refusal::new(
        attribute.path,
        format!(
            "{whose}{} ({} → {}): the config cannot say what the load balancer has",
            attribute.reason, attribute.before, attribute.after
        ),
    )
}
