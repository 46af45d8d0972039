//! What one refresh read, which the pipeline hands back to plan, drift, import and apply: the
//! provider keeps none of it between calls.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::adopt::SurveyedServices;
use super::binding::ClusterView;
use super::diff::PROVIDER;
use super::indexed::IndexedSnapshot;
use super::servers::ServerObject;
use skyplan_core::model::Address;
use skyplan_core::provider::{ProviderError, Refreshed};

#[derive(Default)]
pub struct Live {
    /// The load balancers asked about and the catalog, looked up by UUID and owner tag.
    pub snapshot: IndexedSnapshot,
    /// The account's servers, read when a Service-bound load balancer is among the targets
    /// (empty otherwise: nothing else is planned from them).
    pub servers: Arc<Vec<ServerObject>>,
    /// The cluster of each Service-bound target as read, or why it could not be read (an
    /// error reported when the plan needs it).
    pub views: BTreeMap<Address, Result<ClusterView, ProviderError>>,
    /// Every Service of each connected cluster, by the cluster's address: read only by a
    /// survey (discovery), empty after a refresh.
    pub services: SurveyedServices,
}

impl Live {
    pub fn of(refreshed: &Refreshed) -> Result<&Live, ProviderError> {
        refreshed.downcast_ref(PROVIDER)
    }

    /// What refresh read of the cluster of the load balancer at `address`.
    pub fn view(&self, address: &Address) -> Result<&ClusterView, ProviderError> {
        match self.views.get(address) {
            Some(Ok(view)) => Ok(view),
            Some(Err(e)) => Err(e.clone()),
            None => Err(ProviderError::new(
                address,
                "the cluster was not read for this load balancer",
            )),
        }
    }
}
