//! Apache CloudStack: Kubernetes Service (CKS) clusters and load-balancer rules.
//!
//! - `spec.rs` — what the config asks for; `config/` — CloudStack's section of the config
//!   language (its tables → spec, its rules, its schema).
//! - `client/` — the wire protocol: signing, envelopes, paging, async jobs, retries.
//! - `api.rs` — the API objects skyplan reads; `live.rs` — one refreshed [`live::Inventory`].
//! - `cluster/` — `[cluster.NAME]`: desired state, plan-time checks, the CKS impact table,
//!   diff and executor.
//! - `lb/` — `[load-balancer.NAME]`: LB rules, public IP and firewall rules, the LB impact
//!   table (direct mode), diff and executor.
//! - `adopt/` — taking over an existing estate: the survey, what no resource manages, and the
//!   config that adopts it.
//! - `provider.rs` — the [`skyplan_core::provider::Provider`] implementation tying them together;
//!   `refresh.rs` — one paged list per collection; `health.rs` — what a resource reports once
//!   a change is done, for the rollout's health gate; `placement.rs` — the cluster and zone a
//!   change is in, for a rollout grouped by either.

pub mod adopt;
pub mod api;
pub mod client;
pub mod cluster;
pub mod config;
pub mod graph;
mod health;
pub mod instances;
pub mod lb;
pub mod live;
pub mod ops;
mod placement;
pub mod provider;
pub mod recover;
mod refresh;
pub mod spec;

pub use config::CloudstackConfig;

/// The provider's name in the config and the state.
pub const PROVIDER: &str = "cloudstack";

/// The tag key that marks what skyplan created (value: the resource address), so that a lost
/// state adopts instead of duplicating.
pub const OWNER_TAG: &str = "skyplan.address";
