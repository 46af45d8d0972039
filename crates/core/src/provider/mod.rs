//! Providers: one folder per cloud, each with its client, the mapping from the config to the
//! cloud's objects, and its impact table; all behind the [`Provider`] trait.

mod companion;
pub mod discover;
mod error;
#[cfg(test)]
pub(crate) mod fake;
mod health;
pub mod http;
pub mod impact_table;
mod refreshed;
mod traits;

pub use companion::Companion;
pub use error::{ErrorKind, ProviderError};
pub use health::Health;
pub use refreshed::Refreshed;
pub use traits::{Applied, DriftCheck, PlanOptions, Provider, Target};

/// Operations are plan data, opaque to the pipeline; each provider makes and reads its own.
pub use crate::plan::Operation;
