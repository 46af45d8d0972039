//! The cloudscale objects of one load balancer as plain values, keyed the way the cloudscale
//! CCM matches them: pools by name, members by name within their pool, one monitor and one
//! listener per pool, floating IPs by network. The same types describe the desired objects
//! (derived from the config, `uuid: None`) and the live ones (read by refresh). Enum-like
//! fields stay strings: a live object may carry values skyplan's config cannot express.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::spec::VipAddress;

/// The tag every object skyplan creates carries, valued with the resource address. Lets a plan
/// adopt what an earlier apply created when the state was lost, instead of creating duplicates.
pub const OWNER_TAG: &str = "skyplan.address";

pub use super::small_map::SmallMap;

/// An object's tags (each object skyplan creates has one: [`OWNER_TAG`]).
pub type Tags = SmallMap<String>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LbObject {
    pub uuid: Option<String>,
    pub name: String,
    pub flavor: String,
    pub zone: String,
    /// Desired: as configured (address optional). Live: as assigned.
    pub vip_addresses: Vec<VipAddress>,
    pub tags: Tags,
    /// Live only: `changing` or `running`.
    pub status: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolObject {
    pub uuid: Option<String>,
    pub name: String,
    pub algorithm: String,
    pub protocol: String,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberObject {
    pub uuid: Option<String>,
    pub name: String,
    pub enabled: bool,
    pub protocol_port: u16,
    pub monitor_port: u16,
    pub address: String,
    /// Subnet UUID.
    pub subnet: String,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpObject {
    pub expected_codes: Vec<String>,
    pub method: String,
    pub url_path: String,
    pub version: String,
    pub host: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorObject {
    pub uuid: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub delay_s: u32,
    pub timeout_s: u32,
    pub up_threshold: u32,
    pub down_threshold: u32,
    pub http: Option<HttpObject>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListenerObject {
    pub uuid: Option<String>,
    pub name: String,
    pub protocol: String,
    pub protocol_port: u16,
    pub allowed_cidrs: Vec<String>,
    pub timeout_client_data_ms: u32,
    pub timeout_member_connect_ms: u32,
    pub timeout_member_data_ms: u32,
    pub tags: Tags,
}

/// A pool with the objects that hang off it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolSet {
    pub pool: PoolObject,
    /// By member name (`address:port`).
    pub members: BTreeMap<String, MemberObject>,
    pub monitor: Option<MonitorObject>,
    pub listener: Option<ListenerObject>,
}

/// A load balancer's pool sets by pool name.
pub type PoolSets = SmallMap<PoolSet>;

/// A load balancer with everything under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LbObjects {
    pub lb: LbObject,
    /// By pool name (`tcp`, `tcp/http`).
    pub pools: PoolSets,
    /// Floating IP networks (CIDR) assigned to this load balancer.
    pub floating_ips: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloatingIpObject {
    /// The CIDR, e.g. `5.102.150.123/32`; the API addresses a floating IP by its address.
    pub network: String,
    pub load_balancer: Option<String>,
    pub server: Option<String>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubnetObject {
    pub uuid: String,
    pub cidr: String,
}

/// Everything a refresh read from one cloudscale account.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Every load balancer in the account. Pools, monitors and listeners are filled in for all;
    /// members only for the load balancers refresh was asked about (members cost a GET per pool).
    pub load_balancers: Vec<LbObjects>,
    pub floating_ips: Vec<FloatingIpObject>,
    pub subnets: Vec<SubnetObject>,
    /// Zones and flavors, where a target named one no load balancer uses yet.
    #[serde(default)]
    pub catalog: super::catalog::Catalog,
}

impl Snapshot {
    pub fn load_balancer(&self, uuid: &str) -> Option<&LbObjects> {
        self.load_balancers
            .iter()
            .find(|l| l.lb.uuid.as_deref() == Some(uuid))
    }

    /// Load balancers carrying skyplan's ownership tag for this address.
    pub fn owned_by<'a>(&'a self, address: &'a str) -> impl Iterator<Item = &'a LbObjects> + 'a {
        self.load_balancers
            .iter()
            .filter(move |l| l.lb.tags.get(OWNER_TAG).map(String::as_str) == Some(address))
    }
}
