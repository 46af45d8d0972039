//! Runs a cluster's operations: one API call each (async ones polled to the end by the client),
//! each recorded in the journal before and after. A create whose answer was lost is never
//! repeated blindly: the cluster is looked up by name and adopted.

use serde_json::{json, Value};

use super::ops::{ClusterOp, CreateCluster, NodeOffering, Target};
use crate::client::{CloudstackClient, Error as ClientError, Params};
use crate::live::ApplyContext;
use crate::ops::Op;
use crate::PROVIDER;
use skyplan_core::plan::{Record, ResourceChange};
use skyplan_core::provider::ProviderError;
use skyplan_core::state::journal::Phase;
use skyplan_core::state::ResourceState;

/// Runs the change's operations; returns the new state entry (`None` once deleted).
pub async fn apply(
    ctx: &ApplyContext<'_>,
    change: &ResourceChange,
    prior: Option<&ResourceState>,
) -> Result<Option<ResourceState>, ProviderError> {
    let address = &change.address;
    let journal_error = |e: skyplan_core::state::StateError| ProviderError::new(address, e);
    // The cluster the operations act on: the state's, the plan's (an adopted cluster), then
    // the one a create returns.
    let mut id = prior.map(|p| p.id.clone());
    for operation in &change.operations {
        let Some(Op::Cluster(op)) = Op::of(operation) else {
            return Err(ProviderError::new(
                address,
                "a CloudStack cluster with another resource's operation",
            ));
        };
        let text = op.to_string();
        tracing::info!(%address, "{text}");
        ctx.journal
            .record(address, Phase::Intent, &text, None, None)
            .map_err(journal_error)?;
        let result = execute(ctx.client, &op, &mut id).await;
        ctx.journal.checkpoint("call");
        if let Err(e) = result {
            ctx.journal
                .record(address, Phase::Failed, &text, None, Some(e.clone()))
                .map_err(journal_error)?;
            return Err(ProviderError::new(address, format!("{op}: {e}")));
        }
        ctx.journal
            .record(address, Phase::Done, &text, Some(json!({ "id": id })), None)
            .map_err(journal_error)?;
    }
    let Some(record) = change.record.as_ref().map(Record::to_value) else {
        return Ok(None);
    };
    let id = match id {
        Some(id) => id,
        // A cluster adopted by its name with nothing to change: its id is recorded now.
        None => recorded_cluster_id(ctx.client, &record)
            .await
            .map_err(|e| ProviderError::new(address, e))?,
    };
    Ok(Some(ResourceState {
        provider: PROVIDER.to_string(),
        id,
        ids: json!({}),
        attributes: record,
        // The apply runner records what the resource depends on.
        depends_on: vec![],
    }))
}

/// One operation = one API call. `id` is the cluster's, updated by a create.
async fn execute(
    client: &CloudstackClient,
    op: &ClusterOp,
    id: &mut Option<String>,
) -> Result<(), String> {
    if let ClusterOp::Create(create) = op {
        *id = Some(create_or_adopt(client, create).await?);
        return Ok(());
    }
    let cluster = op_target(op).expect("every operation but create names its cluster");
    if let Some(own) = &cluster.id {
        *id = Some(own.clone());
    }
    let cluster_id = id
        .clone()
        .ok_or_else(|| format!("the id of cluster {} is unknown", cluster.name))?;
    let (command, params) = request(op, &cluster_id);
    client
        .run_job(command, &params)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn op_target(op: &ClusterOp) -> Option<&Target> {
    match op {
        ClusterOp::Create(_) => None,
        ClusterOp::ScaleOffering { cluster, .. }
        | ClusterOp::ScaleSize { cluster, .. }
        | ClusterOp::Autoscale { cluster, .. }
        | ClusterOp::Upgrade { cluster, .. }
        | ClusterOp::Start { cluster }
        | ClusterOp::Stop { cluster }
        | ClusterOp::Delete { cluster } => Some(cluster),
    }
}

fn param(key: &str, value: impl ToString) -> (String, String) {
    (key.to_string(), value.to_string())
}

/// `nodeofferings[i].node` / `nodeofferings[i].offering`, as the server's MAP parameter.
fn node_offering_params(entries: &[NodeOffering]) -> Params {
    entries
        .iter()
        .enumerate()
        .flat_map(|(i, entry)| {
            [
                param(&format!("nodeofferings[{i}].node"), entry.node),
                param(&format!("nodeofferings[{i}].offering"), &entry.offering.id),
            ]
        })
        .collect()
}

/// The command and parameters of every operation but create.
fn request(op: &ClusterOp, id: &str) -> (&'static str, Params) {
    let mut params = vec![param("id", id)];
    let command = match op {
        ClusterOp::Create(_) => unreachable!("create has its own request"),
        ClusterOp::ScaleOffering {
            offering,
            node_offerings,
            ..
        } => {
            params.push(param("serviceofferingid", &offering.id));
            params.extend(node_offering_params(node_offerings));
            "scaleKubernetesCluster"
        }
        ClusterOp::ScaleSize {
            workers, pinned, ..
        } => {
            params.push(param("size", workers));
            params.extend(node_offering_params(pinned));
            "scaleKubernetesCluster"
        }
        ClusterOp::Autoscale {
            enabled, min, max, ..
        } => {
            params.push(param("autoscalingenabled", enabled));
            if *enabled {
                params.push(param("minsize", min));
                params.push(param("maxsize", max));
            }
            "scaleKubernetesCluster"
        }
        ClusterOp::Upgrade { version, .. } => {
            params.push(param("kubernetesversionid", &version.id));
            "upgradeKubernetesCluster"
        }
        ClusterOp::Start { .. } => "startKubernetesCluster",
        ClusterOp::Stop { .. } => "stopKubernetesCluster",
        ClusterOp::Delete { .. } => "deleteKubernetesCluster",
    };
    (command, params)
}

fn create_params(create: &CreateCluster) -> Params {
    let mut params = vec![
        param("name", &create.name),
        param("zoneid", &create.zone.id),
        param("kubernetesversionid", &create.version.id),
        param("serviceofferingid", &create.offering.id),
        param("size", create.workers),
        param("controlnodes", create.control_nodes),
    ];
    if let Some(description) = &create.description {
        params.push(param("description", description));
    }
    // etcdnodes exists only since 4.21: sent only when asked for.
    if create.etcd_nodes > 0 {
        params.push(param("etcdnodes", create.etcd_nodes));
    }
    if let Some(network) = &create.network {
        params.push(param("networkid", &network.id));
    }
    if let Some(keypair) = &create.keypair {
        params.push(param("keypair", keypair));
    }
    params.extend(node_offering_params(&create.node_offerings));
    params
}

/// The cluster's id in a create's job result (`{"kubernetescluster": {...}}`).
fn cluster_id(result: &Value) -> Option<String> {
    result
        .get("kubernetescluster")
        .unwrap_or(result)
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

async fn create_or_adopt(
    client: &CloudstackClient,
    create: &CreateCluster,
) -> Result<String, String> {
    match client
        .run_job("createKubernetesCluster", &create_params(create))
        .await
    {
        Ok(result) => cluster_id(&result)
            .ok_or_else(|| format!("createKubernetesCluster answered without an id: {result}")),
        Err(e) if e.is_uncertain() => adopt(client, &create.name, &e).await,
        Err(e) => Err(e.to_string()),
    }
}

/// The id of the live cluster with that name, if there is one.
async fn find_by_name(
    client: &CloudstackClient,
    name: &str,
) -> Result<Option<String>, ClientError> {
    let params = vec![param("name", name)];
    let found = client
        .list("listKubernetesClusters", &params, "kubernetescluster")
        .await?;
    Ok(adoptable(&found, name))
}

/// After a create whose answer was lost: the cluster with that name, if the server made it.
async fn adopt(
    client: &CloudstackClient,
    name: &str,
    cause: &ClientError,
) -> Result<String, String> {
    find_by_name(client, name)
        .await
        .map_err(|e| format!("{cause}; looking for cluster {name} afterwards failed too: {e}"))?
        .ok_or_else(|| {
            format!("{cause}; no cluster {name} was made, so the create can be planned again")
        })
}

/// The id of the cluster a change without operations records (one the plan adopted by name).
async fn recorded_cluster_id(client: &CloudstackClient, record: &Value) -> Result<String, String> {
    let name = record
        .get("name")
        .and_then(Value::as_str)
        .ok_or("the recorded spec has no cluster name")?;
    find_by_name(client, name)
        .await
        .map_err(|e| format!("looking up cluster {name}: {e}"))?
        .ok_or_else(|| format!("cluster {name} is not in the account any more: plan again"))
}

/// The listed cluster of that exact name (the API's `name` filter may match more loosely),
/// unless it is already destroyed.
fn adoptable(listed: &[Value], name: &str) -> Option<String> {
    listed
        .iter()
        .filter(|c| c.get("name").and_then(Value::as_str) == Some(name))
        .filter(|c| c.get("state").and_then(Value::as_str) != Some("Destroyed"))
        .find_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
}

/// The cluster's kubeconfig text (getKubernetesClusterConfig → `clusterconfig.configdata`).
pub async fn kubeconfig(
    client: &CloudstackClient,
    cluster_id: &str,
) -> Result<String, ProviderError> {
    let answer = client
        .call("getKubernetesClusterConfig", &vec![param("id", cluster_id)])
        .await
        .map_err(|e| {
            let message = format!("getKubernetesClusterConfig: {e}");
            e.reported(PROVIDER, message)
        })?;
    config_data(&answer).ok_or_else(|| {
        ProviderError::new(
            PROVIDER,
            format!("getKubernetesClusterConfig returned no configdata for cluster {cluster_id}"),
        )
    })
}

fn config_data(answer: &Value) -> Option<String> {
    answer
        .pointer("/clusterconfig/configdata")
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ops::Named;
    use crate::spec::NodeType;

    fn named(id: &str) -> Named {
        Named {
            id: id.into(),
            name: id.to_uppercase(),
        }
    }

    fn target() -> Target {
        Target {
            name: "lab".into(),
            id: Some("c1".into()),
        }
    }

    fn keys(params: &Params) -> Vec<String> {
        params.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn create_sends_every_parameter_and_etcd_only_when_asked() {
        let mut create = CreateCluster {
            name: "lab".into(),
            description: None,
            zone: named("z1"),
            version: named("v1"),
            offering: named("o1"),
            workers: 3,
            control_nodes: 1,
            etcd_nodes: 0,
            node_offerings: vec![],
            network: Some(named("n1")),
            keypair: Some("ops".into()),
        };
        assert_eq!(
            keys(&create_params(&create)),
            [
                "name=lab",
                "zoneid=z1",
                "kubernetesversionid=v1",
                "serviceofferingid=o1",
                "size=3",
                "controlnodes=1",
                "networkid=n1",
                "keypair=ops"
            ]
        );
        create.etcd_nodes = 3;
        create.node_offerings = vec![NodeOffering {
            node: NodeType::Worker,
            offering: named("o2"),
        }];
        let params = keys(&create_params(&create));
        assert!(params.contains(&"etcdnodes=3".to_string()));
        assert!(params.contains(&"nodeofferings[0].node=worker".to_string()));
        assert!(params.contains(&"nodeofferings[0].offering=o2".to_string()));
    }

    #[test]
    fn each_operation_is_one_command() {
        let cases = [
            (
                ClusterOp::ScaleOffering {
                    cluster: target(),
                    offering: named("o2"),
                    node_offerings: vec![],
                },
                "scaleKubernetesCluster",
                vec!["id=c1", "serviceofferingid=o2"],
            ),
            (
                ClusterOp::ScaleSize {
                    cluster: target(),
                    workers: 5,
                    pinned: vec![],
                },
                "scaleKubernetesCluster",
                vec!["id=c1", "size=5"],
            ),
            (
                ClusterOp::Autoscale {
                    cluster: target(),
                    enabled: true,
                    min: 2,
                    max: 5,
                },
                "scaleKubernetesCluster",
                vec!["id=c1", "autoscalingenabled=true", "minsize=2", "maxsize=5"],
            ),
            (
                ClusterOp::Autoscale {
                    cluster: target(),
                    enabled: false,
                    min: 0,
                    max: 0,
                },
                "scaleKubernetesCluster",
                vec!["id=c1", "autoscalingenabled=false"],
            ),
            (
                ClusterOp::Upgrade {
                    cluster: target(),
                    version: named("v2"),
                },
                "upgradeKubernetesCluster",
                vec!["id=c1", "kubernetesversionid=v2"],
            ),
            (
                ClusterOp::Start { cluster: target() },
                "startKubernetesCluster",
                vec!["id=c1"],
            ),
            (
                ClusterOp::Stop { cluster: target() },
                "stopKubernetesCluster",
                vec!["id=c1"],
            ),
            (
                ClusterOp::Delete { cluster: target() },
                "deleteKubernetesCluster",
                vec!["id=c1"],
            ),
        ];
        for (op, command, params) in cases {
            let (sent, sent_params) = request(&op, "c1");
            assert_eq!(sent, command, "{op}");
            assert_eq!(keys(&sent_params), params, "{op}");
        }
    }

    #[test]
    fn the_created_clusters_id_is_read_from_the_job_result() {
        let result = json!({"kubernetescluster": {"id": "c9", "name": "lab"}});
        assert_eq!(cluster_id(&result).as_deref(), Some("c9"));
        assert_eq!(cluster_id(&json!({"id": "c8"})).as_deref(), Some("c8"));
        assert_eq!(cluster_id(&json!({})), None);
    }

    #[test]
    fn only_a_live_cluster_of_that_exact_name_is_adopted() {
        let listed = [
            json!({"id": "old", "name": "lab", "state": "Destroyed"}),
            json!({"id": "other", "name": "lab-2", "state": "Running"}),
            json!({"id": "mine", "name": "lab", "state": "Starting"}),
        ];
        assert_eq!(adoptable(&listed, "lab").as_deref(), Some("mine"));
        assert_eq!(adoptable(&listed[..2], "lab"), None);
    }

    #[test]
    fn the_kubeconfig_is_the_config_data() {
        let answer = json!({"clusterconfig": {"id": "c1", "configdata": "apiVersion: v1\n"}});
        assert_eq!(config_data(&answer).as_deref(), Some("apiVersion: v1\n"));
        assert_eq!(config_data(&json!({"clusterconfig": {}})), None);
    }
}
