//! A simulator of the cloudscale.ch API v1 (load balancers and their pools, members,
//! listeners and health monitors; floating IPs, servers, server groups, networks, subnets),
//! served over HTTP with the real wire protocol, so that skyplan's client, `curl` or any other
//! client written against the real API works against it unchanged. The world lives in one
//! JSON file.
//!
//! Codemap: `server` starts and stops it; `routes` holds one file per collection; `world` is
//! the data and its file format (`index` its lookups for the list endpoints, `address_book`
//! the taken addresses), `inventory` what a fresh account holds, `catalog` what flavor and
//! image slugs stand for, `persist` the file writes; `api` the wire conventions (errors,
//! bodies, lookups), `refs` nested references, `origin` the base URL their `href`s start
//! with, `filter` tag filters, `health` members' `monitor_status`, `auth` the bearer token,
//! `stats` the request counters, `faults` the faults injected on purpose.

mod address_book;
mod api;
mod auth;
mod catalog;
mod faults;
mod filter;
mod health;
mod index;
mod inventory;
mod origin;
mod persist;
mod recreate;
mod refs;
mod routes;
mod server;
mod state;
mod stats;
mod world;

#[cfg(test)]
mod tests;

/// Shared with the PhoenixNAP simulator, which draws its transport faults the same way.
pub(crate) use faults::{draw as draw_transport_fault, Fault as TransportFault};
/// Shared with the CloudStack simulator, which drops connections the same way.
pub(crate) use faults::{AbortableListener, ConnectionAbort};
pub use faults::{Faults, FaultsError, Unhealthy, FAULTS_ENV};
pub use inventory::{DEFAULT_NETWORK_UUID, DEFAULT_SUBNET_UUID, PUBLIC_SUBNET_UUID};
pub use server::{spawn, SimHandle, SimOptions, DEFAULT_SETTLE, DEFAULT_TOKEN};
pub use stats::{FaultCounts, FaultKind, RequestCounts};
