//! What discovery reads beyond a refresh: a refresh already lists every collection of the
//! account, so only the Services the CloudStack CCM may have made rules for are left — read
//! when rules that no target claims carry a CCM name (`a<uid>-<protocol>-<port>`), from the
//! clusters the registry connected and, while some such rule's Service is still unknown, from
//! the running CKS clusters whose network holds it (connected through the kubeconfig
//! CloudStack gives: one `getKubernetesClusterConfig` and one Service list per cluster). The
//! nodes of a cluster are read only for a Service whose rules are being adopted (their
//! members are the CCM's node set). A cluster that cannot be read is recorded, not an error:
//! its rules are listed as not importable, saying why.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Service};

use super::claimed::claimed;
use super::discover::cluster_address;
use super::{alive, ccm_base, is_adopting};
use crate::api::KubernetesCluster;
use crate::client::{CloudstackClient, Secret};
use crate::cluster::find_live;
use crate::lb::ccm::predict::service_base;
use crate::live::Live;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::address_name;
use skyplan_core::provider::Target;
use skyplan_kubernetes::connection::{ClusterConnection, Clusters};

/// CKS states in which a cluster's API server runs (its control VMs are up).
const API_UP: [&str; 4] = ["Running", "Scaling", "Upgrading", "Alert"];

/// The clusters a survey read.
#[derive(Debug, Default)]
pub struct Surveyed {
    pub clusters: Vec<SurveyedCluster>,
}

#[derive(Debug, Clone)]
pub struct SurveyedCluster {
    /// Its address in the config, or the one proposed for a CKS cluster the config lacks.
    pub address: Address,
    /// Whether the config has it (a target, or a cluster the registry connected).
    pub configured: bool,
    /// The live CKS cluster it is, when it is one.
    pub cks_id: Option<String>,
    /// Every Service, or why they could not be read.
    pub services: Result<Vec<Service>, String>,
    /// Its nodes, read when a Service's rules there are being adopted.
    pub nodes: Option<Result<Vec<Node>, String>>,
}

impl Surveyed {
    /// The Service whose CCM base name is `base`, with its cluster.
    pub fn service(&self, base: &str) -> Option<(&SurveyedCluster, &Service)> {
        self.clusters.iter().find_map(|cluster| {
            let services = cluster.services.as_ref().ok()?;
            let service = services
                .iter()
                .find(|s| service_base(Some(s)).as_deref() == Some(base))?;
            Some((cluster, service))
        })
    }

    /// The surveyed cluster that is the CKS cluster `id`.
    pub fn cks(&self, id: &str) -> Option<&SurveyedCluster> {
        self.clusters
            .iter()
            .find(|c| c.cks_id.as_deref() == Some(id))
    }
}

/// Reads what discovery needs beyond `live` (the refresh of `targets`); `clusters` are the
/// connected ones.
pub async fn survey(
    client: &CloudstackClient,
    clusters: Option<&Clusters>,
    targets: &[Target<'_>],
    live: &Live,
) -> Surveyed {
    let claimed = claimed(targets, live);
    let inventory = &live.inventory;
    let mut pending: BTreeSet<&str> = inventory
        .rules
        .iter()
        .filter(|r| !claimed.rules.contains(&r.id) && !claimed.ips.contains(&r.publicipid))
        .filter_map(|r| ccm_base(&r.name))
        .collect();
    let mut surveyed = Surveyed::default();
    if pending.is_empty() {
        return surveyed;
    }
    let mut connections: Vec<Option<Arc<ClusterConnection>>> = vec![];
    let attached = clusters.map(Clusters::all).unwrap_or_default();
    for (address, connection) in attached {
        let cks_id = live.clusters.get(&address).and_then(|known| {
            let name = known.spec.as_ref().map(|s| s.name.as_str());
            find_live(inventory, known.prior_id.as_deref(), name).map(|c| c.id.clone())
        });
        let services = connection.services().await.map(<[Service]>::to_vec);
        let cluster = SurveyedCluster {
            address,
            configured: true,
            cks_id,
            services: services.map_err(|e| e.message),
            nodes: None,
        };
        settle(&mut pending, &cluster);
        surveyed.clusters.push(cluster);
        connections.push(Some(connection));
    }
    for cks in inventory.clusters.iter().filter(|c| alive(c)) {
        if pending.is_empty() {
            break;
        }
        if surveyed.cks(&cks.id).is_some() || !holds_pending(live, cks, &pending) {
            continue;
        }
        let configured = claimed.clusters.contains_key(&cks.id);
        let address = cluster_address(None, &claimed, cks);
        let connection = connect(client, cks, &address).await;
        let services = match &connection {
            Ok(connection) => connection
                .services()
                .await
                .map(<[Service]>::to_vec)
                .map_err(|e| e.message),
            Err(why) => Err(why.clone()),
        };
        let cluster = SurveyedCluster {
            address,
            configured,
            cks_id: Some(cks.id.clone()),
            services,
            nodes: None,
        };
        settle(&mut pending, &cluster);
        surveyed.clusters.push(cluster);
        connections.push(connection.ok().map(Arc::new));
    }
    read_adopted_nodes(targets, live, &mut surveyed, &connections).await;
    surveyed
}

/// The address proposed for a CKS cluster the config does not have: its name.
pub fn proposed(cluster: &KubernetesCluster) -> Address {
    Address::new(ResourceKind::Cluster, address_name(&cluster.name))
}

/// Drops the bases whose Service `cluster` holds.
fn settle(pending: &mut BTreeSet<&str>, cluster: &SurveyedCluster) {
    let Ok(services) = &cluster.services else {
        return;
    };
    for service in services {
        if let Some(base) = service_base(Some(service)) {
            pending.remove(base.as_str());
        }
    }
}

/// Whether the cluster's network holds a rule of a base still unknown.
fn holds_pending(live: &Live, cks: &KubernetesCluster, pending: &BTreeSet<&str>) -> bool {
    let Some(network) = cks.networkid.as_deref() else {
        return false;
    };
    live.inventory
        .rules_in_network(network)
        .filter_map(|r| ccm_base(&r.name))
        .any(|base| pending.contains(base))
}

/// A CKS cluster the config does not connect, through the kubeconfig CloudStack gives.
async fn connect(
    client: &CloudstackClient,
    cks: &KubernetesCluster,
    address: &Address,
) -> Result<ClusterConnection, String> {
    if !API_UP.contains(&cks.state.as_str()) {
        return Err(format!(
            "CKS cluster {} is {}: its Kubernetes API is not up",
            cks.name, cks.state
        ));
    }
    let text = crate::cluster::kubeconfig(client, &cks.id)
        .await
        .map_err(|e| e.message)?;
    skyplan_kubernetes::connect::connect_with_kubeconfig(address, &Secret::new(text))
        .await
        .map_err(|e| e.message)
}

/// The nodes of each cluster holding the Service of rules being adopted: the CCM assigns
/// their VMs to the rules, which the generated config must then find as they are.
async fn read_adopted_nodes(
    targets: &[Target<'_>],
    live: &Live,
    surveyed: &mut Surveyed,
    connections: &[Option<Arc<ClusterConnection>>],
) {
    let inventory = &live.inventory;
    let mut wanted = BTreeSet::new();
    for target in targets.iter().filter(|t| is_adopting(t)) {
        if target.address.kind != ResourceKind::LoadBalancer {
            continue;
        }
        let id = target.prior.map(|p| p.id.as_str()).unwrap_or_default();
        let Some(ip) = inventory
            .public_ip(id)
            .or_else(|| inventory.public_ip_by_address(id))
        else {
            continue;
        };
        for base in inventory.rules_on(&ip.id).filter_map(|r| ccm_base(&r.name)) {
            let found = surveyed.clusters.iter().position(|c| {
                let services = c.services.as_ref().map(Vec::as_slice).unwrap_or_default();
                services
                    .iter()
                    .any(|s| service_base(Some(s)).as_deref() == Some(base))
            });
            wanted.extend(found);
        }
    }
    for index in wanted {
        let nodes = match &connections[index] {
            Some(connection) => connection
                .nodes()
                .await
                .map(<[Node]>::to_vec)
                .map_err(|e| e.message),
            None => Err("the cluster is not connected".to_string()),
        };
        surveyed.clusters[index].nodes = Some(nodes);
    }
}
