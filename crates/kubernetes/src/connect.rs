//! Connecting to a cluster: a kubeconfig file and context with kubectl's rules, the pod's
//! service account, or the embedded cluster; either way a kube client whose requests are counted.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use http::header::{HeaderValue, USER_AGENT};
use kube::client::ClientBuilder;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::connection::ClusterConnection;
use super::embedded::EmbeddedClusters;
use super::kubeconfig::{check_context, chosen};
use crate::spec::KubeAccess;
use skyplan_core::model::{Address, Secret};
use skyplan_core::provider::http::with_causes;
use skyplan_core::provider::{Companion, ErrorKind, ProviderError};

/// Connects to the cluster at `address` the way its config says.
pub async fn connect(
    address: &Address,
    access: &KubeAccess,
    state_dir: &Path,
    embedded: Option<&dyn EmbeddedClusters>,
) -> Result<ClusterConnection, ProviderError> {
    let error = |message: String| ProviderError::new(address, message);
    // The kubeconfig and context the config names, or kubectl's default.
    let config_error = |message: String| error(message).kind(ErrorKind::Config);
    let (config, embedded) = match access {
        KubeAccess::Kubeconfig { path, context } => {
            let (kubeconfig, options, _) =
                chosen(path.as_deref(), context.as_deref()).map_err(config_error)?;
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| {
                    config_error(format!("kubeconfig: {}", with_causes(&e))).caused_by(e)
                })?;
            (config, None)
        }
        KubeAccess::InCluster => {
            let pod = crate::incluster::in_cluster().await.map_err(config_error)?;
            (pod.config, None)
        }
        KubeAccess::Embedded => {
            let dir = state_dir.join("embedded").join("kubernetes");
            std::fs::create_dir_all(&dir)
                .map_err(|e| error(format!("cannot create {}: {e}", dir.display())))?;
            // The cloud name: an instance's (`prod["a"]`) has no quotes or brackets for a file
            // name to carry (`prod-a.json`).
            let world = dir.join(format!("{}.json", address.cloud_name()));
            let Some(embedded) = embedded else {
                return Err(error("no embedded cluster can be started here".to_owned()));
            };
            let cluster = embedded
                .start(world)
                .await
                .map_err(|e| error(format!("starting the embedded cluster: {e}")))?;
            let url = cluster
                .url
                .parse()
                .map_err(|e| error(format!("the embedded cluster's URL: {e}")))?;
            (kube::Config::new(url), Some(cluster.companion))
        }
    };
    counted(address, config, embedded)
}

/// Connects with a kubeconfig handed over by a cloud (a CKS cluster's, from
/// `getKubernetesClusterConfig`), its current context.
pub async fn connect_with_kubeconfig(
    address: &Address,
    kubeconfig: &Secret,
) -> Result<ClusterConnection, ProviderError> {
    // The cloud gave a kubeconfig its client cannot use.
    let error = |message: String| ProviderError::new(address, message).kind(ErrorKind::Api);
    let parsed = Kubeconfig::from_yaml(kubeconfig.expose()).map_err(|e| {
        error(format!("the cluster's kubeconfig: {}", with_causes(&e))).caused_by(e)
    })?;
    check_context(&parsed, None, "the cluster's kubeconfig").map_err(error)?;
    let config = kube::Config::from_custom_kubeconfig(parsed, &KubeConfigOptions::default())
        .await
        .map_err(|e| {
            error(format!("the cluster's kubeconfig: {}", with_causes(&e))).caused_by(e)
        })?;
    counted(address, config, None)
}

/// A connection whose requests are counted by a layer under the client, and say who sends
/// them (`User-Agent`).
fn counted(
    address: &Address,
    mut config: kube::Config,
    embedded: Option<Companion>,
) -> Result<ClusterConnection, ProviderError> {
    let error = |message: String| ProviderError::new(address, message);
    let server = shown(&config.cluster_url);
    config.headers.push((
        USER_AGENT,
        HeaderValue::from_static(skyplan_core::provider::http::USER_AGENT),
    ));
    let requests = Arc::new(AtomicU64::new(0));
    let counter = requests.clone();
    let count =
        tower::util::MapRequestLayer::new(move |request: http::Request<kube::client::Body>| {
            counter.fetch_add(1, Ordering::Relaxed);
            request
        });
    let client = ClientBuilder::try_from(config)
        .map_err(|e| error(format!("building the client: {}", with_causes(&e))))?
        .with_layer(&count)
        .build();
    Ok(ClusterConnection::counted(
        address.clone(),
        client,
        server,
        requests,
        embedded,
    ))
}

/// The server's URL as messages show it: without a path's trailing `/`, and without any
/// user:password a kubeconfig may have put in it.
fn shown(url: &http::Uri) -> String {
    let scheme = url
        .scheme_str()
        .map(|s| format!("{s}://"))
        .unwrap_or_default();
    let host = url
        .authority()
        .map_or("", |a| a.as_str().rsplit('@').next().unwrap_or(""));
    format!("{scheme}{host}{}", url.path().trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_server_is_shown_without_credentials() {
        let url = "https://admin:s3cret@k8s.example:6443/".parse().unwrap();
        assert_eq!(super::shown(&url), "https://k8s.example:6443");
        let url = "http://127.0.0.1:8080/prefix/".parse().unwrap();
        assert_eq!(super::shown(&url), "http://127.0.0.1:8080/prefix");
    }
}
