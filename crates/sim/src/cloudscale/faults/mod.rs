//! Fault injection: latency, throttling, server errors, dropped connections and failures after
//! a change was made, drawn per `/v1` request at configured rates, so that clients can be
//! tested against a cloud that misbehaves the way real ones do. The `/_sim` routes are never
//! faulted; the faults injected are counted beside the requests at `GET /_sim/requests`.

mod abort;
mod inject;
mod spec;

pub use abort::{AbortableListener, ConnectionAbort};
pub(crate) use inject::{draw, Fault};
pub use inject::{inject, Injector};
pub use spec::{Faults, FaultsError, Recreate, Unhealthy};

/// The environment variable holding the fault spec of the embedded simulator.
pub const FAULTS_ENV: &str = "SKYPLAN_SIM_FAULTS";
