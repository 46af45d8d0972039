//! One connection per `[cluster.*]` skyplan can reach with the Kubernetes API, shared by every
//! provider that needs the cluster: node policies, node-metadata drift, Service-bound load
//! balancers. The nodes are read once per run.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use k8s_openapi::api::core::v1::{Namespace, Node, Service};
use tokio::sync::OnceCell;

use skyplan_core::model::Address;
use skyplan_core::provider::ProviderError;

pub struct ClusterConnection {
    pub address: Address,
    client: kube::Client,
    /// The API server's URL, for messages (a connection that could not be made names it).
    server: String,
    nodes: OnceCell<Vec<Node>>,
    /// Every node port the cluster's Services hold, read at most once per run.
    node_ports: OnceCell<BTreeMap<u16, String>>,
    /// Every Service of the cluster, listed once per run when asked (node ports, discovery).
    services: OnceCell<Vec<Service>>,
    /// The kube-system namespace UID, read at most once per run.
    uid: OnceCell<String>,
    /// Whether each namespace asked about exists, read at most once per run.
    namespaces: Mutex<BTreeMap<String, Arc<OnceCell<bool>>>>,
    /// The nodes as this run's node policies will leave them, set while the Kubernetes
    /// provider refreshes (the clouds plan after every refresh, so they see it).
    planned: Mutex<Option<Vec<Node>>>,
    /// Requests sent through `client` (counted by a layer under it; zero for a client built
    /// elsewhere and handed to [`ClusterConnection::new`]).
    requests: Arc<AtomicU64>,
    /// The embedded cluster behind `client`, stopped by [`ClusterConnection::close`].
    embedded: Mutex<Option<skyplan_core::provider::Companion>>,
}

impl ClusterConnection {
    pub fn new(address: Address, client: kube::Client) -> Self {
        ClusterConnection {
            address,
            client,
            server: "the API server".to_owned(),
            nodes: OnceCell::new(),
            node_ports: OnceCell::new(),
            services: OnceCell::new(),
            uid: OnceCell::new(),
            namespaces: Mutex::default(),
            planned: Mutex::new(None),
            requests: Arc::default(),
            embedded: Mutex::new(None),
        }
    }

    /// A connection whose client counts its requests into `requests`, and which owns the
    /// embedded cluster it talks to (if any).
    pub fn counted(
        address: Address,
        client: kube::Client,
        server: String,
        requests: Arc<AtomicU64>,
        embedded: Option<skyplan_core::provider::Companion>,
    ) -> Self {
        ClusterConnection {
            server,
            requests,
            embedded: Mutex::new(embedded),
            ..ClusterConnection::new(address, client)
        }
    }

    /// Requests sent so far.
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The nodes, if [`ClusterConnection::nodes`] has read them this run.
    pub fn cached_nodes(&self) -> Option<&[Node]> {
        self.nodes.get().map(Vec::as_slice)
    }

    /// Records the nodes as the planned node policies will leave them.
    pub fn set_planned_nodes(&self, nodes: Vec<Node>) {
        *self.planned.lock().unwrap_or_else(|p| p.into_inner()) = Some(nodes);
    }

    /// The nodes as they will be once this run's node policies are applied: what a load
    /// balancer's members (or its controller) will be built from. Without policies, the live
    /// nodes read this run.
    pub fn planned_nodes(&self) -> Option<Vec<Node>> {
        let planned = self.planned.lock().unwrap_or_else(|p| p.into_inner());
        planned
            .clone()
            .or_else(|| self.cached_nodes().map(<[Node]>::to_vec))
    }

    /// Stops the embedded cluster (which writes its world); nothing for a real one.
    pub async fn close(&self) -> Result<(), ProviderError> {
        let embedded = self
            .embedded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match embedded {
            Some(cluster) => cluster
                .stop()
                .await
                .map_err(|e| ProviderError::new(&self.address, e)),
            None => Ok(()),
        }
    }

    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A failed request of this connection's client, as a user can act on it.
    pub fn describe(&self, error: &kube::Error) -> String {
        super::errors::describe(error, &self.server)
    }

    /// The provider error for `doing` (`listing nodes`) that failed with `error`: of its kind,
    /// with it as the source.
    pub fn failed(&self, doing: &str, error: kube::Error) -> ProviderError {
        ProviderError::new(&self.address, format!("{doing}: {}", self.describe(&error)))
            .kind(super::errors::kind(&error))
            .caused_by(error)
    }

    /// Every Node, listed once per run (paged by 500, as kubectl does).
    pub async fn nodes(&self) -> Result<&[Node], ProviderError> {
        let nodes = self.nodes.get_or_try_init(|| list_nodes(self)).await?;
        Ok(nodes)
    }

    /// Every Node, read again now (apply, waiting for a controller that acts on nodes changed
    /// since the run's first read).
    pub async fn fresh_nodes(&self) -> Result<Vec<Node>, ProviderError> {
        list_nodes(self).await
    }

    /// The Service `namespace/name`, fresh from the API (`None`: it does not exist).
    pub async fn service(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Service>, ProviderError> {
        let api: kube::Api<Service> = kube::Api::namespaced(self.client.clone(), namespace);
        api.get_opt(name)
            .await
            .map_err(|e| self.failed(&format!("reading Service {namespace}/{name}"), e))
    }

    /// Whether `namespace` exists: one GET per namespace per run. Asked only where a binding's
    /// Service does not exist (a Service that exists has its namespace), so the common case
    /// costs nothing.
    pub async fn namespace_exists(&self, namespace: &str) -> Result<bool, ProviderError> {
        let cell = self
            .namespaces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(namespace.to_owned())
            .or_default()
            .clone();
        let exists = cell
            .get_or_try_init(|| async {
                let api: kube::Api<Namespace> = kube::Api::all(self.client.clone());
                let found = api.get_opt(namespace).await.map_err(|e| {
                    let message = format!("reading namespace {namespace}: {e}");
                    ProviderError::new(&self.address, message)
                        .kind(super::errors::kind(&e))
                        .caused_by(e)
                })?;
                Ok::<_, ProviderError>(found.is_some())
            })
            .await?;
        Ok(*exists)
    }

    /// `Some(why)` when the Service of a binding cannot be read because its namespace does not
    /// exist; `service` is what [`ClusterConnection::service`] read.
    pub async fn missing_namespace(
        &self,
        namespace: &str,
        service: Option<&Service>,
    ) -> Result<Option<String>, ProviderError> {
        if service.is_some() || self.namespace_exists(namespace).await? {
            return Ok(None);
        }
        Ok(Some(format!(
            "namespace `{namespace}` does not exist in {}: create it (kubectl create namespace {namespace}) or name a namespace that exists",
            self.address
        )))
    }

    /// The kube-system namespace's UID: the cluster's identity to cloud controllers that tag
    /// what they make (the PhoenixNAP CCM's cluster id). Read once per run.
    pub async fn cluster_uid(&self) -> Result<&str, ProviderError> {
        let uid = self
            .uid
            .get_or_try_init(|| async {
                let api: kube::Api<Namespace> = kube::Api::all(self.client.clone());
                let namespace = api
                    .get("kube-system")
                    .await
                    .map_err(|e| self.failed("reading namespace kube-system", e))?;
                namespace.metadata.uid.ok_or_else(|| {
                    ProviderError::new(&self.address, "namespace kube-system has no uid")
                })
            })
            .await?;
        Ok(uid)
    }

    /// Every node port (health-check node ports included) that a Service of the cluster
    /// holds, with its holder `namespace/name`: listed once per run, and only when a
    /// controller-mode load balancer asks for a node port of its own.
    pub async fn node_ports_in_use(&self) -> Result<&BTreeMap<u16, String>, ProviderError> {
        self.node_ports
            .get_or_try_init(|| list_node_ports(self))
            .await
    }

    /// Every Service of the cluster, in every namespace: listed once per run (in pages).
    pub async fn services(&self) -> Result<&[Service], ProviderError> {
        let services = self
            .services
            .get_or_try_init(|| list_services(self))
            .await?;
        Ok(services)
    }
}

async fn list_node_ports(
    connection: &ClusterConnection,
) -> Result<BTreeMap<u16, String>, ProviderError> {
    let mut held = BTreeMap::new();
    for service in connection.services().await? {
        let holder = format!(
            "{}/{}",
            service.metadata.namespace.as_deref().unwrap_or_default(),
            service.metadata.name.as_deref().unwrap_or_default()
        );
        for port in service_node_ports(service) {
            held.insert(port, holder.clone());
        }
    }
    Ok(held)
}

async fn list_services(connection: &ClusterConnection) -> Result<Vec<Service>, ProviderError> {
    let api: kube::Api<Service> = kube::Api::all(connection.client());
    let mut services = Vec::new();
    let mut params = kube::api::ListParams::default().limit(500);
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(|e| connection.failed("listing services", e))?;
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        services.extend(page.items);
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(services),
        }
    }
}

fn service_node_ports(service: &Service) -> impl Iterator<Item = u16> + '_ {
    let spec = service.spec.as_ref();
    let ports = spec.and_then(|s| s.ports.as_ref()).into_iter().flatten();
    ports
        .filter_map(|p| p.node_port)
        .chain(spec.and_then(|s| s.health_check_node_port))
        .filter_map(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
}

async fn list_nodes(connection: &ClusterConnection) -> Result<Vec<Node>, ProviderError> {
    let api: kube::Api<Node> = kube::Api::all(connection.client());
    let mut nodes = Vec::new();
    let mut params = kube::api::ListParams::default().limit(500);
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(|e| connection.failed("listing nodes", e))?;
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        nodes.extend(page.items);
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(nodes),
        }
    }
}

/// The connected clusters by address. Filled once the Kubernetes provider has connected, after
/// the clouds (an embedded cluster's nodes are backed by the embedded cloud's VMs), so the
/// clouds hold this and look their clusters up when they refresh.
#[derive(Default)]
pub struct Clusters {
    connections: OnceLock<BTreeMap<Address, Arc<ClusterConnection>>>,
}

impl Clusters {
    pub fn set(&self, connections: BTreeMap<Address, Arc<ClusterConnection>>) {
        // Set once per run by the registry; a second call would be a wiring bug.
        let _ = self.connections.set(connections);
    }

    pub fn get(&self, address: &Address) -> Option<Arc<ClusterConnection>> {
        self.connections.get()?.get(address).cloned()
    }

    /// Every connected cluster, by address (none before the Kubernetes provider connected).
    pub fn all(&self) -> Vec<(Address, Arc<ClusterConnection>)> {
        let connections = self.connections.get().into_iter().flatten();
        connections.map(|(a, c)| (a.clone(), c.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_services_node_ports_include_its_health_check_port_and_skip_unallocated_ones() {
        let service: Service = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "shop", "namespace": "default"},
            "spec": {"ports": [{"port": 80, "nodePort": 30080}, {"port": 81}],
                     "healthCheckNodePort": 32100}
        }))
        .unwrap();
        let ports: Vec<u16> = service_node_ports(&service).collect();
        assert_eq!(ports, [30080, 32100]);
        assert_eq!(service_node_ports(&Service::default()).count(), 0);
    }
}
