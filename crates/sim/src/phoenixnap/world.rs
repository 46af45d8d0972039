//! The simulated BMC account: every object the four APIs serve, as kept in memory and in the
//! world file (pretty JSON, snake_case fields; see `mod.rs` for the format). Tags on resources
//! are kept as (tag id, value) so that renaming a tag in the tag manager renames it everywhere,
//! as the real `TagAssignment` (which carries the tag's id) implies.

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// The world file format this simulator writes and reads.
pub const WORLD_FORMAT: u32 = 1;

fn current_format() -> u32 {
    WORLD_FORMAT
}

/// Collections in creation order, which is also the order the list endpoints answer in.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct World {
    #[serde(default = "current_format")]
    pub format: u32,
    #[serde(default)]
    pub locations: Vec<Location>,
    #[serde(default)]
    pub tags: Vec<Tag>,
    #[serde(default)]
    pub ip_blocks: Vec<IpBlock>,
    #[serde(default)]
    pub public_networks: Vec<PublicNetwork>,
    #[serde(default)]
    pub servers: Vec<Server>,
}

/// A data centre with public address space.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    /// `PHX`, `ASH`, … as the APIs spell it.
    pub code: String,
    /// The public IPv4 ranges IP blocks are carved from, first fit in this order.
    #[serde(default)]
    pub ip_pools: Vec<Ipv4Net>,
    /// Where new servers' public and private addresses come from.
    #[serde(default)]
    pub server_public_range: Option<Ipv4Net>,
    #[serde(default)]
    pub server_private_range: Option<Ipv4Net>,
}

/// A tag name in the tag manager. Values are free-form at assignment; `Tag.values` and
/// `resourceAssignments` are derived from the resources carrying it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tag {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub is_billing_tag: bool,
    /// `USER` or `SYSTEM`.
    #[serde(default = "user")]
    pub created_by: String,
}

fn user() -> String {
    "USER".into()
}

/// A tag assigned to a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagRef {
    pub tag_id: String,
    #[serde(default)]
    pub value: Option<String>,
}

/// The stable states a block rests in; `assigning`/`unassigning` exist only while a
/// [`Transition`] runs (see `blocks.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockStatus {
    Unassigned,
    Assigning,
    Assigned,
    Unassigning,
}

impl BlockStatus {
    /// The wire spelling (lower case, as the spec lists it and the CCM compares it).
    pub fn as_str(self) -> &'static str {
        match self {
            BlockStatus::Unassigned => "unassigned",
            BlockStatus::Assigning => "assigning",
            BlockStatus::Assigned => "assigned",
            BlockStatus::Unassigning => "unassigning",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransitionKind {
    Assign,
    Unassign,
}

/// An attach or detach accepted (202) and finishing at `done_at`. Kept as a timestamp, not a
/// timer, so that a world reloaded from its file finishes it at the same moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transition {
    pub kind: TransitionKind,
    pub done_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpBlock {
    pub id: String,
    pub location: String,
    pub cidr: Ipv4Net,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub tags: Vec<TagRef>,
    /// The state the last finished transition left (`unassigned` or `assigned`).
    pub status: BlockStatus,
    /// The public network the block is attached to, set when the attach is accepted and
    /// cleared when the detach finishes.
    #[serde(default)]
    pub assigned_network: Option<String>,
    #[serde(default)]
    pub transition: Option<Transition>,
    pub created_on: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublicNetwork {
    pub id: String,
    pub name: String,
    pub location: String,
    #[serde(default)]
    pub description: Option<String>,
    pub vlan_id: u16,
    #[serde(default)]
    pub memberships: Vec<Membership>,
    #[serde(default)]
    pub ra_enabled: bool,
    pub created_on: Timestamp,
}

/// A server (or storage, virtual) on a public network with the addresses it uses there.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Membership {
    pub resource_id: String,
    /// `server`, `storage` or `virtual`.
    pub resource_type: String,
    #[serde(default)]
    pub ips: Vec<Ipv4Addr>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    pub id: String,
    pub hostname: String,
    #[serde(default)]
    pub description: Option<String>,
    pub os: String,
    /// e.g. `s2.c1.medium`.
    #[serde(rename = "type")]
    pub server_type: String,
    pub location: String,
    /// `powered-on`, `powered-off`, … as the BMC API spells it.
    pub status: String,
    #[serde(default)]
    pub public_ips: Vec<Ipv4Addr>,
    #[serde(default)]
    pub private_ips: Vec<Ipv4Addr>,
    #[serde(default)]
    pub tags: Vec<TagRef>,
    pub provisioned_on: Timestamp,
}

impl World {
    pub fn location(&self, code: &str) -> Option<&Location> {
        self.locations.iter().find(|l| l.code == code)
    }

    pub fn tag(&self, id: &str) -> Option<&Tag> {
        self.tags.iter().find(|t| t.id == id)
    }

    pub fn tag_named(&self, name: &str) -> Option<&Tag> {
        self.tags.iter().find(|t| t.name == name)
    }

    pub fn block(&self, id: &str) -> Option<&IpBlock> {
        self.ip_blocks.iter().find(|b| b.id == id)
    }

    pub fn block_mut(&mut self, id: &str) -> Option<&mut IpBlock> {
        self.ip_blocks.iter_mut().find(|b| b.id == id)
    }

    pub fn network(&self, id: &str) -> Option<&PublicNetwork> {
        self.public_networks.iter().find(|n| n.id == id)
    }

    pub fn server(&self, id: &str) -> Option<&Server> {
        self.servers.iter().find(|s| s.id == id)
    }

    pub fn server_mut(&mut self, id: &str) -> Option<&mut Server> {
        self.servers.iter_mut().find(|s| s.id == id)
    }

    /// Finishes every transition whose time has come, so that the file shows settled states.
    pub fn settle(&mut self, now: Timestamp) {
        for block in &mut self.ip_blocks {
            block.settle(now);
        }
    }
}
