//! CloudStack Kubernetes Service clusters (research §3): create, scale, upgrade, start, stop,
//! delete as async jobs whose validations fail the job (errorcode 530), list, and the
//! kubeconfig. The states and transitions are those of `KubernetesCluster.State`.

pub mod create;
pub mod lifecycle;
pub mod scale;
pub mod upgrade;

use rand::Rng;
use serde_json::{json, Value};

use super::{matches_keyword, tags_of, zone_name, Reply};
use crate::cloudstack::api::{cs_time, list as page, ApiError, ApiResult};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{Cluster, Vm, World};

/// The job's `cmd`: the command's Java class.
pub fn cmd(class: &str) -> &'static str {
    match class {
        "create" => {
            "org.apache.cloudstack.api.command.user.kubernetes.cluster.CreateKubernetesClusterCmd"
        }
        "scale" => {
            "org.apache.cloudstack.api.command.user.kubernetes.cluster.ScaleKubernetesClusterCmd"
        }
        "upgrade" => {
            "org.apache.cloudstack.api.command.user.kubernetes.cluster.UpgradeKubernetesClusterCmd"
        }
        "start" => {
            "org.apache.cloudstack.api.command.user.kubernetes.cluster.StartKubernetesClusterCmd"
        }
        "stop" => {
            "org.apache.cloudstack.api.command.user.kubernetes.cluster.StopKubernetesClusterCmd"
        }
        _ => "org.apache.cloudstack.api.command.user.kubernetes.cluster.DeleteKubernetesClusterCmd",
    }
}

pub const INSTANCE_TYPE: Option<&str> = Some("KubernetesCluster");

/// The node roles, as VM names and `nodeofferings[i].node` spell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Control,
    Etcd,
    Worker,
}

impl Role {
    pub fn parse(text: &str) -> Option<Role> {
        match text.to_lowercase().as_str() {
            "control" => Some(Role::Control),
            "etcd" => Some(Role::Etcd),
            "worker" => Some(Role::Worker),
            _ => None,
        }
    }

    /// The part of the VM name: `<cluster>-control-…`, `-etcd-`, `-node-`.
    fn vm_infix(self) -> &'static str {
        match self {
            Role::Control => "control",
            Role::Etcd => "etcd",
            Role::Worker => "node",
        }
    }
}

/// `MAJOR.MINOR.PATCH` as numbers; a missing part is 0.
pub fn semver(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

pub fn set_state(world: &mut World, id: &str, state: &str) {
    if let Some(cluster) = world.cluster_mut(id) {
        cluster.state = state.into();
    }
}

/// Sets the state of every VM of the cluster.
pub fn set_vm_states(world: &mut World, id: &str, state: &str) {
    let ids: Vec<String> = match world.cluster(id) {
        Some(cluster) => cluster.vm_ids().cloned().collect(),
        None => return,
    };
    for vm in world.vms.iter_mut().filter(|vm| ids.contains(&vm.id)) {
        vm.state = state.into();
    }
}

/// Adds one node VM to the cluster's network and returns its id.
pub fn add_node(world: &mut World, cx: &Ctx, cluster_id: &str, role: Role, state: &str) -> String {
    let cluster = world.cluster(cluster_id).expect("the caller found it");
    let offering = match role {
        Role::Control => cluster.controlofferingid.clone(),
        Role::Etcd => cluster
            .etcdofferingid
            .clone()
            .unwrap_or(cluster.serviceofferingid.clone()),
        Role::Worker => cluster.workerofferingid.clone(),
    };
    let suffix: u32 = rand::rng().random_range(0..0x100_0000);
    let name = format!("{}-{}-{suffix:06x}", cluster.name, role.vm_infix());
    let (network, zone) = (cluster.networkid.clone(), cluster.zoneid.clone());
    let ipaddress = free_address(world, &network);
    let id = super::new_id();
    world.vms.push(Vm {
        id: id.clone(),
        name,
        state: state.into(),
        zoneid: zone,
        serviceofferingid: offering,
        networkid: network,
        nic_id: super::new_id(),
        ipaddress,
        hypervisor: cx.hypervisor.clone(),
        created: cx.now,
    });
    let cluster = world.cluster_mut(cluster_id).expect("found above");
    match role {
        Role::Control => cluster.control_vm_ids.push(id.clone()),
        Role::Etcd => cluster.etcd_vm_ids.push(id.clone()),
        Role::Worker => cluster.worker_vm_ids.push(id.clone()),
    }
    id
}

/// The lowest unused host address of the network's /24, from .20 up.
fn free_address(world: &World, network_id: &str) -> String {
    let prefix = world
        .network(network_id)
        .map(|n| {
            n.cidr
                .rsplit_once('.')
                .map_or("10.0.0", |(p, _)| p)
                .to_owned()
        })
        .unwrap_or_else(|| "10.0.0".into());
    let used: std::collections::HashSet<&str> = world
        .vms
        .iter()
        .filter(|vm| vm.networkid == network_id)
        .map(|vm| vm.ipaddress.as_str())
        .collect();
    (20..255)
        .map(|host| format!("{prefix}.{host}"))
        .find(|address| !used.contains(address.as_str()))
        .unwrap_or_else(|| format!("{prefix}.255"))
}

/// The cluster's API address: its network's source-NAT address.
fn api_address(world: &World, cluster: &Cluster) -> Option<(String, String)> {
    world
        .public_ips
        .iter()
        .find(|ip| ip.issourcenat && ip.associatednetworkid.as_deref() == Some(&cluster.networkid))
        .map(|ip| (ip.id.clone(), ip.ipaddress.clone()))
}

pub fn render(world: &World, c: &Cluster) -> Value {
    let offering_name = |id: &str| world.offering(id).map(|o| o.name.clone());
    let version = world.version(&c.kubernetesversionid);
    let vms: Vec<Value> = c
        .vm_ids()
        .filter_map(|id| world.vm(id))
        .map(|vm| json!({"id": vm.id, "name": vm.name, "displayname": vm.name, "state": vm.state}))
        .collect();
    let mut body = json!({
        "id": c.id, "name": c.name, "description": c.description.clone().unwrap_or_default(),
        "zoneid": c.zoneid, "zonename": zone_name(world, &c.zoneid),
        "kubernetesversionid": c.kubernetesversionid,
        "kubernetesversionname": version.map(|v| v.name.clone()),
        "serviceofferingid": c.serviceofferingid,
        "serviceofferingname": offering_name(&c.serviceofferingid),
        "workerofferingid": c.workerofferingid,
        "workerofferingname": offering_name(&c.workerofferingid),
        "controlofferingid": c.controlofferingid,
        "controlofferingname": offering_name(&c.controlofferingid),
        "networkid": c.networkid,
        "associatednetworkname": world.network(&c.networkid).map(|n| n.name.clone()),
        "size": c.size, "controlnodes": c.controlnodes, "masternodes": c.controlnodes,
        "etcdnodes": c.etcdnodes, "state": c.state, "autoscalingenabled": c.autoscalingenabled,
        "clustertype": "CloudManaged", "virtualmachines": vms,
        "created": cs_time(c.created), "tags": tags_of(world, &c.id),
    });
    if let Some(etcd) = &c.etcdofferingid {
        body["etcdofferingid"] = etcd.clone().into();
    }
    if let Some(keypair) = &c.keypair {
        body["keypair"] = keypair.clone().into();
    }
    if let (Some(min), Some(max)) = (c.minsize, c.maxsize) {
        body["minsize"] = min.into();
        body["maxsize"] = max.into();
    }
    if let Some((id, address)) = api_address(world, c) {
        body["ipaddressid"] = id.into();
        body["endpoint"] = format!("https://{address}:6443/").into();
        body["ipaddress"] = address.into();
    }
    body
}

pub fn list(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let name = p.text("name");
    let state = p.text("state");
    if let Some(kind) = p.text("clustertype") {
        if !["CloudManaged", "ExternalManaged"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(kind))
        {
            return Err(ApiError::param(format!(
                "Unable to resolve cluster type {kind} to a supported value (CloudManaged, \
                 ExternalManaged)"
            )));
        }
    }
    let external_only = p
        .text("clustertype")
        .is_some_and(|k| k.eq_ignore_ascii_case("ExternalManaged"));
    let items = world
        .clusters
        .iter()
        .filter(|c| id.is_none_or(|id| c.id == id))
        .filter(|c| name.is_none_or(|n| c.name == n))
        .filter(|c| state.is_none_or(|s| c.state.eq_ignore_ascii_case(s)))
        // Every cluster here is CloudManaged.
        .filter(|_| !external_only)
        .filter(|c| matches_keyword(p.text("keyword"), &[Some(&c.name)]))
        .map(|c| render(world, c))
        .collect();
    Reply::read(page(p, "kubernetescluster", items, cx.page_size)?)
}

/// getKubernetesClusterConfig: the kubeconfig CKS stored for the cluster. Its server is the
/// cluster's simulated API (plain HTTP on loopback) once the cluster has had one; before, the
/// address CKS would give it (its network's source-NAT address on 6443), where nothing
/// answers.
pub fn config(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.cluster(id).is_some())?;
    let cluster = world.cluster(&id).expect("checked");
    let server = match cx.cluster_apis.get(&id) {
        Some(url) => format!("{url}\n"),
        None => {
            let address =
                api_address(world, cluster).map_or_else(|| "127.0.0.1".into(), |(_, a)| a);
            format!("https://{address}:6443\n    insecure-skip-tls-verify: true\n")
        }
    };
    let name = &cluster.name;
    let configdata = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    \
         server: {server}contexts:\n\
         - name: kubernetes-admin@{name}\n  context:\n    cluster: {name}\n    \
         user: kubernetes-admin\ncurrent-context: kubernetes-admin@{name}\nusers:\n\
         - name: kubernetes-admin\n  user:\n    token: sim-{id}\n"
    );
    Reply::read(json!({"clusterconfig": {"id": id, "name": name, "configdata": configdata}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(semver("1.29.10") > semver("1.29.3"));
        assert_eq!(semver("1.30"), (1, 30, 0));
    }
}
