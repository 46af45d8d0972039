//! End-to-end tests: the real `skyplan` binary against the embedded cloudscale simulator.

mod cli;
mod cloudscale_rows;
mod crash;
mod cs_client;
mod drift;
mod faults;
mod independent_clients;
mod lifecycle;
mod locking;
mod saved_plans;
mod support;
mod windows;
