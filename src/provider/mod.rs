//! Providers: one folder per cloud, each with its client, the mapping from the config to the
//! cloud's objects, and its impact table; all behind the [`Provider`] trait.

use std::fmt;

use serde::{Deserialize, Serialize};

pub mod cloudscale;
pub mod cloudstack;
mod companion;
pub mod http;
pub mod impact_table;
pub mod kubernetes;
pub mod phoenixnap;
pub mod registry;
mod traits;

pub use companion::Companion;
pub use traits::{DriftCheck, PlanOptions, Provider, ProviderError, Target};

/// A cloud operation of any provider, as a plan lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "kebab-case")]
// A plan holds a few operations per resource; boxing them would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Operation {
    Cloudscale(cloudscale::ops::Op),
    Cloudstack(cloudstack::ops::Op),
    Kubernetes(kubernetes::ops::Op),
    Phoenixnap(phoenixnap::ops::Op),
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Cloudscale(op) => op.fmt(f),
            Operation::Cloudstack(op) => op.fmt(f),
            Operation::Kubernetes(op) => op.fmt(f),
            Operation::Phoenixnap(op) => op.fmt(f),
        }
    }
}

#[cfg(test)]
mod user_agent_tests;
