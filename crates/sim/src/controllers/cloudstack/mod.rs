//! The simulated CloudStack CCM (cloudstack-kubernetes-provider v1.2.0) for one cluster: its
//! service controller reconciling LoadBalancer Services into LB rules, firewall rules and public
//! IPs (research/cloudstack.md §1). Like the cloudscale one beside it, it is an HTTP client of
//! the simulated Kubernetes API and of the simulated cloud (`/client/api`, signed requests),
//! and shares no code with `provider/`.
//!
//! Each CKS cluster of the CloudStack simulator runs one (`sim/cloudstack/cks`, started with
//! the cluster's Kubernetes API, stopped with it).
//!
//! Public surface: [`CloudStackEndpoint`], [`CsControllerOptions`], [`pass_interval`],
//! [`start`] → the shared
//! [`ControllersHandle`](super::ControllersHandle) (`stop()`, `history()`), and
//! [`LAST_ERROR_ANNOTATION`]. What each reconcile did is the shared
//! [`ReconcileRecord`] on the Service's `sim.skyplan.dev/last-reconcile` annotation,
//! with actions such as `associate ip 198.51.100.2`,
//! `create rule a…-tcp-80 80->30080 tcp roundrobin`, `assign <vm ids> on rule a…-tcp-80`,
//! `update rule a…-tcp-80 algorithm=source protocol=tcp`, `delete rule a…-tcp-80`,
//! `create firewall rule tcp/80 0.0.0.0/0`, `delete firewall rule tcp/80 0.0.0.0/0`,
//! `remove <vm ids> on rule …`, `disassociate ip …`.
//!
//! Where it departs from v1.2.0 on purpose: the server version comes from `listCapabilities`
//! (v1.2.0 calls the admin-only `listManagementServersMetrics` and does not start without admin
//! keys — research §1.5; the simulated controller runs as if it had them); network ACLs of VPC
//! tiers are not modelled (the simulated cloud has none).
//!
//! Codemap: `client` signed calls and async jobs; `spec` the Service fields and the pure
//! naming/protocol/algorithm/CIDR rules; `hosts` nodes → VMs; `balancer` the rules and the IP
//! of one Service; `firewall` its firewall rules; `reconcile` Ensure/Update/Delete;
//! `controller` the service controller's passes and write-back.

mod balancer;
mod client;
mod controller;
mod firewall;
mod hosts;
mod reconcile;
mod spec;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

pub use controller::LAST_ERROR_ANNOTATION;

use super::http::Kube;
use super::objects::Node;
use super::{ControllersHandle, ReconcileRecord};
use client::CsApi;
use controller::ServiceController;
use reconcile::Cloud;

/// Where the simulated CloudStack is and the keys the CCM's `cloud-config` holds.
#[derive(Clone)]
pub struct CloudStackEndpoint {
    /// `http://127.0.0.1:PORT/client/api`
    pub api: String,
    pub api_key: String,
    pub secret_key: String,
}

/// Never shows the secret key.
impl std::fmt::Debug for CloudStackEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudStackEndpoint")
            .field("api", &self.api)
            .field("api_key", &self.api_key)
            .finish()
    }
}

#[derive(Debug, Clone)]
pub struct CsControllerOptions {
    /// The cluster's API.
    pub kube: Kube,
    pub cloudstack: CloudStackEndpoint,
    /// The pause between passes (see [`super::PASS_ENV`]).
    pub pass: Duration,
}

/// The CCM of one cluster, one pass at a time.
pub(crate) struct CsController {
    kube: Kube,
    api: CsApi,
    /// Read once at start, as `newCSCloud` does; `None` until the cloud answered.
    at_least_422: Option<bool>,
    services: ServiceController,
}

impl CsController {
    pub(crate) fn new(
        options: &CsControllerOptions,
        history: Arc<Mutex<Vec<ReconcileRecord>>>,
    ) -> Self {
        let kube = options.kube.clone();
        let endpoint = &options.cloudstack;
        CsController {
            api: CsApi::new(&endpoint.api, &endpoint.api_key, &endpoint.secret_key),
            services: ServiceController::new(kube.clone(), history),
            kube,
            at_least_422: None,
        }
    }

    /// Consecutive failed reconciles of `namespace/name`.
    #[cfg(test)]
    pub(crate) fn failures(&self, key: &str) -> u32 {
        self.services.failures(key)
    }

    /// Services on the nodes as they are; a failed listing skips the pass.
    /// A cluster without LoadBalancer Services costs the cloud nothing, so the cloud's
    /// request counts (skyplan's refresh-cost tests) see only what skyplan sends.
    pub(crate) async fn pass(&mut self) {
        let (Ok(raw_nodes), Ok(raw_services)) = (
            self.kube.list_nodes().await,
            self.kube.list_services().await,
        ) else {
            return;
        };
        if !self.services.has_work(&raw_services) {
            return;
        }
        let Some(at_least_422) = self.version().await else {
            return;
        };
        let nodes: Vec<Node> = raw_nodes.iter().filter_map(Node::from_json).collect();
        let cloud = Cloud {
            api: &self.api,
            at_least_422,
        };
        self.services.pass(cloud, &raw_services, &nodes).await;
    }

    async fn version(&mut self) -> Option<bool> {
        if self.at_least_422.is_none() {
            let answer = self.api.call("listCapabilities", &[]).await.ok()?;
            let version = answer["capability"]["cloudstackversion"].as_str()?;
            self.at_least_422 = Some(at_least_422(version));
        }
        self.at_least_422
    }
}

/// `strings.Split(version, ".")[0:3]` → semver ≥ 4.22.0.
fn at_least_422(version: &str) -> bool {
    let parts: Vec<u64> = version
        .split('.')
        .take(3)
        .map(|p| p.trim().parse().unwrap_or(0))
        .collect();
    let major = parts.first().copied().unwrap_or(0);
    let minor = parts.get(1).copied().unwrap_or(0);
    (major, minor) >= (4, 22)
}

/// The pause between passes: [`super::PASS_ENV`] in milliseconds, as for the cloudscale CCM.
pub fn pass_interval() -> Duration {
    super::embedded::pass_interval()
}

/// Starts the CCM of one cluster; it runs until the handle is stopped.
pub async fn start(options: CsControllerOptions) -> ControllersHandle {
    let (stop, mut stopped) = watch::channel(false);
    let (passed, passes) = watch::channel(0u64);
    let history = Arc::new(Mutex::new(Vec::new()));
    let mut controller = CsController::new(&options, history.clone());
    let pass = options.pass;
    let task = tokio::spawn(async move {
        loop {
            controller.pass().await;
            passed.send_modify(|n| *n += 1);
            tokio::select! {
                _ = tokio::time::sleep(pass) => {}
                _ = stopped.changed() => return,
            }
        }
    });
    ControllersHandle {
        stop,
        task: Some(task),
        history,
        passes,
    }
}

#[cfg(test)]
mod version_tests {
    use super::at_least_422;

    #[test]
    fn the_cidrlist_update_needs_4_22() {
        assert!(at_least_422("4.22.0.0"));
        assert!(at_least_422("4.23.1.0-SNAPSHOT"));
        assert!(!at_least_422("4.20.2.0"));
        assert!(!at_least_422("4.9.3.0"));
    }
}
