//! Deleting a controller-mode Service, for every cloud: what `--allow-delete` does to a load
//! balancer in controller mode. skyplan deletes only the Service it wrote; the cloud controller
//! then deletes the load balancer and removes its finalizer, so the Service is gone exactly
//! when the controller has finished — which apply waits for.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Service;
use kube::api::DeleteParams;

use super::connection::ClusterConnection;
use skyplan_core::model::Address;
use skyplan_core::provider::ProviderError;
use skyplan_core::state::journal::{Journal, Phase};

/// Deletes `namespace/name`, recorded in the journal before and after the call; a Service
/// already gone counts as deleted. Then waits until the controller has released it.
pub async fn delete_service_journaled(
    connection: &ClusterConnection,
    journal: &Journal,
    address: &Address,
    text: &str,
    namespace: &str,
    name: &str,
) -> Result<(), ProviderError> {
    let journal_error = |e: skyplan_core::state::StateError| ProviderError::new(address, e);
    journal
        .record(address, Phase::Intent, text, None, None)
        .map_err(journal_error)?;
    let api: kube::Api<Service> = kube::Api::namespaced(connection.client(), namespace);
    let deleted = match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => {
            let message = format!("deleting Service {namespace}/{name}: {e}");
            Err(ProviderError::new(address, message)
                .kind(super::errors::kind(&e))
                .caused_by(e))
        }
    };
    journal.checkpoint("call");
    let (phase, failure) = match &deleted {
        Ok(()) => (Phase::Done, None),
        Err(e) => (Phase::Failed, Some(e.message.clone())),
    };
    journal
        .record(address, phase, text, None, failure)
        .map_err(journal_error)?;
    deleted?;
    wait_until_gone(&api, address, namespace, name).await
}

/// Polls until the Service is gone: its finalizer holds it until the controller has deleted
/// the load balancer.
async fn wait_until_gone(
    api: &kube::Api<Service>,
    address: &Address,
    namespace: &str,
    name: &str,
) -> Result<(), ProviderError> {
    let limit = super::controller_wait_limit();
    let started = Instant::now();
    loop {
        let found = api.get_opt(name).await.map_err(|e| {
            let message = format!("reading Service {namespace}/{name}: {e}");
            ProviderError::new(address, message)
                .kind(super::errors::kind(&e))
                .caused_by(e)
        })?;
        if found.is_none() {
            return Ok(());
        }
        if started.elapsed() >= limit {
            return Err(ProviderError::new(
                address,
                format!(
                    "Service {namespace}/{name} is still there after {} s (SKYPLAN_CCM_WAIT_S): its controller has not deleted the load balancer and released the Service's finalizer",
                    limit.as_secs()
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
