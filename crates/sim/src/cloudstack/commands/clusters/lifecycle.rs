//! start, stop and delete (research §3.4). Starting a Running (or Starting) cluster and
//! stopping a Stopped (or Stopping) one succeed without doing anything; delete is allowed in
//! Running, Stopped, Alert, Error and Destroying only, and takes the network along only when
//! CKS created it.

use serde_json::{json, Value};

use super::{cmd, render, set_state, set_vm_states, INSTANCE_TYPE};
use crate::cloudstack::api::{ApiError, ApiResult};
use crate::cloudstack::commands::Reply;
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::World;

const DELETABLE: [&str; 5] = ["Running", "Stopped", "Alert", "Error", "Destroying"];

fn job(kind: &str, id: String, action: Action) -> ApiResult<Reply> {
    Ok(Reply::Job(Start {
        cmd: cmd(kind),
        instance_type: INSTANCE_TYPE,
        instance_id: Some(id),
        id: None,
        action,
    }))
}

fn cluster_id(world: &World, p: &Params) -> ApiResult<String> {
    p.id("id", |id| world.cluster(id).is_some())
}

pub fn start(world: &mut World, p: &Params) -> ApiResult<Reply> {
    let id = cluster_id(world, p)?;
    let state = world.cluster(&id).expect("checked").state.clone();
    // Already running: nothing to do. From other states the transition is skipped but the
    // VMs are started all the same (research §3.4).
    if !matches!(state.as_str(), "Running" | "Starting") {
        set_state(world, &id, "Starting");
        set_vm_states(world, &id, "Starting");
    }
    job("start", id.clone(), Action::ClusterStart { id })
}

pub fn finish_start(world: &mut World, _cx: &Ctx, id: &str) -> ApiResult<Value> {
    if world.cluster(id).is_none() {
        return Err(ApiError::internal("The cluster was deleted meanwhile"));
    }
    set_vm_states(world, id, "Running");
    set_state(world, id, "Running");
    Ok(cluster_result(world, id))
}

pub fn stop(world: &mut World, p: &Params) -> ApiResult<Reply> {
    let id = cluster_id(world, p)?;
    let state = world.cluster(&id).expect("checked").state.clone();
    if !matches!(state.as_str(), "Stopped" | "Stopping") {
        set_state(world, &id, "Stopping");
        set_vm_states(world, &id, "Stopping");
    }
    job("stop", id.clone(), Action::ClusterStop { id })
}

pub fn finish_stop(world: &mut World, _cx: &Ctx, id: &str) -> ApiResult<Value> {
    if world.cluster(id).is_none() {
        return Err(ApiError::internal("The cluster was deleted meanwhile"));
    }
    set_vm_states(world, id, "Stopped");
    set_state(world, id, "Stopped");
    Ok(cluster_result(world, id))
}

fn cluster_result(world: &World, id: &str) -> Value {
    let cluster = world.cluster(id).expect("checked by the caller");
    json!({ "kubernetescluster": render(world, cluster) })
}

pub fn delete(world: &mut World, p: &Params) -> ApiResult<Reply> {
    let id = cluster_id(world, p)?;
    let action = match refuse_delete(world, &id) {
        Some(text) => Action::fail(ApiError::internal(text)),
        None => {
            set_state(world, &id, "Destroying");
            Action::ClusterDelete { id: id.clone() }
        }
    };
    job("delete", id, action)
}

fn refuse_delete(world: &World, id: &str) -> Option<String> {
    let cluster = world.cluster(id).expect("checked");
    if !DELETABLE.contains(&cluster.state.as_str()) {
        // `ReflectionToStringBuilderUtils` fields in the server's order (id, name, uuid).
        let text = |s: &str| Value::from(s).to_string();
        return Some(format!(
            "Cannot perform delete operation on cluster KubernetesCluster \
             {{\"id\":{},\"name\":{},\"uuid\":{}}} in state: {}",
            cluster.db_id,
            text(&cluster.name),
            text(&cluster.id),
            cluster.state
        ));
    }
    if cluster.network_cleanup {
        let ours: Vec<&String> = cluster.vm_ids().collect();
        let foreign = world
            .vms
            .iter()
            .any(|vm| vm.networkid == cluster.networkid && !ours.contains(&&vm.id));
        if foreign {
            let network = world.network(&cluster.networkid).map(|n| n.name.clone());
            return Some(format!(
                "Network : {} for Kubernetes cluster : {} has instances using it which are not \
                 part of the Kubernetes cluster",
                network.unwrap_or_default(),
                cluster.name
            ));
        }
    }
    None
}

pub fn finish_delete(world: &mut World, id: &str) -> ApiResult<Value> {
    let Some(cluster) = world.cluster(id).cloned() else {
        return Ok(json!({ "success": true }));
    };
    let vm_ids: Vec<String> = cluster.vm_ids().cloned().collect();
    world.expunge_vms(&vm_ids);
    world.clusters.retain(|c| c.id != id);
    world.tags.retain(|t| t.resourceid != id);
    if cluster.network_cleanup {
        remove_network(world, &cluster.networkid);
    }
    Ok(json!({ "success": true }))
}

/// The network with its rules and addresses, as destroying it does.
fn remove_network(world: &mut World, network_id: &str) {
    let ip_ids: Vec<String> = world
        .public_ips
        .iter()
        .filter(|ip| ip.associatednetworkid.as_deref() == Some(network_id))
        .map(|ip| ip.id.clone())
        .collect();
    let gone: Vec<String> = world
        .lb_rules
        .iter()
        .filter(|r| r.networkid == network_id)
        .map(|r| r.id.clone())
        .chain(
            world
                .firewall_rules
                .iter()
                .filter(|r| ip_ids.contains(&r.ipaddressid))
                .map(|r| r.id.clone()),
        )
        .chain(ip_ids.iter().cloned())
        .collect();
    world.lb_rules.retain(|r| r.networkid != network_id);
    world
        .firewall_rules
        .retain(|r| !ip_ids.contains(&r.ipaddressid));
    for ip in world
        .public_ips
        .iter_mut()
        .filter(|ip| ip_ids.contains(&ip.id))
    {
        ip.state = "Free".into();
        ip.associatednetworkid = None;
        ip.issourcenat = false;
        ip.allocated = None;
    }
    world.tags.retain(|t| !gone.contains(&t.resourceid));
    world.networks.retain(|n| n.id != network_id);
}
