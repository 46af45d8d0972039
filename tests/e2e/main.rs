//! End-to-end tests: the real `skyplan` binary against the embedded simulators and
//! `skyplan sim serve`, one test binary in one folder per cloud plus one for the pipeline:
//!
//! - `cloudscale`, `cloudstack`, `phoenixnap`: each cloud's impact rows (direct mode and
//!   controller mode), lifecycle, kill recovery, flaky APIs, and its simulator against
//!   clients written for the real API;
//! - `kubernetes`: node policies and drift, Service bindings, cluster errors, kubectl against
//!   the simulator, and `real_apiserver` (what must hold against a real kube-apiserver);
//! - `pipeline`: what holds whichever cloud it drives — the command line, saved plans,
//!   locking, windows, verification, durations, drift reports, the state in PostgreSQL,
//!   `sim serve`, the examples in place;
//! - `support`: the harness (a project, the binary, the simulators served), HTTP, and the
//!   needs of the tests that are `#[ignore = "needs …"]`.

mod cloudscale;
mod cloudstack;
mod kubernetes;
mod phoenixnap;
mod pipeline;
mod support;
