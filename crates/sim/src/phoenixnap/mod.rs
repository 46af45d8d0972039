//! A simulator of PhoenixNAP Bare Metal Cloud: the OAuth2 token endpoint and the IP, network,
//! tag-manager and BMC server APIs, served over HTTP with the real wire protocol
//! (`shared/research/phoenixnap.md` §1-5 and its §8 model), so that skyplan's client, the
//! simulated CCM and `curl` work against it unchanged. The world lives in one JSON file.
//!
//! Codemap: `server` starts and stops it; `auth` the token endpoint, tokens, scopes and the
//! bearer check; `routes` one file per collection (`attach` the asynchronous attach/detach);
//! `world` the data and file format, `blocks` the IP block state machine (transitions
//! evaluated lazily from timestamps), `pool` carving blocks out of a location's pools,
//! `filter` the `tag=name.value` filters, `render` the wire objects, `inventory` a fresh
//! account, `persist` the file writes; `api` errors and bodies, `validate` field formats,
//! `ids` object ids, `stats` the request counters, `faults` the faults injected on purpose.
//!
//! World file (format 1, snake_case; every collection optional, so a small hand-written world
//! loads): `{"format": 1, "locations": [{"code", "ip_pools": ["198.19.0.0/20"],
//! "server_public_range", "server_private_range"}], "tags": [{"id", "name", "description",
//! "is_billing_tag", "created_by"}], "ip_blocks": [{"id", "location", "cidr", "description",
//! "tags": [{"tag_id", "value"}], "status": "unassigned"|"assigned", "assigned_network",
//! "transition": {"kind": "assign"|"unassign", "done_at"}, "created_on"}], "public_networks":
//! [{"id", "name", "location", "description", "vlan_id", "memberships": [{"resource_id",
//! "resource_type", "ips"}], "ra_enabled", "created_on"}], "servers": [{"id", "hostname",
//! "description", "os", "type", "location", "status", "public_ips", "private_ips", "tags",
//! "provisioned_on"}]}`.

mod api;
mod auth;
mod blocks;
mod faults;
mod filter;
mod ids;
mod inventory;
mod persist;
mod pool;
mod render;
mod routes;
mod server;
mod state;
mod stats;
mod validate;
mod world;

#[cfg(test)]
mod tests;

pub use crate::cloudscale::FAULTS_ENV;
pub use faults::Faults;
pub use inventory::{
    ASH_PUBLIC_NETWORK_ID, DEFAULT_PUBLIC_NETWORK_ID, DEFAULT_SERVER_HOSTNAMES, DEFAULT_SERVER_TYPE,
};
pub use render::PUBLIC_NETWORK_RESOURCE_TYPE;
pub use server::{
    spawn, PnapSimHandle, PnapSimOptions, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET,
    DEFAULT_TRANSITION, TOKEN_TTL_ENV, TRANSITION_ENV,
};
pub use stats::{FaultCounts, RequestCounts};
