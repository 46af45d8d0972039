//! The cloud operations of a CloudStack plan, per resource kind.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{cluster::ClusterOp, lb::ccm::plan::CcmOp, lb::LbOp};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Op {
    Cluster(ClusterOp),
    Lb(LbOp),
    /// A load balancer in controller mode: the Service write and the CCM's predicted actions.
    Ccm(CcmOp),
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Cluster(op) => op.fmt(f),
            Op::Lb(op) => op.fmt(f),
            Op::Ccm(op) => op.fmt(f),
        }
    }
}

/// The operation as a plan carries it.
pub fn planned(op: Op) -> skyplan_core::plan::Operation {
    skyplan_core::plan::Operation::new(super::PROVIDER, &op)
}

impl Op {
    /// This provider's operation in a plan's `operation` (`None` for another's).
    pub fn of(operation: &skyplan_core::plan::Operation) -> Option<Op> {
        operation.read(super::PROVIDER)
    }
}
