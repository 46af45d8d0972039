//! The simulated account: every object the API serves, as kept in memory and in the world file.
//! References are plain UUIDs here; the routes turn them into nested `{href, uuid, name}` objects.
//! Enum-like fields are enums so that a request with a value the real API refuses fails to parse.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};

use ipnet::IpNet;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::address_book::UsedAddresses;
use super::index::Index;

pub type Tags = BTreeMap<String, String>;

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
    pub load_balancers: Vec<LoadBalancer>,
    #[serde(default)]
    pub pools: Vec<Pool>,
    #[serde(default)]
    pub members: Vec<Member>,
    #[serde(default)]
    pub listeners: Vec<Listener>,
    #[serde(default)]
    pub health_monitors: Vec<HealthMonitor>,
    #[serde(default)]
    pub floating_ips: Vec<FloatingIp>,
    #[serde(default)]
    pub servers: Vec<Server>,
    #[serde(default)]
    pub networks: Vec<Network>,
    #[serde(default)]
    pub subnets: Vec<Subnet>,
    #[serde(default)]
    pub server_groups: Vec<ServerGroup>,
    /// Lookups for the list endpoints; emptied by every change (see `Sim::write`).
    #[serde(skip)]
    pub index: OnceLock<Arc<Index>>,
    /// The addresses taken, kept between creates so that allocation does not rebuild the set;
    /// `None` after a release (a deleted load balancer or server) until the next allocation.
    #[serde(skip)]
    pub used_addresses: Option<UsedAddresses>,
    /// The pools whose members the `unhealthy-after-change` fault keeps `down` (see `health`):
    /// in memory only, so a server started without the fault forgets them.
    #[serde(skip)]
    pub unhealthy_pools: BTreeSet<Uuid>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadBalancer {
    pub uuid: Uuid,
    pub name: String,
    pub flavor: String,
    pub zone: String,
    pub vip_addresses: Vec<Vip>,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
    /// The status is `changing` until this instant, `running` after. An instant rather than a
    /// flag so that a world file read by a later process still settles.
    #[serde(
        default,
        with = "optional_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub changing_until: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Vip {
    pub address: IpAddr,
    pub subnet: Uuid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    RoundRobin,
    LeastConnections,
    SourceIp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolProtocol {
    Tcp,
    Proxy,
    Proxyv2,
    Udp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pool {
    pub uuid: Uuid,
    pub name: String,
    pub load_balancer: Uuid,
    pub algorithm: Algorithm,
    pub protocol: PoolProtocol,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Member {
    pub uuid: Uuid,
    pub pool: Uuid,
    pub name: String,
    pub enabled: bool,
    pub protocol_port: u16,
    pub monitor_port: u16,
    pub address: IpAddr,
    pub subnet: Uuid,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListenerProtocol {
    Tcp,
    Udp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Listener {
    pub uuid: Uuid,
    pub load_balancer: Uuid,
    /// `None` for a listener created without a pool (deleting a pool deletes its listeners).
    pub pool: Option<Uuid>,
    pub name: String,
    pub protocol: ListenerProtocol,
    pub protocol_port: u16,
    #[serde(default)]
    pub allowed_cidrs: Vec<IpNet>,
    pub timeout_client_data_ms: u32,
    pub timeout_member_connect_ms: u32,
    pub timeout_member_data_ms: u32,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MonitorType {
    Ping,
    Tcp,
    Http,
    Https,
    TlsHello,
    UdpConnect,
}

impl MonitorType {
    pub fn checks_http(self) -> bool {
        matches!(self, MonitorType::Http | MonitorType::Https)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HttpVersion {
    #[serde(rename = "1.0")]
    V1_0,
    #[serde(rename = "1.1")]
    V1_1,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HttpCheck {
    pub expected_codes: Vec<String>,
    pub method: String,
    pub url_path: String,
    pub version: HttpVersion,
    pub host: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HealthMonitor {
    pub uuid: Uuid,
    pub pool: Uuid,
    pub delay_s: u32,
    pub timeout_s: u32,
    pub up_threshold: u32,
    pub down_threshold: u32,
    #[serde(rename = "type")]
    pub kind: MonitorType,
    pub http: Option<HttpCheck>,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FloatingIpType {
    Regional,
    Global,
}

/// Floating IPs have no UUID: the API addresses them by their address.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FloatingIp {
    pub network: IpNet,
    #[serde(rename = "type")]
    pub kind: FloatingIpType,
    /// Region slug (`lpg`, `rma`); `None` for global floating IPs.
    pub region: Option<String>,
    #[serde(default)]
    pub load_balancer: Option<Uuid>,
    #[serde(default)]
    pub server: Option<Uuid>,
    #[serde(default)]
    pub reverse_ptr: Option<String>,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Server {
    pub uuid: Uuid,
    pub name: String,
    /// `running`, `stopped` or `changing`.
    pub status: String,
    pub flavor: String,
    /// The image slug the server was created from (absent in worlds written before it was kept).
    #[serde(default)]
    pub image: Option<String>,
    pub zone: String,
    pub interfaces: Vec<Interface>,
    /// The root volume first; empty in worlds written before volumes were kept (see
    /// `server_view`).
    #[serde(default)]
    pub volumes: Vec<Volume>,
    /// The server groups it was created in.
    #[serde(default)]
    pub server_groups: Vec<Uuid>,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

/// A volume attached to a server, in attachment order (`/dev/vda`, `/dev/vdb`, …).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Volume {
    pub uuid: Uuid,
    /// `ssd` or `bulk`.
    #[serde(rename = "type")]
    pub kind: VolumeType,
    pub size_gb: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VolumeType {
    Ssd,
    Bulk,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interface {
    /// `None` for the public interface.
    pub network: Option<Uuid>,
    pub addresses: Vec<InterfaceAddress>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InterfaceAddress {
    pub address: IpAddr,
    pub subnet: Uuid,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Network {
    pub uuid: Uuid,
    pub name: String,
    pub zone: String,
    pub mtu: u32,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subnet {
    pub uuid: Uuid,
    pub network: Uuid,
    pub cidr: IpNet,
    #[serde(default)]
    pub gateway_address: Option<IpAddr>,
    #[serde(default)]
    pub dns_servers: Vec<IpAddr>,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

/// Servers placed apart from each other (`anti-affinity`, the one type there is): on
/// different hosts, so that one host failing takes at most one of them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerGroup {
    pub uuid: Uuid,
    pub name: String,
    pub zone: String,
    #[serde(default)]
    pub tags: Tags,
    #[serde(default, with = "timestamp")]
    pub created_at: Timestamp,
}

/// Objects the API addresses by UUID.
pub trait Keyed {
    fn uuid(&self) -> Uuid;
}

macro_rules! keyed {
    ($($t:ty),*) => {$(impl Keyed for $t { fn uuid(&self) -> Uuid { self.uuid } })*};
}
keyed!(
    LoadBalancer,
    Pool,
    Member,
    Listener,
    HealthMonitor,
    Server,
    Network,
    Subnet,
    ServerGroup
);

/// Objects with tags, which list endpoints filter on.
pub trait Tagged {
    fn tags(&self) -> &Tags;
}

macro_rules! tagged {
    ($($t:ty),*) => {$(impl Tagged for $t { fn tags(&self) -> &Tags { &self.tags } })*};
}
tagged!(
    LoadBalancer,
    Pool,
    Member,
    Listener,
    HealthMonitor,
    FloatingIp,
    Server,
    Network,
    Subnet,
    ServerGroup
);

pub fn find<T: Keyed>(items: &[T], uuid: Uuid) -> Option<&T> {
    items.iter().find(|item| item.uuid() == uuid)
}

pub fn find_mut<T: Keyed>(items: &mut [T], uuid: Uuid) -> Option<&mut T> {
    items.iter_mut().find(|item| item.uuid() == uuid)
}

impl World {
    /// Builds the lookups the list endpoints need, unless this world already has them.
    pub fn indexed(&self) -> &World {
        self.index.get_or_init(|| Arc::new(Index::of(self)));
        self
    }

    /// Forgets the lookups: called before every change.
    pub fn unindex(&mut self) {
        self.index = OnceLock::new();
    }

    pub fn load_balancer(&self, uuid: Uuid) -> Option<&LoadBalancer> {
        match self.index.get() {
            Some(index) => index.load_balancer(uuid).map(|i| &self.load_balancers[i]),
            None => find(&self.load_balancers, uuid),
        }
    }

    pub fn pool(&self, uuid: Uuid) -> Option<&Pool> {
        match self.index.get() {
            Some(index) => index.pool(uuid).map(|i| &self.pools[i]),
            None => find(&self.pools, uuid),
        }
    }

    /// The members of a pool, in creation order.
    pub fn members_of(&self, pool: Uuid) -> Vec<&Member> {
        match self.index.get() {
            Some(index) => index
                .members_of(pool)
                .iter()
                .map(|&i| &self.members[i])
                .collect(),
            None => self.members.iter().filter(|m| m.pool == pool).collect(),
        }
    }

    /// The load balancer a pool belongs to, if both exist.
    pub fn pool_lb(&self, pool: Uuid) -> Option<Uuid> {
        self.pool(pool).map(|p| p.load_balancer)
    }

    pub fn monitor_of(&self, pool: Uuid) -> Option<&HealthMonitor> {
        match self.index.get() {
            Some(index) => index.monitor_of(pool).map(|i| &self.health_monitors[i]),
            None => self.health_monitors.iter().find(|m| m.pool == pool),
        }
    }

    /// Puts a load balancer into `changing` until `until`: the real API applies changes to one
    /// load balancer one at a time, so clients must wait for `running` between changes.
    pub fn mark_changing(&mut self, lb: Uuid, until: Timestamp) {
        if let Some(lb) = find_mut(&mut self.load_balancers, lb) {
            lb.changing_until = Some(until);
        }
    }

    /// Every address taken in the account (VIPs and server interfaces).
    pub fn taken_addresses(&self) -> impl Iterator<Item = IpAddr> + '_ {
        let vips = self
            .load_balancers
            .iter()
            .flat_map(|lb| lb.vip_addresses.iter().map(|v| v.address));
        let servers = self
            .servers
            .iter()
            .flat_map(|s| s.interfaces.iter())
            .flat_map(|i| i.addresses.iter().map(|a| a.address));
        vips.chain(servers)
    }

    /// The taken addresses, for a create to claim from; give them back with
    /// [`World::keep_used_addresses`] once the create succeeded.
    pub fn take_used_addresses(&mut self) -> UsedAddresses {
        match self.used_addresses.take() {
            Some(used) => used,
            None => UsedAddresses::of(self.taken_addresses()),
        }
    }

    pub fn keep_used_addresses(&mut self, used: UsedAddresses) {
        self.used_addresses = Some(used);
    }

    /// Called when addresses are released: the next allocation counts them afresh.
    pub fn forget_used_addresses(&mut self) {
        self.used_addresses = None;
    }
}

/// RFC 3339 on the wire and in the file (jiff's own serde support is not enabled here).
mod timestamp {
    use jiff::Timestamp;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(at)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

mod optional_timestamp {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => super::timestamp::serialize(at, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| text.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}
