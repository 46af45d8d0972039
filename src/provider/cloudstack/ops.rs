//! The cloud operations of a CloudStack plan, per resource kind.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{cluster::ClusterOp, lb::LbOp};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Op {
    Cluster(ClusterOp),
    Lb(LbOp),
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Cluster(op) => op.fmt(f),
            Op::Lb(op) => op.fmt(f),
        }
    }
}
