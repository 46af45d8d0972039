//! The pod's own service account, as kube's in-cluster config reads it: the API server from
//! KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, and the token, CA and namespace the
//! kubelet mounts under /var/run/secrets/kubernetes.io/serviceaccount/. kube's
//! `Config::incluster()` reads that fixed directory; this reads it from a directory tests can
//! point elsewhere, and says everything that is absent when skyplan is not in a pod.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use skyplan_core::provider::http::with_causes;

/// Where the kubelet mounts the service account.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// For tests only: a directory to read the service account from instead of
/// [`SERVICE_ACCOUNT_DIR`] (a real pod never sets it).
pub const SERVICE_ACCOUNT_DIR_ENV: &str = "SKYPLAN_TEST_SERVICE_ACCOUNT_DIR";

/// The client configuration and namespace of the pod's service account.
pub struct InCluster {
    pub config: kube::Config,
    pub namespace: String,
}

/// The service account of the pod skyplan runs in; an error naming every piece that is absent.
pub async fn in_cluster() -> Result<InCluster, String> {
    let dir = std::env::var_os(SERVICE_ACCOUNT_DIR_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(SERVICE_ACCOUNT_DIR));
    let found = Found::read(&dir);
    let (Some(server), Some(namespace)) = (found.server.clone(), found.namespace.clone()) else {
        return Err(found.absent());
    };
    if !found.absent.is_empty() {
        return Err(found.absent());
    }
    let kubeconfig = service_account_kubeconfig(&server, &dir)?;
    // The token is read from its file and re-read as the kubelet rotates it.
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("the pod's service account: {}", with_causes(&e)))?;
    Ok(InCluster { config, namespace })
}

/// What the environment and the directory hold, and what they lack.
struct Found {
    server: Option<String>,
    namespace: Option<String>,
    absent: Vec<String>,
}

impl Found {
    fn read(dir: &Path) -> Found {
        let mut absent = Vec::new();
        let mut var = |name: &str| match std::env::var(name) {
            Ok(value) if !value.trim().is_empty() => Some(value.trim().to_string()),
            _ => {
                absent.push(format!("{name} is not set"));
                None
            }
        };
        let (host, port) = (
            var("KUBERNETES_SERVICE_HOST"),
            var("KUBERNETES_SERVICE_PORT"),
        );
        for file in ["token", "ca.crt"] {
            if !dir.join(file).is_file() {
                absent.push(format!("{} is absent", dir.join(file).display()));
            }
        }
        let namespace = std::fs::read_to_string(dir.join("namespace"))
            .ok()
            .map(|text| text.trim().to_string())
            .filter(|text| !text.is_empty());
        if namespace.is_none() {
            absent.push(format!("{} is absent", dir.join("namespace").display()));
        }
        let server = host.zip(port).map(|(host, port)| server_url(&host, &port));
        Found {
            server,
            namespace,
            absent,
        }
    }

    fn absent(&self) -> String {
        format!(
            "in-cluster = true, but this is not a pod with a service account: {}",
            self.absent.join("; ")
        )
    }
}

/// `https://HOST:PORT`, an IPv6 host in brackets.
fn server_url(host: &str, port: &str) -> String {
    match host.contains(':') {
        true => format!("https://[{host}]:{port}"),
        false => format!("https://{host}:{port}"),
    }
}

/// A kubeconfig naming the service account's files, so that kube reads the CA and the token
/// (and re-reads a rotated token) as it does for any kubeconfig.
fn service_account_kubeconfig(server: &str, dir: &Path) -> Result<Kubeconfig, String> {
    let path = |file: &str| dir.join(file).display().to_string();
    let yaml = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "in-cluster", "cluster": {
            "server": server, "certificate-authority": path("ca.crt")}}],
        "users": [{"name": "service-account", "user": {"tokenFile": path("token")}}],
        "contexts": [{"name": "in-cluster", "context": {
            "cluster": "in-cluster", "user": "service-account"}}],
        "current-context": "in-cluster",
    });
    serde_json::from_value(yaml).map_err(|e| format!("the pod's service account: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_service_host_is_bracketed() {
        assert_eq!(server_url("10.96.0.1", "443"), "https://10.96.0.1:443");
        assert_eq!(server_url("fd00::1", "443"), "https://[fd00::1]:443");
    }

    #[test]
    fn every_absent_piece_is_named() {
        let dir = std::path::Path::new("/nonexistent/serviceaccount");
        let read = Found::read(dir);
        let message = read.absent();
        for piece in ["token", "ca.crt", "namespace"] {
            let path = dir.join(piece).display().to_string();
            assert!(message.contains(&path), "{path} missing from: {message}");
        }
    }

    #[test]
    fn the_kubeconfig_names_the_token_and_ca_files() {
        let config = service_account_kubeconfig("https://10.0.0.1:443", Path::new("/sa")).unwrap();
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.certificate_authority.as_deref(), Some("/sa/ca.crt"));
        let user = config.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.token_file.as_deref(), Some("/sa/token"));
    }
}
