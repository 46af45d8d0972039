//! The cloudscale.ch provider: its API client, the mapping between the config and cloudscale
//! objects, and its impact table.

pub mod api;
pub mod client;
pub mod execute;
pub mod objects;
pub mod ops;
pub mod refresh;
