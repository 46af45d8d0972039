//! API simulators: stand-ins for the clouds, speaking their real wire protocols over HTTP.
//!
//! Architecture invariant: a simulator knows nothing about skyplan's own clients
//! (`crate::provider`); it is written from the published API facts alone, so a test that passes
//! against it proves the client speaks the real protocol, not merely the same misreading of it.

pub mod cloudscale;
pub mod cloudstack;
pub mod controllers;
pub mod kubernetes;
pub mod persist;
pub mod phoenixnap;
pub mod request_stats;
pub mod unhealthy;
