//! End-to-end tests: the real `skyplan` binary against the embedded cloudscale simulator.

mod cloudscale_rows;
mod lifecycle;
mod support;
