//! A controller-mode plan: the Service write, and the CCM's predicted effect classified by the
//! controller-mode table. The prediction reuses the cloudscale diff where the CCM's keys match
//! it (pool by name+algorithm+protocol, member by everything, listener by name+protocol+port,
//! monitor by type+HTTP version) and re-reads each of its rows as what the CCM does. Each
//! attribute is the Service field the user changes, with those predicted changes under it
//! (`causes`); the controller's actions come in its own order (`order`).

use serde_json::{json, Value};

use super::super::binding::ClusterView;
use super::super::desired::desired_objects;
use super::super::diff::{diff_classified, DiffInput, PROVIDER};
use super::super::impact::Change as Direct;
use super::super::objects::Snapshot;
use super::super::ops::Op;
use super::super::servers::ServerObject;
use super::causes::{attributes, Predicted};
use super::effects::port_effects;
use super::emptied::{emptied_pools, say_emptied};
use super::impact::{from_direct, rule, Change};
use super::order::controller_order;
use super::predict::{find_ccm_lb, node_ports_free, predicted_spec, Found, UNKNOWN_PORT};
use super::service::{desired_body, service_changes, ServiceChange};
use crate::spec::CloudscaleLoadBalancerSpec;
use skyplan_core::model::Address;
use skyplan_core::plan::{Action, AttributeChange, Record, ResourceChange};
use skyplan_core::provider::DriftCheck;

pub struct CcmInput<'a> {
    pub address: &'a Address,
    pub spec: &'a CloudscaleLoadBalancerSpec,
    pub prior: Option<&'a CloudscaleLoadBalancerSpec>,
    pub view: &'a ClusterView,
    pub servers: &'a [ServerObject],
    pub snapshot: &'a Snapshot,
}

pub fn plan(input: &CcmInput) -> Result<ResourceChange, String> {
    let spec = input.spec;
    let binding = spec
        .binding
        .as_ref()
        .expect("a controller-mode load balancer");
    let live_service = input.view.service.as_ref();
    node_ports_free(spec, input.view)?;
    let predicted = predicted_spec(spec, input.view, input.servers)?;
    let desired = desired_objects(input.address, &predicted, &input.snapshot.subnets)
        .map_err(|e| e.to_string())?;
    let mut out = Outcome::default();
    let service_diff = live_service.map(|s| service_changes(spec, s));
    let writes = service_diff.as_ref().is_none_or(|c| !c.is_empty());
    out.written = service_diff.clone().unwrap_or_default();
    let live_lb = match find_ccm_lb(input.snapshot, live_service, &spec.name) {
        Found::OnlyUnderOldName(old) => {
            out.note(
                Change::RenameWithoutUuid,
                "name",
                json!(old.lb.name),
                json!(spec.name),
                "load balancer",
            );
            return Ok(out.finish(input, binding, writes, Action::Update));
        }
        Found::Lb(lb) => Some(lb),
        Found::New => None,
    };
    let (direct, rows, ops) = diff_classified(&DiffInput {
        address: input.address,
        desired: Some((&predicted, &desired)),
        prior: input.prior,
        live: live_lb,
        replace: false,
        allow_delete: false,
        tag: false,
    });
    let pending = members_pending(input, writes);
    for (attribute, row) in direct.attributes.into_iter().zip(rows) {
        let change = controller_row(row, &out.written, &attribute, pending);
        match port_effects(change, &attribute, live_lb, &desired) {
            Some(effects) => out.predicted.extend(effects),
            None => out.reclassify(attribute, change),
        }
    }
    if !pending {
        let ports = (desired.pools.iter())
            .filter_map(|(pool, set)| Some((pool.clone(), set.listener.as_ref()?.protocol_port)))
            .collect();
        say_emptied(&mut out.predicted, &emptied_pools(live_lb, &ops), &ports);
    }
    out.actions.extend(
        controller_order(&ops)
            .into_iter()
            // Pending: the CCM is not called, no member is touched until the Service is next
            // synced.
            .filter(|op| {
                !pending || !matches!(op, Op::CreateMember { .. } | Op::DeleteMember { .. })
            })
            .map(action_text),
    );
    vip_cleared(input, live_lb.is_some(), &mut out);
    let action = match (live_service, out.predicted.is_empty() && !writes) {
        (None, _) => Action::Create,
        (Some(_), true) => Action::NoOp,
        (Some(_), false) => Action::Update,
    };
    Ok(out.finish(input, binding, writes, action))
}

/// Drift in controller mode: each difference between the live state and the applied spec
/// (`input.spec`, also its `prior`), read as `plan` reads it — the same prediction and
/// classification, so drift says exactly what restoring the applied Service does.
pub fn drift(input: &CcmInput) -> Result<DriftCheck, String> {
    if input.view.service.is_none() {
        return Ok(DriftCheck::Missing);
    }
    plan(input).map(|change| DriftCheck::Compared(change.attributes))
}

/// A controller-mode load balancer removed from the config (`applied` is its last applied
/// spec; `live` the load balancer's name, if the cloud still has it). impact.md's deletion
/// rule: refused unless `allow_delete`; then skyplan deletes the Service it wrote and the CCM
/// deletes the load balancer — never the load balancer behind the CCM's back, which would
/// only make it build a new one for the Service.
pub fn removed(
    address: &Address,
    applied: &CloudscaleLoadBalancerSpec,
    live: Option<&str>,
    allow_delete: bool,
) -> ResourceChange {
    let binding = applied
        .binding
        .as_ref()
        .expect("a controller-mode load balancer");
    let service = binding.service_ref();
    let mut out = Outcome::default();
    let change = match allow_delete {
        true => Change::ServiceDeleted,
        false => Change::ServiceRemoved,
    };
    out.note(
        change,
        "",
        json!(service),
        Value::Null,
        &format!("service {service}"),
    );
    let flag = format!("--allow-delete {address}");
    let mut attributes = attributes(&[], out.predicted, &service);
    for attribute in &mut attributes {
        attribute.reason = attribute.reason.replace("--allow-delete ADDR", &flag);
    }
    let mut operations = Vec::new();
    if allow_delete {
        operations.push(crate::ops::planned(Op::DeleteService {
            cluster: binding.cluster.clone(),
            namespace: binding.namespace.clone(),
            name: binding.name.clone(),
        }));
        if let Some(name) = live {
            let action = format!("delete load balancer {name}");
            operations.push(crate::ops::planned(Op::Controller { action }));
        }
    }
    ResourceChange {
        address: address.clone(),
        provider: PROVIDER.to_string(),
        action: Action::Delete,
        attributes,
        operations,
        record: None,
        requested: allow_delete,
        moved_from: None,
        placement: None,
    }
}

/// A change the diff found, as the CCM carries it out. A member difference is the
/// node-selector's when the write changes that annotation (in a plan or a drift check alike:
/// what the live Service says against what is written).
fn controller_row(
    row: Direct,
    written: &[ServiceChange],
    attribute: &AttributeChange,
    pending: bool,
) -> Change {
    let selector = format!(
        "service.annotations.{}node-selector",
        super::annotations::PREFIX
    );
    let selector_changed = written.iter().any(|c| c.path == selector);
    match row {
        Direct::MembersChanged if pending => Change::NodeLabelsPending,
        Direct::MembersChanged if selector_changed => Change::NodeSelector,
        Direct::NodePort
            if attribute.after.as_array().is_some_and(|ports| {
                ports
                    .iter()
                    .any(|p| p.as_u64() == Some(u64::from(UNKNOWN_PORT)))
            }) =>
        {
            Change::NewNodePort
        }
        other => from_direct(other),
    }
}

/// With nothing to write, the CCM is only called when the node set changes; a member
/// difference under a node-selector then comes from node labels, which it does not watch.
fn members_pending(input: &CcmInput, writes: bool) -> bool {
    !writes && input.spec.node_selector.is_some() && !input.view.node_set_changes
}

fn vip_cleared(input: &CcmInput, exists: bool, out: &mut Outcome) {
    let Some(prior) = input.prior else { return };
    if exists && !prior.vip_addresses.is_empty() && input.spec.vip_addresses.is_empty() {
        out.note(
            Change::VipCleared,
            "vip-addresses",
            json!(prior.vip_addresses),
            json!([]),
            "load balancer",
        );
    }
}

/// How an operation reads as the controller's action; a member on a node port the apiserver
/// has yet to allocate is named with `<new node port>`.
fn action_text(op: &Op) -> String {
    let text = op.to_string();
    let unknown = format!(":{UNKNOWN_PORT}");
    match text.strip_suffix(&unknown) {
        Some(stem) if matches!(op, Op::CreateMember { .. }) => format!("{stem}:<new node port>"),
        _ => text,
    }
}

#[derive(Default)]
struct Outcome {
    /// The Service fields the write changes: the user's changes, the plan's attributes.
    written: Vec<ServiceChange>,
    /// What the CCM is predicted to change in the cloud, each listed under the field causing it.
    predicted: Vec<Predicted>,
    /// In the CCM's order (`order`).
    actions: Vec<String>,
}

impl Outcome {
    fn note(&mut self, change: Change, path: &str, before: Value, after: Value, object: &str) {
        let rule = rule(change);
        self.predicted.push(Predicted {
            change,
            attribute: AttributeChange {
                path: path.to_string(),
                before,
                after,
                impact: rule.impact,
                reason: format!("{object}: {}", rule.happens),
                downtime: rule.downtime,
                group: object.to_string(),
                effects: Vec::new(),
            },
            note: None,
        });
    }

    fn reclassify(&mut self, attribute: AttributeChange, change: Change) {
        let rule = rule(change);
        self.predicted.push(Predicted {
            change,
            attribute: AttributeChange {
                impact: rule.impact,
                reason: format!("{}: {}", attribute.group, rule.happens),
                downtime: rule.downtime,
                ..attribute
            },
            note: None,
        });
    }

    fn finish(
        self,
        input: &CcmInput,
        binding: &skyplan_kubernetes::spec::ServiceBinding,
        writes: bool,
        action: Action,
    ) -> ResourceChange {
        let live_service = input.view.service.as_ref();
        let mut operations = Vec::new();
        if writes {
            operations.push(crate::ops::planned(Op::WriteService {
                namespace: binding.namespace.clone(),
                name: binding.name.clone(),
                body: desired_body(input.spec, binding, live_service.is_none()),
                resource_version: live_service
                    .map(|s| s.metadata.resource_version.clone().unwrap_or_default()),
            }));
        }
        operations.extend(
            self.actions
                .into_iter()
                .map(|action| crate::ops::planned(Op::Controller { action })),
        );
        ResourceChange {
            address: input.address.clone(),
            provider: PROVIDER.to_string(),
            action,
            attributes: attributes(&self.written, self.predicted, &binding.service_ref()),
            operations,
            record: Some(Record::of(input.spec)),
            requested: false,
            moved_from: None,
            placement: None,
        }
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "drift_tests.rs"]
mod drift_tests;
