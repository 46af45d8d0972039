//! The simulated account: every object the API shows, in creation order (lists are ordered
//! by creation, as the server orders by internal id), and the async jobs. This is also the
//! world file's format (pretty JSON).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::jobs::Job;

/// Bumped when an old file could no longer be read correctly.
pub const WORLD_FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct World {
    pub format: u32,
    pub settings: Settings,
    pub zones: Vec<Zone>,
    pub offerings: Vec<Offering>,
    pub versions: Vec<KubernetesVersion>,
    pub networks: Vec<Network>,
    pub public_ips: Vec<PublicIp>,
    /// The next address minted once every free address of the pool is taken.
    pub next_public_ip: u32,
    pub vms: Vec<Vm>,
    pub keypairs: Vec<KeyPair>,
    pub lb_rules: Vec<LbRule>,
    pub firewall_rules: Vec<FirewallRule>,
    pub tags: Vec<Tag>,
    pub clusters: Vec<Cluster>,
    pub jobs: Vec<Job>,
    /// The server's internal (database) ids, which some error texts show.
    pub next_db_id: u64,
    /// The rules whose VMs the `unhealthy-after-change` fault makes report unhealthy (see
    /// `health`): in memory only, so a server started without the fault reports by the VMs.
    #[serde(skip)]
    pub unhealthy_rules: std::collections::BTreeSet<String>,
}

/// World-level settings: they persist in the file; command-line options override them.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Settings {
    pub version: Option<String>,
    pub hypervisor: Option<String>,
    /// `cloud.kubernetes.cluster.max.size` of the account.
    pub max_cluster_size: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Zone {
    pub id: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Offering {
    pub id: String,
    pub name: String,
    pub cpunumber: u32,
    /// MB.
    pub memory: u32,
    /// MHz.
    pub cpuspeed: u32,
    /// A custom ("dynamic") offering: the VM's size is given at deploy time.
    pub iscustomized: bool,
    #[serde(with = "super::world::stamp")]
    pub created: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KubernetesVersion {
    pub id: String,
    pub name: String,
    pub semanticversion: String,
    /// Enabled | Disabled.
    pub state: String,
    pub mincpunumber: u32,
    pub minmemory: u32,
    pub isostate: String,
    pub zoneid: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Network {
    pub id: String,
    pub name: String,
    pub zoneid: String,
    pub cidr: String,
    /// Created by CKS for a cluster given no network: deleted with it.
    #[serde(default)]
    pub created_for_cluster: bool,
    #[serde(with = "super::world::stamp")]
    pub created: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublicIp {
    pub id: String,
    pub ipaddress: String,
    /// Allocating | Allocated | Free.
    pub state: String,
    pub associatednetworkid: Option<String>,
    pub issourcenat: bool,
    pub zoneid: String,
    #[serde(default, with = "super::world::optional_stamp")]
    pub allocated: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Vm {
    pub id: String,
    pub name: String,
    pub state: String,
    pub zoneid: String,
    pub serviceofferingid: String,
    pub networkid: String,
    pub nic_id: String,
    pub ipaddress: String,
    pub hypervisor: String,
    #[serde(with = "super::world::stamp")]
    pub created: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyPair {
    pub name: String,
    pub fingerprint: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LbRule {
    pub id: String,
    /// The internal id the server's conflict message shows (shared with firewall rules).
    pub db_id: u64,
    pub name: String,
    pub description: Option<String>,
    pub publicipid: String,
    pub publicport: u16,
    pub privateport: u16,
    pub algorithm: String,
    pub protocol: String,
    /// Stored as the server stores it: space-separated after create, comma-separated after
    /// an update (research §1.5).
    pub cidrlist: Option<String>,
    pub networkid: String,
    /// Add (until its create job ends) | Active.
    pub state: String,
    pub vm_ids: Vec<String>,
    #[serde(with = "super::world::stamp")]
    pub created: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FirewallRule {
    pub id: String,
    /// The internal id (LB and firewall rules share the server's rule table and its ids).
    #[serde(default)]
    pub db_id: u64,
    pub ipaddressid: String,
    pub protocol: String,
    pub startport: Option<u16>,
    pub endport: Option<u16>,
    pub cidrlist: Vec<String>,
    pub state: String,
    /// The LB rule this rule was opened for (`openfirewall`); it goes when that rule goes.
    #[serde(default)]
    pub related: Option<String>,
    #[serde(with = "super::world::stamp")]
    pub created: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tag {
    pub key: String,
    pub value: String,
    pub resourcetype: String,
    pub resourceid: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cluster {
    pub id: String,
    /// The internal id the server's error texts show.
    pub db_id: u64,
    pub name: String,
    pub description: Option<String>,
    pub zoneid: String,
    pub kubernetesversionid: String,
    /// The cluster's global offering.
    pub serviceofferingid: String,
    pub workerofferingid: String,
    pub controlofferingid: String,
    pub etcdofferingid: Option<String>,
    pub networkid: String,
    pub keypair: Option<String>,
    /// Worker count.
    pub size: u32,
    pub controlnodes: u32,
    pub etcdnodes: u32,
    pub state: String,
    pub autoscalingenabled: bool,
    pub minsize: Option<u32>,
    pub maxsize: Option<u32>,
    pub control_vm_ids: Vec<String>,
    pub etcd_vm_ids: Vec<String>,
    pub worker_vm_ids: Vec<String>,
    /// The network was created for this cluster and goes with it.
    pub network_cleanup: bool,
    #[serde(with = "super::world::stamp")]
    pub created: Timestamp,
}

impl Cluster {
    pub fn vm_ids(&self) -> impl Iterator<Item = &String> {
        self.control_vm_ids
            .iter()
            .chain(&self.etcd_vm_ids)
            .chain(&self.worker_vm_ids)
    }
}

impl World {
    pub fn offering(&self, id: &str) -> Option<&Offering> {
        self.offerings.iter().find(|o| o.id == id)
    }

    pub fn version(&self, id: &str) -> Option<&KubernetesVersion> {
        self.versions.iter().find(|v| v.id == id)
    }

    pub fn network(&self, id: &str) -> Option<&Network> {
        self.networks.iter().find(|n| n.id == id)
    }

    pub fn zone(&self, id: &str) -> Option<&Zone> {
        self.zones.iter().find(|z| z.id == id)
    }

    pub fn vm(&self, id: &str) -> Option<&Vm> {
        self.vms.iter().find(|v| v.id == id)
    }

    pub fn public_ip(&self, id: &str) -> Option<&PublicIp> {
        self.public_ips.iter().find(|ip| ip.id == id)
    }

    pub fn lb_rule(&self, id: &str) -> Option<&LbRule> {
        self.lb_rules.iter().find(|r| r.id == id)
    }

    pub fn cluster(&self, id: &str) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.id == id)
    }

    pub fn cluster_mut(&mut self, id: &str) -> Option<&mut Cluster> {
        self.clusters.iter_mut().find(|c| c.id == id)
    }

    pub fn next_db_id(&mut self) -> u64 {
        self.next_db_id += 1;
        self.next_db_id
    }

    pub fn tags_of(&self, resource_id: &str) -> Vec<&Tag> {
        self.tags
            .iter()
            .filter(|t| t.resourceid == resource_id)
            .collect()
    }

    /// Removes VMs for good (destroyed and expunged), with their LB rule mappings, as the
    /// server's expunge does (`removeVmFromLoadBalancers`).
    pub fn expunge_vms(&mut self, ids: &[String]) {
        self.vms.retain(|vm| !ids.contains(&vm.id));
        for rule in &mut self.lb_rules {
            rule.vm_ids.retain(|id| !ids.contains(id));
        }
        self.tags.retain(|t| !ids.contains(&t.resourceid));
    }
}

/// Timestamps in the file as RFC 3339 text.
pub mod stamp {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(at)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

pub mod optional_stamp {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => s.collect_str(at),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| t.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}
