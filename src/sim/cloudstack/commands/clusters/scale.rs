//! scaleKubernetesCluster (research §3.2): the validations in the server's order, each a failed
//! job; then the worker's execution order — an upscale changes offerings first and adds nodes
//! after, a downscale removes nodes first, so a refused offering change after a downscale
//! leaves the nodes removed and the cluster in Alert, as the real server does.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::create::{node_offerings, MIN_CPU, MIN_RAM};
use super::{add_node, cmd, render, set_state, Role, INSTANCE_TYPE};
use crate::sim::cloudstack::api::{ApiError, ApiResult};
use crate::sim::cloudstack::commands::Reply;
use crate::sim::cloudstack::jobs::{Action, Start};
use crate::sim::cloudstack::params::Params;
use crate::sim::cloudstack::state::Ctx;
use crate::sim::cloudstack::world::{Cluster, World};

/// Hypervisors on which CKS scales the offering of running VMs.
const LIVE_SCALING_HYPERVISORS: [&str; 3] = ["XenServer", "VMware", "Simulator"];
const SCALABLE_STATES: [&str; 3] = ["Created", "Running", "Stopped"];
/// `versionSupportsAutoscaling` compares version strings lexicographically.
const AUTOSCALING_MIN_VERSION: &str = "1.15.0";

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
    fn requested(&self, role: Role) -> Option<&String> {
        self.roles
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, o)| o)
            .or(self.global.as_ref())
    }
}

struct Request {
    plan: Plan,
    autoscaling_given: bool,
    minsize: Option<i64>,
    maxsize: Option<i64>,
    size: Option<i64>,
    nodeids_given: bool,
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
        let request = Request {
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
        validate(world, cx, request)
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

fn fail<T>(text: String) -> ApiResult<T> {
    Err(ApiError::internal(text))
}

fn validate(world: &World, cx: &Ctx, r: Request) -> ApiResult<Plan> {
    let cluster = world.cluster(&r.plan.id).expect("checked");
    let name = &cluster.name;
    let plan = &r.plan;
    if plan.global.is_none()
        && r.size.is_none()
        && !r.nodeids_given
        && !r.autoscaling_given
        && plan.roles.is_empty()
    {
        return fail(format!(
            "Kubernetes cluster {name} cannot be scaled, either service offering or cluster \
             size or nodeids to be removed or autoscaling must be passed"
        ));
    }
    if !SCALABLE_STATES.contains(&cluster.state.as_str()) {
        return fail(format!(
            "Kubernetes cluster {name} is in {} state and can not be scaled",
            cluster.state
        ));
    }
    let max = i64::from(cx.max_cluster_size);
    let control = i64::from(cluster.controlnodes);
    if plan.autoscaling.as_ref().is_some_and(|a| a.enabled) {
        validate_autoscaling(world, cluster, &r, max)?;
    }
    if r.nodeids_given {
        validate_node_removal(cluster, &r)?;
    }
    validate_offerings(world, cluster, plan)?;
    let mut plan = r.plan;
    if let Some(size) = r.size {
        if size != i64::from(cluster.size) {
            if cluster.state == "Stopped" {
                return fail(format!(
                    "Kubernetes cluster : {name} is in {} state",
                    cluster.state
                ));
            }
            if size < 1 {
                return fail(format!(
                    "Kubernetes cluster : {name} cannot be scaled for size, {size}"
                ));
            }
            if size + control > max {
                return fail(max_size_text(max));
            }
        }
        plan.size = Some(size as u32);
    }
    Ok(plan)
}

fn max_size_text(max: i64) -> String {
    format!("Maximum cluster size can not exceed {max}. Please contact your administrator")
}

fn validate_autoscaling(world: &World, cluster: &Cluster, r: &Request, max: i64) -> ApiResult<()> {
    if r.size.is_some() || r.nodeids_given {
        return fail("Autoscaling can not be passed along with nodeids or clustersize".into());
    }
    let version = world
        .version(&cluster.kubernetesversionid)
        .map(|v| v.semanticversion.as_str())
        .unwrap_or("");
    if version < AUTOSCALING_MIN_VERSION {
        return fail(format!(
            "Autoscaling requires Kubernetes Version {AUTOSCALING_MIN_VERSION} or above"
        ));
    }
    let (Some(min), Some(maxsize)) = (r.minsize, r.maxsize) else {
        return fail("Autoscaling requires minsize and maxsize to be passed".into());
    };
    if min < 1 {
        return fail("Minsize must be at least than 1".into());
    }
    if maxsize <= min {
        return fail("Maxsize must be greater than minsize".into());
    }
    if maxsize + i64::from(cluster.controlnodes) > max {
        return fail(max_size_text(max));
    }
    Ok(())
}

fn validate_node_removal(cluster: &Cluster, r: &Request) -> ApiResult<()> {
    let worker_offering = r.plan.roles.iter().any(|(role, _)| *role == Role::Worker);
    if r.size.is_some() || r.plan.global.is_some() || worker_offering {
        return fail("nodeids can not be passed along with clustersize or service offering".into());
    }
    let ours: Vec<&String> = cluster.vm_ids().collect();
    if r.plan.remove.iter().any(|id| !ours.contains(&id)) {
        return fail("Invalid node ids".into());
    }
    if cluster
        .control_vm_ids
        .iter()
        .all(|id| r.plan.remove.contains(id))
    {
        return fail("Can not remove all control nodes from a cluster".into());
    }
    if cluster
        .worker_vm_ids
        .iter()
        .all(|id| r.plan.remove.contains(id))
    {
        return fail("Can not remove all nodes from a cluster".into());
    }
    Ok(())
}

/// The existing offering of a role.
fn current_offering(cluster: &Cluster, role: Role) -> &String {
    match role {
        Role::Control => &cluster.controlofferingid,
        Role::Etcd => cluster
            .etcdofferingid
            .as_ref()
            .unwrap_or(&cluster.serviceofferingid),
        Role::Worker => &cluster.workerofferingid,
    }
}

fn roles_of(cluster: &Cluster) -> Vec<Role> {
    let mut roles = vec![Role::Control];
    if cluster.etcdnodes > 0 {
        roles.push(Role::Etcd);
    }
    roles.push(Role::Worker);
    roles
}

fn validate_offerings(world: &World, cluster: &Cluster, plan: &Plan) -> ApiResult<()> {
    let name = &cluster.name;
    let version = world
        .version(&cluster.kubernetesversionid)
        .expect("a cluster's version");
    for role in [Role::Worker, Role::Control, Role::Etcd] {
        let Some(id) = plan.requested(role) else {
            continue;
        };
        let Some(o) = world.offering(id) else {
            return fail(format!("Failed to find service offering ID: {id}"));
        };
        if o.iscustomized {
            return fail(format!(
                "Custom service offerings are not supported for Kubernetes clusters. \
                 Kubernetes cluster : {name}, service offering : {}",
                o.name
            ));
        }
        if o.cpunumber < MIN_CPU || o.memory < MIN_RAM {
            return fail(format!(
                "Kubernetes cluster : {name} cannot be scaled with service offering : {}, \
                 Kubernetes cluster template(CoreOS) needs minimum {MIN_CPU} vCPUs and \
                 {MIN_RAM} MB RAM",
                o.name
            ));
        }
        if o.cpunumber < version.mincpunumber {
            return fail(format!(
                "Kubernetes cluster : {name} cannot be scaled with service offering : {}, \
                 associated Kubernetes version : {} needs minimum {} vCPUs",
                o.name, version.name, version.mincpunumber
            ));
        }
        if o.memory < version.minmemory {
            return fail(format!(
                "Kubernetes cluster : {name} cannot be scaled with service offering : {}, \
                 associated Kubernetes version : {} needs minimum {} MB RAM",
                o.name, version.name, version.minmemory
            ));
        }
        let existing = world.offering(current_offering(cluster, role));
        let smaller = existing.is_some_and(|e| {
            o.memory < e.memory || o.cpunumber * o.cpuspeed < e.cpunumber * e.cpuspeed
        });
        if cluster.state == "Running" && smaller {
            return fail(format!(
                "Kubernetes cluster cannot be scaled down for service offering. Service \
                 offering : {} offers lesser resources as compared to service offering : {} of \
                 Kubernetes cluster : {name}",
                o.name,
                existing.map(|e| e.name.as_str()).unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// The roles whose offering the worker changes: with no offering requested for a role, the
/// default is the cluster's global offering, so a size-only scale also "changes" a role whose
/// offering differs from the global one (CS issue #11994).
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
        return fail(format!(
            "Scaling Kubernetes cluster : {} failed, scaling Kubernetes cluster with running \
             VMs on hypervisor {} is not supported!",
            cluster.name, vm.hypervisor
        ));
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

#[cfg(test)]
mod tests {
    use super::super::semver;
    use super::*;

    #[test]
    fn autoscaling_compares_versions_as_text_like_the_server() {
        assert!("1.9.0" >= AUTOSCALING_MIN_VERSION);
        assert!("1.14.9" < AUTOSCALING_MIN_VERSION);
        assert!(semver("1.9.0") < semver(AUTOSCALING_MIN_VERSION));
    }
}
