//! Applying a controller-mode change: write the Service, then wait (with progress and a
//! timeout, `SKYPLAN_CCM_WAIT_S`, default 300 s) until the cloud shows what the plan predicted
//! — the load balancer found by the Service's uuid annotation, running, with the predicted
//! pools, listeners, monitors and members — and compare which pools kept their UUID with what
//! the plan said.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::binding::ClusterView;
use super::super::client::CloudscaleClient;
use super::super::desired::desired_objects;
use super::super::diff::{diff_classified, DiffInput};
use super::super::objects::LbObjects;
use super::super::refresh::refresh;
use super::super::servers::read_servers;
use super::annotations::{CCM_OWNED, PREFIX, UUID};
use super::predict::predicted_spec;
use crate::spec::CloudscaleLoadBalancerSpec;
use skyplan_core::model::Address;
use skyplan_kubernetes::connection::ClusterConnection;
use skyplan_kubernetes::service_write::ManagedAnnotations;

/// What skyplan manages of a Service in cloudscale controller mode.
pub const MANAGED: ManagedAnnotations = ManagedAnnotations {
    prefix: PREFIX,
    controller_owned: &CCM_OWNED,
};

/// What the wait saw when the cloud matched the prediction.
pub struct Converged {
    pub service_uid: String,
    pub lb: LbObjects,
}

/// Polls the Service and the cloud until the CCM's load balancer matches the prediction made
/// from the Service as written (its node ports are now known).
pub async fn wait_for_controller(
    address: &Address,
    client: &Arc<CloudscaleClient>,
    connection: &Arc<ClusterConnection>,
    spec: &CloudscaleLoadBalancerSpec,
) -> Result<Converged, String> {
    let started = Instant::now();
    let limit = skyplan_kubernetes::controller_wait_limit();
    let servers = read_servers(client).await.map_err(|e| e.to_string())?;
    let mut last = String::from("the Service has no uuid annotation yet");
    let mut reported = Instant::now();
    loop {
        if started.elapsed() > limit {
            return Err(format!(
                "the CCM did not converge within {} s (SKYPLAN_CCM_WAIT_S): {last}",
                limit.as_secs()
            ));
        }
        if reported.elapsed() > Duration::from_secs(5) {
            tracing::info!(%address, "waiting for the cloud controller: {last}");
            reported = Instant::now();
        }
        match check_once(address, client, connection, spec, &servers).await? {
            Ok(converged) => return Ok(converged),
            Err(why) => last = why,
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `Ok(Ok(..))` converged; `Ok(Err(why))` not yet; `Err` a failure worth stopping for.
async fn check_once(
    address: &Address,
    client: &Arc<CloudscaleClient>,
    connection: &ClusterConnection,
    spec: &CloudscaleLoadBalancerSpec,
    servers: &[super::super::servers::ServerObject],
) -> Result<Result<Converged, String>, String> {
    let binding = spec.binding.as_ref().expect("bound");
    // Fresh every time: node policies applied earlier in this run, or nodes joining while
    // the controller works, are what it builds the members from.
    let nodes = connection.fresh_nodes().await.map_err(|e| e.to_string())?;
    let service = connection
        .service(&binding.namespace, &binding.name)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("Service {} disappeared", binding.service_ref()))?;
    let Some(uuid) = service
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(UUID))
        .cloned()
    else {
        return Ok(Err("the Service has no uuid annotation yet".into()));
    };
    let snapshot = refresh(client, |lb| lb.uuid.as_deref() == Some(uuid.as_str()))
        .await
        .map_err(|e| e.to_string())?;
    let Some(lb) = snapshot.load_balancer(&uuid) else {
        return Ok(Err(format!("load balancer {uuid} not found yet")));
    };
    if lb.lb.status.as_deref() != Some("running") {
        return Ok(Err(format!("load balancer {uuid} is not running yet")));
    }
    let view = ClusterView {
        nodes,
        service: Some(service.clone()),
        node_set_changes: false,
        node_ports_held: Default::default(),
    };
    let predicted = predicted_spec(spec, &view, servers)?;
    let desired =
        desired_objects(address, &predicted, &snapshot.subnets).map_err(|e| e.to_string())?;
    if let Some(difference) = shape_difference(address, &predicted, &desired, lb) {
        return Ok(Err(difference));
    }
    Ok(Ok(Converged {
        service_uid: service.metadata.uid.clone().unwrap_or_default(),
        lb: lb.clone(),
    }))
}

/// The first way the live load balancer differs from the predicted objects: converged means
/// the same diff a plan runs finds nothing left for the controller to do (names, keys and
/// in-place fields alike: a listener's CIDRs count as much as its pool).
pub fn shape_difference(
    address: &Address,
    spec: &CloudscaleLoadBalancerSpec,
    desired: &LbObjects,
    live: &LbObjects,
) -> Option<String> {
    let input = DiffInput {
        address,
        desired: Some((spec, desired)),
        prior: None,
        live: Some(live),
        replace: false,
        allow_delete: false,
        tag: false,
    };
    let (_, _, ops) = diff_classified(&input);
    let pending: Vec<String> = ops.iter().map(|op| op.to_string()).collect();
    match pending.is_empty() {
        true => None,
        false => Some(format!("still to do: {}", pending.join(", "))),
    }
}

/// Pools the plan said the CCM would recreate (`controller: delete pool X` and create it
/// again) against what happened to their UUIDs; every difference described.
pub fn compare_pool_uuids(
    before: Option<&LbObjects>,
    after: &LbObjects,
    actions: &[String],
) -> Vec<String> {
    let Some(before) = before else { return vec![] };
    let uuids = |l: &LbObjects| -> BTreeMap<String, Option<String>> {
        l.pools
            .iter()
            .map(|(n, s)| (n.clone(), s.pool.uuid.clone()))
            .collect()
    };
    let (old, new) = (uuids(before), uuids(after));
    let mut differences = Vec::new();
    for (name, old_uuid) in &old {
        let Some(new_uuid) = new.get(name) else {
            continue;
        };
        let predicted_recreated = actions.iter().any(|a| a == &format!("delete pool {name}"));
        let recreated = old_uuid != new_uuid;
        if predicted_recreated && !recreated {
            differences.push(format!(
                "pool {name} was predicted to be recreated but kept its UUID"
            ));
        }
        if recreated && !predicted_recreated {
            differences.push(format!(
                "pool {name} was recreated by the controller (the plan predicted it kept)"
            ));
        }
    }
    differences
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_uuids_are_compared_with_the_prediction() {
        use crate::objects::{LbObject, PoolObject, PoolSet};
        let lb = |uuid: &str| LbObjects {
            lb: LbObject {
                uuid: Some("lb".into()),
                name: "shop".into(),
                flavor: "lb-standard".into(),
                zone: "lpg1".into(),
                vip_addresses: vec![],
                tags: Default::default(),
                status: Some("running".into()),
            },
            pools: [(
                "tcp/http".to_string(),
                PoolSet {
                    pool: PoolObject {
                        uuid: Some(uuid.into()),
                        name: "tcp/http".into(),
                        algorithm: "round_robin".into(),
                        protocol: "tcp".into(),
                        tags: Default::default(),
                    },
                    members: Default::default(),
                    monitor: None,
                    listener: None,
                },
            )]
            .into(),
            floating_ips: Default::default(),
        };
        let recreate = vec!["delete pool tcp/http".to_string()];
        assert!(compare_pool_uuids(Some(&lb("a")), &lb("b"), &recreate).is_empty());
        assert!(compare_pool_uuids(Some(&lb("a")), &lb("a"), &[]).is_empty());
        assert_eq!(
            compare_pool_uuids(Some(&lb("a")), &lb("a"), &recreate).len(),
            1
        );
        let unexpected = compare_pool_uuids(Some(&lb("a")), &lb("b"), &[]);
        assert!(
            unexpected[0].contains("predicted it kept"),
            "{unexpected:?}"
        );
    }
}
