//! Apply holds a CKS cluster to the plan: once its operations are done, the cluster (one
//! `listKubernetesClusters` by ID) must still be the one the state names, in the state the
//! config asks for, with the workers it asks for (unless the autoscaler decides them). Each
//! difference is classed by the CKS table's row for what it amounts to.

use super::impact::{rule, Change};
use crate::api::KubernetesCluster;
use crate::client::CloudstackClient;
use crate::spec::{CloudstackClusterSpec, ClusterRunState};
use skyplan_core::model::Impact;
use skyplan_core::plan::{ResourceChange, Verification};
use skyplan_core::state::ResourceState;

/// Reads the cluster `entry` names and compares it with the spec the change applied.
pub async fn verify(
    client: &CloudstackClient,
    change: &ResourceChange,
    entry: &ResourceState,
) -> Verification {
    let address = change.address.to_string();
    let predicted = change.impact();
    let spec: Option<CloudstackClusterSpec> = serde_json::from_value(entry.attributes.clone()).ok();
    let params = vec![("id".to_string(), entry.id.clone())];
    let listed = client
        .list("listKubernetesClusters", &params, "kubernetescluster")
        .await;
    let differences = match (listed, spec) {
        (Ok(found), Some(spec)) => {
            let found: Vec<KubernetesCluster> = found
                .into_iter()
                .filter_map(|c| serde_json::from_value(c).ok())
                .collect();
            let live = found.iter().find(|c| c.id == entry.id);
            compare(&spec, live)
        }
        (Ok(_), None) => vec![],
        (Err(e), _) => {
            let why = format!("could not be verified: {e}");
            return Verification {
                address,
                predicted,
                observed: predicted,
                differences: vec![why],
            };
        }
    };
    Verification {
        address,
        predicted,
        observed: differences
            .iter()
            .map(|(impact, _)| *impact)
            .fold(predicted, Impact::max),
        differences: differences.into_iter().map(|(_, text)| text).collect(),
    }
}

/// What the live cluster shows that the spec does not ask for.
pub fn compare(
    spec: &CloudstackClusterSpec,
    live: Option<&KubernetesCluster>,
) -> Vec<(Impact, String)> {
    let Some(live) = live.filter(|c| c.state != "Destroyed") else {
        return vec![(rule(Change::Deleted).impact, "the cluster is gone".into())];
    };
    let mut found = Vec::new();
    let wanted_state = match spec.state {
        ClusterRunState::Running => "Running",
        ClusterRunState::Stopped => "Stopped",
    };
    if live.state != wanted_state {
        found.push((
            rule(Change::Stop).impact,
            format!("the cluster is {}, not {wanted_state}", live.state),
        ));
    }
    if spec.autoscaling.is_none() && live.size != spec.workers {
        found.push((
            rule(Change::WorkersDown).impact,
            format!(
                "the cluster has {} workers, not {}",
                live.size, spec.workers
            ),
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(state: &str, size: u32) -> KubernetesCluster {
        serde_json::from_value(serde_json::json!({
            "id": "c1", "name": "lab", "zoneid": "z1", "kubernetesversionid": "v1",
            "serviceofferingid": "o1", "size": size, "state": state
        }))
        .unwrap()
    }

    fn spec() -> CloudstackClusterSpec {
        let mut spec = crate::cluster::tests::spec();
        spec.workers = 2;
        spec
    }

    #[test]
    fn a_running_cluster_of_the_asked_size_is_as_predicted() {
        assert_eq!(compare(&spec(), Some(&live("Running", 2))), vec![]);
    }

    #[test]
    fn another_state_size_or_no_cluster_are_differences() {
        let found = compare(&spec(), Some(&live("Alert", 3)));
        let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "the cluster is Alert, not Running",
                "the cluster has 3 workers, not 2"
            ]
        );
        assert_eq!(found[0].0, Impact::PoolRecreate);
        let gone = compare(&spec(), Some(&live("Destroyed", 2)));
        assert_eq!(
            gone,
            vec![(Impact::Forbidden, "the cluster is gone".into())]
        );
        assert_eq!(compare(&spec(), None), gone);
    }

    #[test]
    fn the_autoscaler_decides_the_workers() {
        let mut spec = spec();
        spec.autoscaling = Some(crate::spec::Autoscaling { min: 1, max: 5 });
        assert_eq!(compare(&spec, Some(&live("Running", 4))), vec![]);
    }
}
