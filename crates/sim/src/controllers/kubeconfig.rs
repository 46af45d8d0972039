//! The simulated controllers' own reading of a kubeconfig: the server, its CA and the
//! credentials of one context, turned into a [`KubeEndpoint`]. Written apart from skyplan's
//! `provider/kubernetes/connect.rs` (which hands the file to kube-rs's client) so that the
//! two sides read it independently; only the YAML types come from kube-rs.

use std::path::Path;

use base64::Engine;
use kube::config::{AuthInfo, Cluster, Kubeconfig};
use secrecy::ExposeSecret;

use super::http::{KubeEndpoint, Scope};

/// The endpoint of `context` (the file's current context when `None`) in the kubeconfig at
/// `path`, seen through `scope`. Relative file paths in it are relative to the file.
pub fn endpoint_from_kubeconfig(
    path: &Path,
    context: Option<&str>,
    scope: Scope,
) -> Result<KubeEndpoint, String> {
    let config = Kubeconfig::read_from(path)
        .map_err(|e| format!("reading the kubeconfig {}: {e}", path.display()))?;
    let (cluster, user) = context_of(&config, context)?;
    let server = cluster
        .server
        .clone()
        .ok_or("the kubeconfig's cluster has no server")?;
    Ok(KubeEndpoint {
        server,
        ca: certificate_authority(cluster)?,
        insecure_skip_tls_verify: cluster.insecure_skip_tls_verify.unwrap_or(false),
        token: token(user)?,
        identity: identity(user)?,
        scope,
    })
}

/// The cluster and user of the context; a missing one names the ones there are.
fn context_of<'c>(
    config: &'c Kubeconfig,
    context: Option<&str>,
) -> Result<(&'c Cluster, Option<&'c AuthInfo>), String> {
    let name = context
        .or(config.current_context.as_deref())
        .ok_or("the kubeconfig has no current-context: name one with --context")?;
    let found = config
        .contexts
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.context.as_ref())
        .ok_or_else(|| {
            let names: Vec<&str> = config.contexts.iter().map(|c| c.name.as_str()).collect();
            format!(
                "no context {name:?} in the kubeconfig (contexts: {})",
                names.join(", ")
            )
        })?;
    let cluster = config
        .clusters
        .iter()
        .find(|c| c.name == found.cluster)
        .and_then(|c| c.cluster.as_ref())
        .ok_or_else(|| format!("context {name:?}: no cluster {:?}", found.cluster))?;
    let user = found.user.as_ref().and_then(|user| {
        config
            .auth_infos
            .iter()
            .find(|a| &a.name == user)
            .and_then(|a| a.auth_info.as_ref())
    });
    Ok((cluster, user))
}

/// `certificate-authority-data` (base64 PEM), else the `certificate-authority` file.
fn certificate_authority(cluster: &Cluster) -> Result<Option<reqwest::Certificate>, String> {
    let pem = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => decode("certificate-authority-data", data)?,
        (None, Some(file)) => read("certificate-authority", file)?,
        (None, None) => return Ok(None),
    };
    reqwest::Certificate::from_pem(&pem)
        .map(Some)
        .map_err(|e| format!("the kubeconfig's certificate authority: {e}"))
}

/// `token`, else the first line of `tokenFile`.
fn token(user: Option<&AuthInfo>) -> Result<Option<String>, String> {
    let Some(user) = user else { return Ok(None) };
    if let Some(token) = &user.token {
        return Ok(Some(token.expose_secret().to_owned()));
    }
    match &user.token_file {
        Some(file) => {
            let text = String::from_utf8(read("tokenFile", file)?)
                .map_err(|_| "the kubeconfig's tokenFile is not text")?;
            Ok(Some(text.trim().to_owned()))
        }
        None => Ok(None),
    }
}

/// The client certificate and key (data or files) as one PEM identity.
fn identity(user: Option<&AuthInfo>) -> Result<Option<reqwest::Identity>, String> {
    let Some(user) = user else { return Ok(None) };
    let certificate = match (&user.client_certificate_data, &user.client_certificate) {
        (Some(data), _) => decode("client-certificate-data", data)?,
        (None, Some(file)) => read("client-certificate", file)?,
        (None, None) => return Ok(None),
    };
    let key = match (&user.client_key_data, &user.client_key) {
        (Some(data), _) => decode("client-key-data", data.expose_secret())?,
        (None, Some(file)) => read("client-key", file)?,
        (None, None) => return Err("the kubeconfig has a client certificate but no key".into()),
    };
    let mut pem = certificate;
    pem.push(b'\n');
    pem.extend_from_slice(&key);
    reqwest::Identity::from_pem(&pem)
        .map(Some)
        // The key's bytes never reach the message: reqwest's error names only the failure.
        .map_err(|e| format!("the kubeconfig's client certificate and key: {e}"))
}

fn decode(field: &str, data: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("the kubeconfig's {field} is not base64: {e}"))
}

fn read(field: &str, file: &str) -> Result<Vec<u8>, String> {
    std::fs::read(file).map_err(|e| format!("the kubeconfig's {field} {file}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(dir: &Path, users: &str) -> std::path::PathBuf {
        let path = dir.join("config");
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: a\n\
             clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n    insecure-skip-tls-verify: true\n\
             contexts:\n- name: a\n  context: {{cluster: c, user: u}}\n- name: b\n  context: {{cluster: c}}\n\
             users:\n{users}"
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_current_context_gives_the_server_and_token_and_never_shows_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = kubeconfig(dir.path(), "- name: u\n  user: {token: s3cret}\n");
        let endpoint = endpoint_from_kubeconfig(&path, None, Scope::default()).unwrap();
        assert_eq!(endpoint.server, "https://127.0.0.1:6443");
        assert_eq!(endpoint.token.as_deref(), Some("s3cret"));
        assert!(endpoint.insecure_skip_tls_verify);
        assert!(!format!("{endpoint:?}").contains("s3cret"));
        let other = endpoint_from_kubeconfig(&path, Some("b"), Scope::default()).unwrap();
        assert_eq!(other.token, None, "context b has no user");
    }

    #[test]
    fn a_token_file_is_read_relative_to_the_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "from-file\n").unwrap();
        let path = kubeconfig(dir.path(), "- name: u\n  user: {tokenFile: token}\n");
        let endpoint = endpoint_from_kubeconfig(&path, None, Scope::default()).unwrap();
        assert_eq!(endpoint.token.as_deref(), Some("from-file"));
    }

    #[test]
    fn a_missing_context_lists_the_contexts() {
        let dir = tempfile::tempdir().unwrap();
        let path = kubeconfig(dir.path(), "- name: u\n  user: {token: t}\n");
        let error = endpoint_from_kubeconfig(&path, Some("nope"), Scope::default()).unwrap_err();
        assert!(
            error.contains("\"nope\"") && error.contains("a, b"),
            "{error}"
        );
    }

    #[test]
    fn a_bad_certificate_authority_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\ncurrent-context: a\n\
             clusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority-data: '%%%'}\n\
             contexts:\n- name: a\n  context: {cluster: c}\nusers: []\n",
        )
        .unwrap();
        let error = endpoint_from_kubeconfig(&path, None, Scope::default()).unwrap_err();
        assert!(error.contains("certificate-authority-data"), "{error}");
    }
}
