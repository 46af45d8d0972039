//! Pure domain types shared by every stage: addresses, impact classes, downtime, and the
//! resolved desired state of each resource kind. No IO, no provider knowledge.

mod address;
mod impact;
mod load_balancer;

pub use address::{Address, AddressParseError, ResourceKind};
pub use impact::{Downtime, Impact};
pub use load_balancer::*;
