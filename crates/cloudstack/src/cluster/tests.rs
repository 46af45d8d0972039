//! Test helpers shared by the cluster module's tests: a small catalog and a cluster applied
//! from [`spec`], plus the plan tests, one per row of impact.md's CKS table and per constraint.

use std::collections::BTreeMap;

use crate::api::{
    Capabilities, ClusterVm, KubernetesCluster, KubernetesVersion, Network, ServiceOffering,
    SshKeyPair, VirtualMachine, Zone,
};
use crate::live::{Inventory, PlanInput};
use crate::spec::{CloudstackClusterSpec, ClusterRunState};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::ResourceChange;
use skyplan_core::provider::ProviderError;
use skyplan_core::state::ResourceState;

mod plan;
mod props;

pub fn offering(name: &str, cpu: u32, memory: u32) -> ServiceOffering {
    ServiceOffering {
        id: format!(
            "o-{}",
            name.split(' ').next().unwrap_or(name).to_lowercase()
        ),
        name: name.into(),
        cpunumber: cpu,
        cpuspeed: 2000,
        memory,
        iscustomized: false,
    }
}

fn version(semantic: &str) -> KubernetesVersion {
    KubernetesVersion {
        id: format!("v{}", semantic.replace('.', "")),
        name: format!("v{semantic}-calico-x86_64"),
        semanticversion: semantic.into(),
        state: "Enabled".into(),
        isostate: "Ready".into(),
        zoneid: Some("z1".into()),
        mincpunumber: 2,
        minmemory: 2048,
        supportsha: true,
        supportsautoscaling: true,
    }
}

/// zone1; Small (2/2048), Medium (4/4096), Large (8/8192), Tiny (1/1024), Custom offerings;
/// versions 1.14.0, 1.28.5, 1.29.3, 1.29.5, 1.30.1, 1.31.0, 2.0.0 and a disabled 1.30.9;
/// network k8s-net; keypair ops; server 4.22; maximum cluster size 10; the cluster `lab`
/// (1 control + 3 workers, Medium, 1.29.3, Running on KVM).
pub fn inventory() -> Inventory {
    let mut custom = offering("Custom", 4, 4096);
    custom.iscustomized = true;
    let mut disabled = version("1.30.9");
    disabled.state = "Disabled".into();
    let mut inventory = Inventory {
        capabilities: Some(Capabilities {
            cloudstackversion: "4.22.0.0".into(),
            kubernetesserviceenabled: true,
        }),
        max_cluster_size: 10,
        zones: vec![Zone {
            id: "z1".into(),
            name: "zone1".into(),
            networktype: "Advanced".into(),
            allocationstate: "Enabled".into(),
        }],
        offerings: vec![
            offering("Small Instance", 2, 2048),
            offering("Medium Instance", 4, 4096),
            offering("Large Instance", 8, 8192),
            offering("Tiny Instance", 1, 1024),
            custom,
        ],
        versions: [
            "1.14.0", "1.28.5", "1.29.3", "1.29.5", "1.30.1", "1.31.0", "2.0.0",
        ]
        .into_iter()
        .map(version)
        .chain([disabled])
        .collect(),
        networks: vec![Network {
            id: "n1".into(),
            name: "k8s-net".into(),
            zoneid: "z1".into(),
            kind: "Isolated".into(),
            state: "Implemented".into(),
            vpcid: None,
            service: vec![],
        }],
        keypairs: vec![SshKeyPair {
            name: "ops".into(),
            fingerprint: String::new(),
        }],
        ..Inventory::default()
    };
    let live = live_cluster(&spec(), &inventory);
    inventory.vms = vms(&live, "KVM");
    inventory.clusters = vec![live];
    inventory
}

/// The spec the inventory's cluster `lab` was applied from.
pub fn spec() -> CloudstackClusterSpec {
    CloudstackClusterSpec {
        name: "lab".into(),
        description: None,
        zone: "zone1".into(),
        kubernetes_version: "1.29.3".into(),
        control_nodes: 1,
        etcd_nodes: 0,
        workers: 3,
        service_offering: "Medium Instance".into(),
        node_offerings: BTreeMap::new(),
        network: None,
        keypair: None,
        autoscaling: None,
        state: ClusterRunState::Running,
    }
}

/// A live cluster as CloudStack shows one created from `spec` (names resolved in `inventory`).
pub fn live_cluster(spec: &CloudstackClusterSpec, inventory: &Inventory) -> KubernetesCluster {
    let offering = inventory.offering(&spec.service_offering).unwrap();
    let version = inventory.version(&spec.kubernetes_version, None).unwrap();
    let vm = |role: &str, i: u32| ClusterVm {
        id: format!("vm-{role}-{i}"),
        name: format!("{}-{role}-{i}", spec.name),
        state: "Running".into(),
    };
    let virtualmachines = (0..spec.control_nodes)
        .map(|i| vm("control", i))
        .chain((0..spec.workers).map(|i| vm("node", i)))
        .collect();
    KubernetesCluster {
        id: "c1".into(),
        name: spec.name.clone(),
        description: spec.description.clone(),
        zoneid: "z1".into(),
        zonename: "zone1".into(),
        kubernetesversionid: version.id.clone(),
        kubernetesversionname: version.name.clone(),
        serviceofferingid: offering.id.clone(),
        serviceofferingname: offering.name.clone(),
        workerofferingid: None,
        controlofferingid: None,
        etcdofferingid: None,
        networkid: Some(
            spec.network
                .as_deref()
                .and_then(|n| inventory.network(n))
                .map_or("n-auto".into(), |n| n.id.clone()),
        ),
        associatednetworkname: Some(spec.network.clone().unwrap_or("lab-network".into())),
        keypair: spec.keypair.clone(),
        size: spec.workers,
        controlnodes: spec.control_nodes,
        etcdnodes: spec.etcd_nodes,
        state: match spec.state {
            ClusterRunState::Running => "Running".into(),
            ClusterRunState::Stopped => "Stopped".into(),
        },
        autoscalingenabled: spec.autoscaling.is_some(),
        minsize: spec.autoscaling.map_or(0, |a| a.min),
        maxsize: spec.autoscaling.map_or(0, |a| a.max),
        virtualmachines,
        tags: vec![],
    }
}

/// The VMs of a cluster, all on one hypervisor.
pub fn vms(cluster: &KubernetesCluster, hypervisor: &str) -> Vec<VirtualMachine> {
    cluster
        .virtualmachines
        .iter()
        .map(|vm| VirtualMachine {
            id: vm.id.clone(),
            name: vm.name.clone(),
            displayname: vm.name.clone(),
            state: vm.state.clone(),
            zoneid: cluster.zoneid.clone(),
            serviceofferingid: cluster.serviceofferingid.clone(),
            serviceofferingname: cluster.serviceofferingname.clone(),
            hypervisor: hypervisor.into(),
            nic: vec![],
            hostname: None,
            publicip: None,
        })
        .collect()
}

pub fn address() -> Address {
    Address::new(ResourceKind::Cluster, "lab")
}

pub fn state_entry(spec: &CloudstackClusterSpec) -> ResourceState {
    ResourceState {
        provider: "cloudstack".into(),
        id: "c1".into(),
        ids: serde_json::json!({}),
        attributes: serde_json::to_value(spec).unwrap(),
        depends_on: vec![],
    }
}

/// Plans `desired` against `inventory`, with `prior` applied before.
pub fn plan_with(
    inventory: &Inventory,
    desired: Option<&CloudstackClusterSpec>,
    prior: Option<&CloudstackClusterSpec>,
    replace: bool,
    allow_delete: bool,
) -> Result<ResourceChange, ProviderError> {
    let address = address();
    let prior = prior.map(state_entry);
    super::plan(&PlanInput {
        address: &address,
        desired,
        prior: prior.as_ref(),
        live: inventory,
        replace,
        allow_delete,
    })
}
