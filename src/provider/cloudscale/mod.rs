//! The cloudscale.ch provider: its API client, the mapping between the config and cloudscale
//! objects, and its impact table.

pub mod desired;
pub mod diff;
pub mod impact;
pub mod objects;
pub mod ops;
pub mod order;
