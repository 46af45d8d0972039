//! The cloudscale.ch provider: its section of the config language (`config/`, `spec.rs`), its
//! API client, the mapping between the config and cloudscale objects, and its impact table.

pub mod adopt;
pub mod api;
pub mod binding;
pub mod catalog;
pub mod ccm;
pub mod client;
pub mod config;
pub mod desired;
pub mod diff;
pub mod execute;
pub mod health;
pub mod impact;
mod indexed;
pub mod limiter;
mod live;
pub mod objects;
pub mod ops;
pub mod order;
mod provider;
pub mod refresh;
pub mod servers;
mod small_map;
pub mod spec;
pub mod verify;

pub use config::CloudscaleConfig;
pub use provider::{CloudscaleEmbedded, CloudscaleProvider};
