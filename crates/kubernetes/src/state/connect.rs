//! The backend's client: a kubeconfig and context with kubectl's rules, or the pod's service
//! account; and the namespace, from the config or (in a pod) the service account's.

use http::header::{HeaderValue, USER_AGENT};
use kube::Client;

use skyplan_core::config::KubernetesAccess;
use skyplan_core::provider::http::with_causes;

use crate::incluster::in_cluster;
use crate::kubeconfig::chosen;

/// A connected client, the namespace it works in and the server, for messages.
pub(super) struct Connected {
    pub client: Client,
    pub namespace: String,
    pub server: String,
}

/// Must run on the runtime that will drive the client (it spawns its connection's tasks).
pub(super) async fn connect(
    access: &KubernetesAccess,
    namespace: Option<String>,
) -> Result<Connected, String> {
    let (mut config, pod_namespace) = match access {
        KubernetesAccess::InCluster => {
            let pod = in_cluster().await?;
            (pod.config, Some(pod.namespace))
        }
        KubernetesAccess::Kubeconfig { path, context } => {
            let (kubeconfig, options, origin) = chosen(path.as_deref(), context.as_deref())?;
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| format!("{origin}: {}", with_causes(&e)))?;
            (config, None)
        }
    };
    let namespace = namespace
        .or(pod_namespace)
        .unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string();
    config.headers.push((
        USER_AGENT,
        HeaderValue::from_static(skyplan_core::provider::http::USER_AGENT),
    ));
    let client = Client::try_from(config)
        .map_err(|e| format!("building the client: {}", with_causes(&e)))?;
    Ok(Connected {
        client,
        namespace,
        server: server.trim_end_matches('/').to_string(),
    })
}
