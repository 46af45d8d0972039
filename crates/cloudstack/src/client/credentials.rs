//! Credentials and the INI `cloud-config` that the CloudStack CCM (and `cs`-style tools set up
//! for it) read: section `[Global]` with `api-url`, `api-key`, `secret-key`, and optionally
//! `project-id`, `zone`, `ssl-no-verify`.

use std::path::Path;

use super::{Error, Secret};

/// What a client needs to talk to one CloudStack account. Debug shows the secret as `***`.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// e.g. `https://cloud.example.com/client/api`.
    pub api_url: String,
    pub api_key: String,
    pub secret_key: Secret,
    pub project_id: Option<String>,
    pub zone: Option<String>,
    /// Skip TLS verification (a warning is logged when set).
    pub ssl_no_verify: bool,
}

impl Credentials {
    /// Credentials for `api_url` with no project, no zone and TLS verified.
    pub fn new(api_url: &str, api_key: &str, secret_key: Secret) -> Credentials {
        Credentials {
            api_url: api_url.to_string(),
            api_key: api_key.to_string(),
            secret_key,
            project_id: None,
            zone: None,
            ssl_no_verify: false,
        }
    }

    /// Reads the `[Global]` section of a cloud-config INI file. Section and key names match
    /// case-insensitively, as the CCM's gcfg parser does. `path` is used as given: a `~` must
    /// be expanded by the caller (the shell or the CLI).
    pub fn from_cloud_config(path: &Path) -> Result<Credentials, Error> {
        let problem = |problem: String| Error::Config {
            path: path.to_path_buf(),
            problem,
        };
        // No escapes: a `\` in a key is a character of the key, as for the CCM.
        let ini = ini::Ini::load_from_file_noescape(path).map_err(|error| match error {
            ini::Error::Io(io) => problem(format!("cannot read: {io}")),
            ini::Error::Parse(parse) => problem(format!("not an INI file: {parse}")),
        })?;
        let global = ini
            .iter()
            .find(|(name, _)| name.is_some_and(|name| name.eq_ignore_ascii_case("Global")))
            .map(|(_, properties)| properties)
            .ok_or_else(|| problem("no [Global] section".into()))?;
        let value = |key: &str| {
            global
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(key))
                .map(|(_, value)| value.trim().to_string())
                .filter(|value| !value.is_empty())
        };
        let required = |key: &str| {
            value(key).ok_or_else(|| problem(format!("no `{key}` in section [Global]")))
        };
        let ssl_no_verify = match value("ssl-no-verify") {
            None => false,
            Some(text) => parse_bool(&text).ok_or_else(|| {
                problem(format!(
                    "`ssl-no-verify` must be true or false, not `{text}`"
                ))
            })?,
        };
        Ok(Credentials {
            api_url: required("api-url")?,
            api_key: required("api-key")?,
            secret_key: Secret::new(required("secret-key")?),
            project_id: value("project-id"),
            zone: value("zone"),
            ssl_no_verify,
        })
    }
}

/// The spellings gcfg accepts for a bool.
fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const SECRET: &str = "s3cr3t-Key_with\\backslash";

    fn config_file(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        file
    }

    fn problem(text: &str) -> String {
        let file = config_file(text);
        let error = Credentials::from_cloud_config(file.path()).unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with(&format!("cloud-config {}: ", file.path().display())),
            "{message}"
        );
        assert!(!message.contains(SECRET));
        message
    }

    #[test]
    fn reads_the_ccm_cloud_config() {
        let file = config_file(&format!(
            "[Global]\napi-url = https://cloud.example.com/client/api\napi-key = KEY1\n\
             secret-key = {SECRET}\nproject-id = p-1\nzone = zone-a\nssl-no-verify = true\n"
        ));
        let credentials = Credentials::from_cloud_config(file.path()).unwrap();
        assert_eq!(credentials.api_url, "https://cloud.example.com/client/api");
        assert_eq!(credentials.api_key, "KEY1");
        assert_eq!(credentials.secret_key.expose(), SECRET);
        assert_eq!(credentials.project_id.as_deref(), Some("p-1"));
        assert_eq!(credentials.zone.as_deref(), Some("zone-a"));
        assert!(credentials.ssl_no_verify);
    }

    #[test]
    fn optional_keys_default_and_names_ignore_case() {
        let file = config_file(&format!(
            "[global]\nAPI-URL = http://x/client/api\nApi-Key = K\nsecret-key = {SECRET}\n"
        ));
        let credentials = Credentials::from_cloud_config(file.path()).unwrap();
        assert_eq!(credentials.api_url, "http://x/client/api");
        assert_eq!(credentials.project_id, None);
        assert_eq!(credentials.zone, None);
        assert!(!credentials.ssl_no_verify);
    }

    #[test]
    fn quoted_values_are_unquoted() {
        let file = config_file(&format!(
            "[Global]\napi-url = \"http://x/client/api\"\napi-key = \"K\"\nsecret-key = \"{SECRET}\"\n"
        ));
        let credentials = Credentials::from_cloud_config(file.path()).unwrap();
        assert_eq!(credentials.api_url, "http://x/client/api");
        assert_eq!(credentials.secret_key.expose(), SECRET);
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let credentials = Credentials::new("http://x", "K", Secret::new(SECRET));
        let debug = format!("{credentials:?}");
        assert!(!debug.contains(SECRET) && debug.contains("***"), "{debug}");
    }

    #[test]
    fn missing_pieces_are_named() {
        let message = problem("[Global]\napi-url = http://x\nsecret-key = s\n");
        assert!(
            message.ends_with("no `api-key` in section [Global]"),
            "{message}"
        );
        let message = problem("[Global]\napi-url = http://x\napi-key = k\nsecret-key =\n");
        assert!(
            message.ends_with("no `secret-key` in section [Global]"),
            "{message}"
        );
        let message = problem("[Other]\napi-url = http://x\n");
        assert!(message.ends_with("no [Global] section"), "{message}");
        let message = problem(&format!(
            "[Global]\napi-url = u\napi-key = k\nsecret-key = {SECRET}\nssl-no-verify = maybe\n"
        ));
        assert!(
            message.contains("`ssl-no-verify` must be true or false"),
            "{message}"
        );
    }

    #[test]
    fn missing_file_is_named() {
        let path = Path::new("/nonexistent/skyplan/cloud-config");
        let error = Credentials::from_cloud_config(path).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cloud-config /nonexistent/skyplan/cloud-config: cannot read"),
            "{error}"
        );
    }
}
