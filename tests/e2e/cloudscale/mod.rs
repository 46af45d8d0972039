//! cloudscale.ch: the impact table's rows in direct mode and in controller mode (the simulated
//! cloudscale CCM), the catalog checks, lifecycle and kill recovery, a flaky and a throttling
//! API, the provider's own client, refresh and executor against the simulator, and clients
//! written for the real API against the simulator, and an estate made without skyplan adopted
//! (`adopt`).

pub mod adopt;
pub mod catalog_checks;
pub mod client_against_simulator;
pub mod controller;
pub mod direct_mode_rows;
pub mod direct_mode_service_members;
pub mod flaky_api;
pub mod import_by_id;
pub mod interrupt;
pub mod kill_recovery;
pub mod lifecycle;
pub mod make_before_break;
pub mod no_empty_pool;
pub mod simulator_clients;
pub mod throttling;
