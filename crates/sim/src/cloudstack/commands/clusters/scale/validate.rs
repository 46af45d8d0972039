//! The validations of scaleKubernetesCluster, in the server's order (research §3.2:
//! `validateKubernetesClusterScaleParameters`, `validateServiceOfferingsForNodeTypesScale`,
//! `validateKubernetesClusterScaleSize`); each refusal fails the job with 530.

use super::super::create::{MIN_CPU, MIN_RAM};
use super::super::Role;
use super::{current_offering, Plan};
use crate::cloudstack::api::{ApiError, ApiResult};
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{Cluster, World};

const SCALABLE_STATES: [&str; 3] = ["Created", "Running", "Stopped"];
/// `versionSupportsAutoscaling` compares version strings lexicographically.
const AUTOSCALING_MIN_VERSION: &str = "1.15.0";

/// The request, its ids resolved, before validation.
pub struct Request {
    pub plan: Plan,
    pub autoscaling_given: bool,
    pub minsize: Option<i64>,
    pub maxsize: Option<i64>,
    pub size: Option<i64>,
    pub nodeids_given: bool,
}

fn fail<T>(text: String) -> ApiResult<T> {
    Err(ApiError::internal(text))
}

pub fn validate(world: &World, cx: &Ctx, r: Request) -> ApiResult<Plan> {
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
#[cfg(test)]
mod tests {
    use super::super::super::semver;
    use super::*;

    #[test]
    fn autoscaling_compares_versions_as_text_like_the_server() {
        assert!("1.9.0" >= AUTOSCALING_MIN_VERSION);
        assert!("1.14.9" < AUTOSCALING_MIN_VERSION);
        assert!(semver("1.9.0") < semver(AUTOSCALING_MIN_VERSION));
    }
}
