//! One refreshed view of a CloudStack account: the catalog (zones, offerings, versions,
//! networks, keypairs), the clusters and VMs, and the load-balancing objects. Built by
//! `refresh`, read by the cluster and LB planners without further IO. [`Live`] is all a
//! refresh read, the account with it.

use std::collections::{BTreeMap, BTreeSet};

use skyplan_core::model::Address;

use crate::spec::{CloudstackClusterSpec, CloudstackLoadBalancerSpec, CsMembers};
use skyplan_core::provider::{ProviderError, Refreshed};

use super::lb::ccm::views::Views;
use super::PROVIDER;

use super::api::{
    Capabilities, FirewallRule, KubernetesCluster, KubernetesVersion, LoadBalancerRule, Network,
    PublicIpAddress, ServiceOffering, SshKeyPair, VirtualMachine, Zone,
};

/// The account's `cloud.kubernetes.cluster.max.size` when it cannot be read (its default).
pub const DEFAULT_MAX_CLUSTER_SIZE: u32 = 10;

#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub capabilities: Option<Capabilities>,
    /// `cloud.kubernetes.cluster.max.size` for the account (control nodes + workers).
    pub max_cluster_size: u32,
    pub zones: Vec<Zone>,
    pub offerings: Vec<ServiceOffering>,
    pub versions: Vec<KubernetesVersion>,
    pub networks: Vec<Network>,
    pub keypairs: Vec<SshKeyPair>,
    pub clusters: Vec<KubernetesCluster>,
    pub vms: Vec<VirtualMachine>,
    pub public_ips: Vec<PublicIpAddress>,
    pub rules: Vec<LoadBalancerRule>,
    pub firewall_rules: Vec<FirewallRule>,
    /// VM ids assigned to each LB rule (by rule id).
    pub rule_members: BTreeMap<String, Vec<String>>,
    /// Public IP ids an interrupted apply associated for a load balancer (by address) but did
    /// not get to tag: found by `recover::associated_by_interrupted_apply`.
    pub recovered_ips: BTreeMap<String, String>,
    /// Public IP ids the refreshed load balancers' state entries name: an IP one entry manages
    /// is never another address's by its tag (a tag left behind by a move).
    pub claimed_ips: BTreeSet<String>,
}

/// Finds a catalog object by UUID or, failing that, by name.
fn by_id_or_name<'a, T>(
    items: &'a [T],
    wanted: &str,
    id: impl Fn(&T) -> &str,
    name: impl Fn(&T) -> &str,
) -> Option<&'a T> {
    items
        .iter()
        .find(|item| id(item) == wanted)
        .or_else(|| items.iter().find(|item| name(item) == wanted))
}

impl Inventory {
    /// The server version as (major, minor, patch); 4.22 when unknown.
    pub fn server_version(&self) -> (u32, u32, u32) {
        self.capabilities
            .as_ref()
            .and_then(|c| super::api::parse_server_version(&c.cloudstackversion))
            .unwrap_or((4, 22, 0))
    }

    pub fn zone(&self, wanted: &str) -> Option<&Zone> {
        by_id_or_name(&self.zones, wanted, |z| &z.id, |z| &z.name)
    }

    pub fn offering(&self, wanted: &str) -> Option<&ServiceOffering> {
        by_id_or_name(&self.offerings, wanted, |o| &o.id, |o| &o.name)
    }

    pub fn offering_by_id(&self, id: &str) -> Option<&ServiceOffering> {
        self.offerings.iter().find(|o| o.id == id)
    }

    /// A supported version by UUID or semantic version (in `zone` or zone-less).
    pub fn version(&self, wanted: &str, zone_id: Option<&str>) -> Option<&KubernetesVersion> {
        let in_zone = |v: &&KubernetesVersion| match (zone_id, v.zoneid.as_deref()) {
            (Some(zone), Some(own)) => zone == own,
            _ => true,
        };
        self.versions
            .iter()
            .filter(in_zone)
            .find(|v| v.id == wanted)
            .or_else(|| {
                self.versions
                    .iter()
                    .filter(in_zone)
                    .find(|v| v.semanticversion == wanted)
            })
    }

    pub fn version_by_id(&self, id: &str) -> Option<&KubernetesVersion> {
        self.versions.iter().find(|v| v.id == id)
    }

    pub fn network(&self, wanted: &str) -> Option<&Network> {
        by_id_or_name(&self.networks, wanted, |n| &n.id, |n| &n.name)
    }

    pub fn keypair(&self, wanted: &str) -> Option<&SshKeyPair> {
        self.keypairs.iter().find(|k| k.name == wanted)
    }

    pub fn cluster_by_id(&self, id: &str) -> Option<&KubernetesCluster> {
        self.clusters.iter().find(|c| c.id == id)
    }

    pub fn cluster_by_name(&self, name: &str) -> Option<&KubernetesCluster> {
        self.clusters.iter().find(|c| c.name == name)
    }

    pub fn vm(&self, id: &str) -> Option<&VirtualMachine> {
        self.vms.iter().find(|v| v.id == id)
    }

    pub fn vm_by_name(&self, name: &str) -> Option<&VirtualMachine> {
        self.vms.iter().find(|v| v.name == name)
    }

    pub fn public_ip(&self, id: &str) -> Option<&PublicIpAddress> {
        self.public_ips.iter().find(|ip| ip.id == id)
    }

    pub fn public_ip_by_address(&self, address: &str) -> Option<&PublicIpAddress> {
        self.public_ips.iter().find(|ip| ip.ipaddress == address)
    }

    /// Every LB rule on the public IP.
    pub fn rules_on<'a>(
        &'a self,
        public_ip_id: &'a str,
    ) -> impl Iterator<Item = &'a LoadBalancerRule> {
        self.rules
            .iter()
            .filter(move |r| r.publicipid == public_ip_id)
    }

    /// Every LB rule in the network (they share its virtual router and reload with it).
    pub fn rules_in_network<'a>(
        &'a self,
        network_id: &'a str,
    ) -> impl Iterator<Item = &'a LoadBalancerRule> {
        self.rules
            .iter()
            .filter(move |r| r.networkid.as_deref() == Some(network_id))
    }

    pub fn firewall_rules_on<'a>(
        &'a self,
        public_ip_id: &'a str,
    ) -> impl Iterator<Item = &'a FirewallRule> {
        self.firewall_rules
            .iter()
            .filter(move |r| r.ipaddressid == public_ip_id)
    }

    /// The worker VMs of a CKS cluster: CKS names them `<cluster>-node-<suffix>` (control
    /// nodes `-control-`, etcd nodes `-etcd-`).
    pub fn cluster_workers(&self, cluster: &KubernetesCluster) -> Vec<&VirtualMachine> {
        cluster
            .virtualmachines
            .iter()
            .filter(|vm| vm.name.contains("-node-"))
            .filter_map(|vm| self.vm(&vm.id))
            .collect()
    }
}

/// What a planner gets for one resource: desired (config), last applied (state), live.
pub struct PlanInput<'a, S> {
    pub address: &'a skyplan_core::model::Address,
    pub desired: Option<&'a S>,
    pub prior: Option<&'a skyplan_core::state::ResourceState>,
    pub live: &'a Inventory,
    /// `--replace ADDR` named this resource.
    pub replace: bool,
    /// `--allow-delete ADDR` named this resource.
    pub allow_delete: bool,
}

/// The cluster a load balancer takes its members from, as far as it is known at plan time.
#[derive(Clone, Copy)]
pub struct ClusterRef<'a> {
    pub address: &'a skyplan_core::model::Address,
    /// Its config (None if the config does not declare it).
    pub spec: Option<&'a crate::spec::CloudstackClusterSpec>,
    /// The live cluster (None until it is created).
    pub live: Option<&'a super::api::KubernetesCluster>,
}

/// What an executor gets: the client and the journal to record each call in.
pub struct ApplyContext<'a> {
    pub client: &'a super::client::CloudstackClient,
    pub journal: &'a skyplan_core::state::journal::Journal,
}

/// What refresh learnt of a cluster target, for the load balancers that take its workers.
#[derive(Debug, Clone)]
pub struct KnownCluster {
    pub spec: Option<CloudstackClusterSpec>,
    pub prior_id: Option<String>,
}

/// Everything one refresh read, which the pipeline hands back to plan, drift, import,
/// kubeconfig and apply.
#[derive(Default)]
pub struct Live {
    pub inventory: Inventory,
    /// The cluster targets, by address.
    pub clusters: BTreeMap<Address, KnownCluster>,
    /// The cluster of each controller-mode load balancer.
    pub views: Views,
    /// What a survey read besides (discovery): the Services of the clusters the CloudStack
    /// CCM may have made rules for. Empty after a refresh.
    pub surveyed: crate::adopt::Surveyed,
}

impl Live {
    pub fn of(refreshed: &Refreshed) -> Result<&Live, ProviderError> {
        refreshed.downcast_ref(PROVIDER)
    }

    /// The cluster at `address` a load balancer takes its members from, as far as refresh
    /// knows it: the target's config and the live cluster (by the state's ID, else by name).
    pub fn cluster_ref<'a>(
        &'a self,
        spec: &CloudstackLoadBalancerSpec,
        address: &'a Address,
    ) -> Option<ClusterRef<'a>> {
        let CsMembers::Cluster(_) = &spec.members else {
            return None;
        };
        let found = self.clusters.get(address);
        let spec = found.and_then(|k| k.spec.as_ref());
        let by_id = found
            .and_then(|k| k.prior_id.as_deref())
            .and_then(|id| self.inventory.cluster_by_id(id));
        // Without a spec, the name the config stage would give it: the address's cloud name.
        let cloud_name = address.cloud_name();
        let name = spec.map_or(cloud_name.as_str(), |s| s.name.as_str());
        Some(ClusterRef {
            address,
            spec,
            live: by_id.or_else(|| self.inventory.cluster_by_name(name)),
        })
    }

    /// Workers the CKS cluster of a controller-mode load balancer gains (negative: loses) in
    /// this apply, which runs the cluster first: its config's count against the live size as
    /// refresh read it. 0 with autoscaling (the autoscaler owns the count), for a cluster not
    /// created yet or one this config does not manage.
    pub fn scaled_workers(&self, spec: &CloudstackLoadBalancerSpec) -> i64 {
        let Some(binding) = &spec.binding else {
            return 0;
        };
        let cluster = self.cluster_ref(spec, &binding.cluster);
        match cluster.and_then(|c| c.spec.zip(c.live)) {
            Some((wanted, live)) if wanted.autoscaling.is_none() => {
                i64::from(wanted.workers) - i64::from(live.size)
            }
            _ => 0,
        }
    }
}
