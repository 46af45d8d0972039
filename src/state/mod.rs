//! The local state: what skyplan last applied, in `<state-dir>/skyplan.state.json`, the
//! lock that keeps two runs from changing it at once, and the journal of the apply in progress.
//!
//! Architecture invariant: this module knows nothing about providers; their parts of the
//! state are opaque JSON values.

mod error;
mod file;
pub mod journal;
mod lock;
mod store;

pub use error::StateError;
pub use file::{ResourceState, State, FORMAT_VERSION};
pub use lock::{LockInfo, StateLock};
pub use store::StateStore;
