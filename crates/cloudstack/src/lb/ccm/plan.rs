//! A controller-mode plan: the Service write and the CCM's predicted effect, each finding
//! classified by the controller-mode table and listed under the config key the user changed
//! (`causes.rs`). skyplan performs only the write; the controller's actions are listed, in its
//! order, for apply to wait for and check.

use std::fmt;

use k8s_openapi::api::core::v1::{Node, Service};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::causes::{attributes, config_changes, row};
use super::impact::{never_applied, Change};
use super::predict::{predict, Finding, PredictInput};
use super::service::{desired_body, service_changes};
use crate::live::Inventory;
use crate::ops::Op;
use crate::spec::CloudstackLoadBalancerSpec;
use crate::PROVIDER;
use skyplan_core::model::Address;
use skyplan_core::plan::{Action, Record, ResourceChange};
use skyplan_core::provider::DriftCheck;

/// What a controller-mode plan does: one write, then what the CCM is predicted to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum CcmOp {
    /// A merge patch with the resourceVersion read at refresh, or a create (`None`).
    WriteService {
        namespace: String,
        name: String,
        body: serde_json::Value,
        resource_version: Option<String>,
    },
    /// `--allow-delete`: delete the Service skyplan wrote in `cluster`; the CCM then deletes
    /// the rules.
    DeleteService {
        cluster: Address,
        namespace: String,
        name: String,
    },
    /// What the CloudStack CCM is predicted to do; skyplan never performs it.
    Controller { action: String },
}

impl fmt::Display for CcmOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CcmOp::WriteService {
                namespace,
                name,
                resource_version,
                ..
            } => match resource_version {
                Some(_) => write!(f, "patch service {namespace}/{name}"),
                None => write!(f, "create service {namespace}/{name}"),
            },
            CcmOp::DeleteService {
                namespace, name, ..
            } => write!(f, "delete service {namespace}/{name}"),
            CcmOp::Controller { action } => write!(f, "controller: {action}"),
        }
    }
}

pub struct CcmPlanInput<'a> {
    pub address: &'a Address,
    pub spec: &'a CloudstackLoadBalancerSpec,
    pub service: Option<&'a Service>,
    pub nodes: &'a [Node],
    pub live: &'a Inventory,
    /// See [`PredictInput::scaled_workers`].
    pub scaled_workers: i64,
}

pub fn plan(input: &CcmPlanInput) -> ResourceChange {
    let spec = input.spec;
    let binding = spec
        .binding
        .as_ref()
        .expect("a controller-mode load balancer");
    let prediction = predict(&PredictInput {
        spec,
        service: input.service,
        nodes: input.nodes,
        live: input.live,
        scaled_workers: input.scaled_workers,
    });
    let service_diff = input.service.map(|s| service_changes(spec, s));
    let writes = service_diff.as_ref().is_none_or(|c| !c.is_empty());
    // The config keys the write changes (the Service's own paths for what no key sets).
    let written = match (input.service, &service_diff) {
        (Some(live), Some(diff)) if !diff.is_empty() => {
            let keys = config_changes(spec, live);
            match keys.is_empty() {
                true => diff.clone(),
                false => keys,
            }
        }
        _ => Vec::new(),
    };
    let attributes = attributes(&written, &prediction.findings, &binding.service_ref());
    let mut operations = Vec::new();
    if writes {
        operations.push(crate::ops::planned(Op::Ccm(CcmOp::WriteService {
            namespace: binding.namespace.clone(),
            name: binding.name.clone(),
            body: desired_body(spec, binding, input.service.is_none()),
            resource_version: input
                .service
                .map(|s| s.metadata.resource_version.clone().unwrap_or_default()),
        })));
    }
    operations.extend(
        prediction
            .actions()
            .into_iter()
            .map(|action| crate::ops::planned(Op::Ccm(CcmOp::Controller { action }))),
    );
    let effective = prediction.findings.iter().any(|f| !never_applied(f.change));
    let action = match (input.service, writes || effective) {
        (None, _) => Action::Create,
        (Some(_), true) => Action::Update,
        (Some(_), false) => Action::NoOp,
    };
    ResourceChange {
        address: input.address.clone(),
        provider: PROVIDER.to_string(),
        action,
        attributes,
        operations,
        record: Some(Record::of(spec)),
        requested: false,
        moved_from: None,
        placement: None,
    }
}

/// Drift: the plan of the applied spec (`input.spec`) on the live state — one reading of each
/// difference, classified exactly as `plan` restores it (`drift_tests.rs` holds every row to
/// it). No Service is "missing": the plan creates it again (`ServiceCreated`).
pub fn drift(input: &CcmPlanInput) -> DriftCheck {
    match input.service {
        None => DriftCheck::Missing,
        Some(_) => DriftCheck::Compared(plan(input).attributes),
    }
}

/// A controller-mode load balancer removed from the config. impact.md's deletion rule: refused
/// unless `allow_delete`; then skyplan deletes the Service it wrote and the CCM deletes the
/// rules — never the rules behind the CCM's back, which would only make it create them again.
pub fn removed(
    address: &Address,
    applied: &CloudstackLoadBalancerSpec,
    allow_delete: bool,
) -> ResourceChange {
    let binding = applied
        .binding
        .as_ref()
        .expect("a controller-mode load balancer");
    let service = binding.service_ref();
    let finding = Finding {
        change: match allow_delete {
            true => Change::ServiceDeleted,
            false => Change::ServiceRemoved,
        },
        path: String::new(),
        before: json!(service),
        after: json!(null),
        object: format!("service {service}"),
        note: String::new(),
    };
    let mut attribute = row(&finding);
    attribute.reason = attribute
        .reason
        .replace("--allow-delete ADDR", &format!("--allow-delete {address}"));
    let operations = match allow_delete {
        false => vec![],
        true => [
            CcmOp::DeleteService {
                cluster: binding.cluster.clone(),
                namespace: binding.namespace.clone(),
                name: binding.name.clone(),
            },
            CcmOp::Controller {
                action: "delete the Service's LB rules and firewall rules, release its public IP"
                    .into(),
            },
        ]
        .into_iter()
        .map(|op| crate::ops::planned(Op::Ccm(op)))
        .collect(),
    };
    ResourceChange {
        address: address.clone(),
        provider: PROVIDER.to_string(),
        action: Action::Delete,
        attributes: vec![attribute],
        operations,
        record: None,
        requested: allow_delete,
        moved_from: None,
        placement: None,
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "drift_tests.rs"]
mod drift_tests;
