//! Apache CloudStack: an estate made out of band, discovered and adopted; the CKS cluster
//! rows, the load-balancer rule rows in direct mode and in controller mode (the simulated
//! CloudStack CCM), a cluster's Nodes, the cloud-config credentials, lifecycle, refused
//! removals held back in delete order, kill recovery, a flaky API, no rule left without VMs
//! over generated changes, and the `cs` client against the simulator.

pub mod adopt;
pub mod cloud_config;
pub mod cluster_nodes;
pub mod cluster_rows;
pub mod controller;
pub mod direct_mode_rows;
pub mod flaky_api;
pub mod held_back_deletes;
pub mod ignore_changes;
pub mod kill_recovery;
pub mod lifecycle;
pub mod no_empty_rule;
pub mod simulator_clients;
pub mod support;
