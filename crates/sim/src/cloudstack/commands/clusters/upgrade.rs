//! upgradeKubernetesCluster (research §3.3): the cluster must be Running, the target version
//! Enabled, its minimums met by the cluster's global offering; no downgrade, at most the next
//! minor (an equal version is accepted). Upgrading while the job runs, then Running.

use serde_json::{json, Value};

use super::{cmd, render, semver, set_state, INSTANCE_TYPE};
use crate::cloudstack::api::{ApiError, ApiResult};
use crate::cloudstack::commands::Reply;
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::World;

pub fn upgrade(world: &mut World, _cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.cluster(id).is_some())?;
    let version_id = p.id("kubernetesversionid", |id| world.version(id).is_some())?;
    let action = match refusal(world, &id, &version_id) {
        Some(text) => Action::fail(ApiError::internal(text)),
        None => {
            set_state(world, &id, "Upgrading");
            Action::ClusterUpgrade {
                id: id.clone(),
                version_id,
            }
        }
    };
    Ok(Reply::Job(Start {
        cmd: cmd("upgrade"),
        instance_type: INSTANCE_TYPE,
        instance_id: Some(id),
        id: None,
        action,
    }))
}

fn refusal(world: &World, id: &str, version_id: &str) -> Option<String> {
    let cluster = world.cluster(id).expect("checked");
    let target = world.version(version_id).expect("checked");
    if cluster.state != "Running" {
        return Some(format!(
            "Kubernetes cluster : {} is not in running state",
            cluster.name
        ));
    }
    if target.state != "Enabled" {
        return Some(format!(
            "Kubernetes version ID: {} for upgrade is in {} state",
            target.id, target.state
        ));
    }
    if let Some(offering) = world.offering(&cluster.serviceofferingid) {
        if offering.cpunumber < target.mincpunumber {
            return Some(format!(
                "Kubernetes cluster : {} cannot be upgraded with Kubernetes version : {} which \
                 needs minimum {} vCPUs while associated service offering : {} offers only {} \
                 vCPUs",
                cluster.name, target.name, target.mincpunumber, offering.name, offering.cpunumber
            ));
        }
        if offering.memory < target.minmemory {
            return Some(format!(
                "Kubernetes cluster : {} cannot be upgraded with Kubernetes version : {} which \
                 needs minimum {} MB RAM while associated service offering : {} offers only {} \
                 MB RAM",
                cluster.name, target.name, target.minmemory, offering.name, offering.memory
            ));
        }
    }
    let current = world
        .version(&cluster.kubernetesversionid)
        .map(|v| v.semanticversion.clone())
        .unwrap_or_default();
    let (from, to) = (semver(&current), semver(&target.semanticversion));
    if to < from {
        return Some(format!(
            "Kubernetes clusters can not be downgraded, current version: {current}, upgrade \
             version: {}",
            target.semanticversion
        ));
    }
    if to.0 != from.0 || to.1 > from.1 + 1 {
        return Some(format!(
            "Kubernetes clusters can be upgraded between next minor or patch version releases, \
             current version: {current}, upgrade version: {}",
            target.semanticversion
        ));
    }
    None
}

pub fn finish(world: &mut World, _cx: &Ctx, id: &str, version_id: &str) -> ApiResult<Value> {
    let cluster = world.cluster_mut(id);
    let cluster = cluster.ok_or_else(|| ApiError::internal("The cluster was deleted meanwhile"))?;
    cluster.kubernetesversionid = version_id.into();
    cluster.state = "Running".into();
    let cluster = world.cluster(id).expect("found above");
    Ok(json!({ "kubernetescluster": render(world, cluster) }))
}
