//! The client credentials, read as the PhoenixNAP CCM reads them (`phoenixnap/config.go`): an
//! environment variable that is set and not empty wins over the `cloud-sa.json` field.

use std::path::Path;

use serde::Deserialize;

use skyplan_core::model::Secret;

pub const CLIENT_ID_ENV: &str = "PNAP_CLIENT_ID";
pub const CLIENT_SECRET_ENV: &str = "PNAP_CLIENT_SECRET";

#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub client_id: String,
    pub client_secret: Secret,
}

/// Never shows the secret.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .finish()
    }
}

/// The CCM's secret file: `{"clientID": "...", "clientSecret": "..."}` (other fields ignored).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CloudSa {
    #[serde(rename = "clientID", default)]
    client_id: String,
    #[serde(default)]
    client_secret: String,
}

impl Credentials {
    /// From PNAP_CLIENT_ID / PNAP_CLIENT_SECRET, each falling back to `cloud_sa` when unset or
    /// empty. The error names what is missing, never a value.
    pub fn load(cloud_sa: Option<&Path>) -> Result<Credentials, String> {
        Self::load_with(cloud_sa, |name| std::env::var(name).ok())
    }

    fn load_with(
        cloud_sa: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Credentials, String> {
        let file = match cloud_sa {
            Some(path) => read_cloud_sa(path)?,
            None => CloudSa::default(),
        };
        let pick = |name: &str, fallback: String| {
            env(name)
                .filter(|v| !v.trim().is_empty())
                .unwrap_or(fallback)
        };
        let client_id = pick(CLIENT_ID_ENV, file.client_id);
        let client_secret = pick(CLIENT_SECRET_ENV, file.client_secret);
        let source = match cloud_sa {
            Some(path) => format!("{CLIENT_ID_ENV}/{CLIENT_SECRET_ENV} or {}", path.display()),
            None => format!(
                "{CLIENT_ID_ENV}/{CLIENT_SECRET_ENV} (or cloud-sa-json in [provider.phoenixnap])"
            ),
        };
        if client_id.trim().is_empty() {
            return Err(format!("no PhoenixNAP client id: set {source}"));
        }
        if client_secret.trim().is_empty() {
            return Err(format!("no PhoenixNAP client secret: set {source}"));
        }
        Ok(Credentials {
            client_id,
            client_secret: Secret::new(client_secret),
        })
    }
}

/// Errors name the file and what is wrong, never its content (it holds the secret).
fn read_cloud_sa(path: &Path) -> Result<CloudSa, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not the CCM's cloud-sa.json ({{\"clientID\", \"clientSecret\"}}): line {}, column {}",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_environment_wins_over_the_file_unless_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cloud-sa.json");
        std::fs::write(
            &path,
            r#"{"clientID":"file-id","clientSecret":"file-secret"}"#,
        )
        .unwrap();
        let both = Credentials::load_with(
            Some(&path),
            env(&[(CLIENT_ID_ENV, "env-id"), (CLIENT_SECRET_ENV, "")]),
        )
        .unwrap();
        assert_eq!(both.client_id, "env-id");
        assert_eq!(both.client_secret.expose(), "file-secret");
    }

    #[test]
    fn missing_credentials_say_where_to_put_them() {
        let error = Credentials::load_with(None, env(&[(CLIENT_ID_ENV, "id")])).unwrap_err();
        assert!(error.contains("client secret"), "{error}");
        assert!(error.contains(CLIENT_SECRET_ENV), "{error}");
    }

    #[test]
    fn a_broken_file_is_named_without_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cloud-sa.json");
        std::fs::write(&path, r#"{"clientID":"id","clientSecret":"s3cret",}"#).unwrap();
        let error = Credentials::load_with(Some(&path), env(&[])).unwrap_err();
        assert!(error.contains("cloud-sa.json"), "{error}");
        assert!(!error.contains("s3cret"), "{error}");
    }

    #[test]
    fn debug_hides_the_secret() {
        let credentials = Credentials {
            client_id: "id".into(),
            client_secret: Secret::new("s3cret"),
        };
        assert!(!format!("{credentials:?}").contains("s3cret"));
    }
}
