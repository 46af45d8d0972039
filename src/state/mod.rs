//! The local state: what skyplan last applied, in `<state-dir>/skyplan.state.json`, and the
//! lock that keeps two runs from changing it at once.
//!
//! Architecture invariant: this module knows nothing about providers; their parts of the
//! state are opaque JSON values.

mod error;
mod file;
mod lock;
mod store;

pub use error::StateError;
pub use file::{ResourceState, State, FORMAT_VERSION};
pub use lock::{LockInfo, StateLock};
pub use store::StateStore;
