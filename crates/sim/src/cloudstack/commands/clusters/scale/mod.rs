//! scaleKubernetesCluster (research §3.2): the validations in the server's order, each a failed
//! job; then the worker's execution order — an upscale changes offerings first and adds nodes
//! after, a downscale removes nodes first, so a refused offering change after a downscale
//! leaves the nodes removed and the cluster in Alert, as the real server does.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

mod validate;

use super::create::node_offerings;
use super::{add_node, cmd, render, set_state, Role, INSTANCE_TYPE};
use crate::cloudstack::api::{ApiError, ApiResult};
use crate::cloudstack::commands::Reply;
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{Cluster, World};

/// Hypervisors on which CKS scales the offering of running VMs.
const LIVE_SCALING_HYPERVISORS: [&str; 3] = ["XenServer", "VMware", "Simulator"];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Autoscaling {
    pub enabled: bool,
    pub min: Option<u32>,
    pub max: Option<u32>,
}

/// What the job does once the request passed validation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub id: String,
    /// `serviceofferingid`: the new global offering, the default of every role.
    pub global: Option<String>,
    /// `nodeofferings`.
    pub roles: Vec<(Role, String)>,
    pub size: Option<u32>,
    /// `nodeids`: the nodes to remove.
    pub remove: Vec<String>,
    pub autoscaling: Option<Autoscaling>,
    /// The state before the scale started, which it returns to.
    pub prior_state: String,
}

impl Plan {
    /// The offering requested for a role, if any (`nodeofferings` first, then
    /// `serviceofferingid`).
    pub(super) fn requested(&self, role: Role) -> Option<&String> {
        self.roles
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, o)| o)
            .or(self.global.as_ref())
    }
}

pub fn scale(world: &mut World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.cluster(id).is_some())?;
    let global = p.optional_id("serviceofferingid", |o| world.offering(o).is_some())?;
    let size = p.optional_int("size")?;
    let remove = p.list("nodeids").unwrap_or_default();
    for node in &remove {
        if world.vm(node).is_none() {
            return Err(p.invalid("nodeids", node));
        }
    }
    let autoscaling_enabled = p.optional_bool("autoscalingenabled");
    let (minsize, maxsize) = (p.optional_int("minsize")?, p.optional_int("maxsize")?);
    let prior_state = world.cluster(&id).expect("checked").state.clone();
    let roles = node_offerings(world, p);
    let outcome = roles.map_err(ApiError::internal).and_then(|roles| {
        let request = validate::Request {
            plan: Plan {
                id: id.clone(),
                global,
                roles,
                size: None,
                remove: remove.clone(),
                autoscaling: autoscaling_enabled.map(|enabled| Autoscaling {
                    enabled,
                    min: minsize.map(|v| v as u32),
                    max: maxsize.map(|v| v as u32),
                }),
                prior_state: prior_state.clone(),
            },
            autoscaling_given: autoscaling_enabled.is_some(),
            minsize,
            maxsize,
            size,
            nodeids_given: !remove.is_empty(),
        };
        validate::validate(world, cx, request)
    });
    let action = match outcome {
        Err(error) => Action::fail(error),
        Ok(plan) => {
            set_state(world, &id, &scaling_state(world, &plan));
            Action::ClusterScale(plan)
        }
    };
    Ok(Reply::Job(Start {
        cmd: cmd("scale"),
        instance_type: INSTANCE_TYPE,
        instance_id: Some(id),
        id: None,
        action,
    }))
}

/// Running → Scaling; Stopped → ScalingStoppedCluster when an offering changes; Created stays.
fn scaling_state(world: &World, plan: &Plan) -> String {
    let cluster = world.cluster(&plan.id).expect("checked");
    match cluster.state.as_str() {
        "Running" => "Scaling".into(),
        "Stopped" if !offering_changes(cluster, plan).is_empty() => "ScalingStoppedCluster".into(),
        other => other.into(),
    }
}

pub(super) fn current_offering(cluster: &Cluster, role: Role) -> &String {
    match role {
        Role::Control => &cluster.controlofferingid,
        Role::Etcd => cluster
            .etcdofferingid
            .as_ref()
            .unwrap_or(&cluster.serviceofferingid),
        Role::Worker => &cluster.workerofferingid,
    }
}

pub(super) fn roles_of(cluster: &Cluster) -> Vec<Role> {
    let mut roles = vec![Role::Control];
    if cluster.etcdnodes > 0 {
        roles.push(Role::Etcd);
    }
    roles.push(Role::Worker);
    roles
}

fn offering_changes(cluster: &Cluster, plan: &Plan) -> Vec<(Role, String)> {
    if plan.autoscaling.is_some() && plan.global.is_none() && plan.roles.is_empty() {
        return Vec::new();
    }
    roles_of(cluster)
        .into_iter()
        .filter_map(|role| {
            let target = plan.requested(role).unwrap_or(&cluster.serviceofferingid);
            (target != current_offering(cluster, role)).then(|| (role, target.clone()))
        })
        .collect()
}

pub fn finish(world: &mut World, cx: &Ctx, plan: Plan) -> ApiResult<Value> {
    let Some(cluster) = world.cluster(&plan.id).cloned() else {
        return Err(ApiError::internal("The cluster was deleted meanwhile"));
    };
    let changes = offering_changes(&cluster, &plan);
    // Removing named nodes sets the worker count to what is left (and never lowers the control
    // count, research §3.2).
    let remaining_workers = cluster
        .worker_vm_ids
        .iter()
        .filter(|id| !plan.remove.contains(id))
        .count() as u32;
    let target_size = match plan.size {
        Some(size) => size,
        None if !plan.remove.is_empty() => remaining_workers,
        None => cluster.size,
    };
    let downscale = target_size < cluster.size || !plan.remove.is_empty();
    if let Some(auto) = &plan.autoscaling {
        let c = world.cluster_mut(&plan.id).expect("found above");
        c.autoscalingenabled = auto.enabled;
        (c.minsize, c.maxsize) = if auto.enabled {
            (auto.min, auto.max)
        } else {
            (None, None)
        };
    }
    if downscale {
        remove_nodes(world, &cluster, &plan, target_size);
    }
    if !changes.is_empty() {
        if let Err(error) = change_offerings(world, &cluster, &plan, &changes) {
            // After nodes were removed the failure is OperationFailed: Alert. Otherwise the
            // offering was checked before any transition and the state stays.
            let state = if downscale {
                "Alert"
            } else {
                plan.prior_state.as_str()
            };
            set_state(world, &plan.id, state);
            return Err(error);
        }
    }
    if target_size > cluster.size && cluster.state != "Created" {
        let vm_state = if plan.prior_state == "Stopped" {
            "Stopped"
        } else {
            "Running"
        };
        for _ in cluster.size..target_size {
            add_node(world, cx, &plan.id, Role::Worker, vm_state);
        }
    }
    let c = world.cluster_mut(&plan.id).expect("found above");
    c.size = target_size;
    // Back to Running or Stopped; a Created cluster's own create job moves it on.
    if matches!(c.state.as_str(), "Scaling" | "ScalingStoppedCluster") {
        c.state = plan.prior_state.clone();
    }
    let c = world.cluster(&plan.id).expect("found above");
    Ok(json!({ "kubernetescluster": render(world, c) }))
}

/// Drains, destroys and expunges nodes: the ones named, or the newest workers.
fn remove_nodes(world: &mut World, cluster: &Cluster, plan: &Plan, target_size: u32) {
    let gone: Vec<String> = if plan.remove.is_empty() {
        let keep = target_size as usize;
        cluster.worker_vm_ids.iter().skip(keep).cloned().collect()
    } else {
        plan.remove.clone()
    };
    world.expunge_vms(&gone);
    let c = world.cluster_mut(&plan.id).expect("checked by the caller");
    c.worker_vm_ids.retain(|id| !gone.contains(id));
    c.control_vm_ids.retain(|id| !gone.contains(id));
    c.etcd_vm_ids.retain(|id| !gone.contains(id));
    c.size = target_size;
}

fn change_offerings(
    world: &mut World,
    cluster: &Cluster,
    plan: &Plan,
    changes: &[(Role, String)],
) -> ApiResult<()> {
    let vm_ids: Vec<String> = world
        .cluster(&plan.id)
        .map(|c| c.vm_ids().cloned().collect())
        .unwrap_or_default();
    let blocked = world.vms.iter().find(|vm| {
        vm_ids.contains(&vm.id)
            && vm.state == "Running"
            && !LIVE_SCALING_HYPERVISORS
                .iter()
                .any(|h| h.eq_ignore_ascii_case(&vm.hypervisor))
    });
    if let Some(vm) = blocked {
        return Err(ApiError::internal(format!(
            "Scaling Kubernetes cluster : {} failed, scaling Kubernetes cluster with running \
             VMs on hypervisor {} is not supported!",
            cluster.name, vm.hypervisor
        )));
    }
    let c = world.cluster_mut(&plan.id).expect("checked by the caller");
    let mut moved: Vec<(String, String)> = Vec::new();
    for (role, offering) in changes {
        let ids = match role {
            Role::Control => {
                c.controlofferingid = offering.clone();
                &c.control_vm_ids
            }
            Role::Etcd => {
                c.etcdofferingid = Some(offering.clone());
                &c.etcd_vm_ids
            }
            Role::Worker => {
                c.workerofferingid = offering.clone();
                &c.worker_vm_ids
            }
        };
        moved.extend(ids.iter().map(|id| (id.clone(), offering.clone())));
    }
    if let Some(global) = &plan.global {
        c.serviceofferingid = global.clone();
    }
    for (vm_id, offering) in moved {
        if let Some(vm) = world.vms.iter_mut().find(|vm| vm.id == vm_id) {
            vm.serviceofferingid = offering;
        }
    }
    Ok(())
}
