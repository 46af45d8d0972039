//! A health monitor's `http` settings in requests: what a create fills in by default, what a
//! PATCH may change, and what either refuses.
//!
//! Monitors of other types than `http` and `https` have no HTTP settings (`"http": null` in
//! every answer; the Terraform provider's acceptance tests against the real API check that a
//! `tcp` monitor reads back without any). Yet the cloudscale CCM (1.3.0) sends `"http": {}`
//! with every `tcp` monitor it creates — the Go SDK request type holds a pointer it always
//! fills — and it works against the real cloud, so HTTP settings that set nothing are
//! accepted there and ignored. Settings that do set something on such a monitor are still
//! refused: nothing known shows the real API taking them.

use serde::Deserialize;

use super::assign;
use crate::cloudscale::api::{nullable, ApiError, ApiResult};
use crate::cloudscale::world::{HttpCheck, HttpVersion, MonitorType};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CreateHttp {
    expected_codes: Option<Vec<String>>,
    method: Option<String>,
    url_path: Option<String>,
    version: Option<HttpVersion>,
    host: Option<String>,
}

impl CreateHttp {
    /// The HTTP check a new monitor of type `kind` gets from the request's `http`.
    pub fn check_for(kind: MonitorType, http: Option<CreateHttp>) -> ApiResult<Option<HttpCheck>> {
        match (kind.checks_http(), http) {
            (true, http) => http.unwrap_or_default().into_check().map(Some),
            (false, Some(http)) if !http.sets_nothing() => Err(not_an_http_monitor()),
            (false, _) => Ok(None),
        }
    }

    fn sets_nothing(&self) -> bool {
        self.expected_codes.is_none()
            && self.method.is_none()
            && self.url_path.is_none()
            && self.version.is_none()
            && self.host.is_none()
    }

    fn into_check(self) -> ApiResult<HttpCheck> {
        let check = HttpCheck {
            expected_codes: self.expected_codes.unwrap_or_else(|| vec!["200".into()]),
            method: self.method.unwrap_or_else(|| "GET".into()),
            url_path: self.url_path.unwrap_or_else(|| "/".into()),
            version: self.version.unwrap_or(HttpVersion::V1_1),
            host: self.host,
        };
        host_needs_http_1_1(&check)?;
        Ok(check)
    }
}

#[derive(Debug, Deserialize)]
pub struct UpdateHttp {
    expected_codes: Option<Vec<String>>,
    method: Option<String>,
    url_path: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    host: Option<Option<String>>,
}

impl UpdateHttp {
    /// Applies the patch to a monitor's HTTP check (`None` for a monitor without one).
    pub fn apply(self, check: Option<&mut HttpCheck>) -> ApiResult<()> {
        let Some(check) = check else {
            return match self.sets_nothing() {
                true => Ok(()),
                false => Err(not_an_http_monitor()),
            };
        };
        let mut updated = check.clone();
        assign(&mut updated.expected_codes, self.expected_codes);
        assign(&mut updated.method, self.method);
        assign(&mut updated.url_path, self.url_path);
        assign(&mut updated.host, self.host);
        host_needs_http_1_1(&updated)?;
        *check = updated;
        Ok(())
    }

    /// An explicit `"host": null` clears nothing on a monitor without HTTP settings either.
    fn sets_nothing(&self) -> bool {
        self.expected_codes.is_none()
            && self.method.is_none()
            && self.url_path.is_none()
            && self.host.clone().flatten().is_none()
    }
}

fn not_an_http_monitor() -> ApiError {
    ApiError::bad_request("http: only http and https monitors have HTTP settings.")
}

/// A Host header is an HTTP/1.1 thing; the real API's words, as the cloudscale Ansible
/// collection's integration tests against it expect them.
fn host_needs_http_1_1(check: &HttpCheck) -> ApiResult<()> {
    match (&check.host, check.version) {
        (Some(_), HttpVersion::V1_0) => Err(ApiError::bad_request(
            "http: The host argument can not be used with HTTP version 1.0.",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(json: &str) -> CreateHttp {
        serde_json::from_str(json).unwrap()
    }

    fn update(json: &str) -> UpdateHttp {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn an_http_monitor_gets_the_defaults_for_what_it_does_not_set() {
        let check = CreateHttp::check_for(MonitorType::Http, Some(create(r#"{"host": "a"}"#)))
            .unwrap()
            .unwrap();
        assert_eq!(check.expected_codes, ["200"]);
        assert_eq!(
            (check.method.as_str(), check.url_path.as_str()),
            ("GET", "/")
        );
        assert_eq!(check.version, HttpVersion::V1_1);
        let bare = CreateHttp::check_for(MonitorType::Https, None).unwrap();
        assert_eq!(bare.unwrap().host, None);
    }

    #[test]
    fn other_types_take_http_settings_that_set_nothing_and_keep_none() {
        for kind in [MonitorType::Tcp, MonitorType::Ping, MonitorType::TlsHello] {
            for http in [None, Some(create("{}")), Some(create(r#"{"host": null}"#))] {
                assert!(CreateHttp::check_for(kind, http).unwrap().is_none());
            }
            let error =
                CreateHttp::check_for(kind, Some(create(r#"{"url_path": "/x"}"#))).unwrap_err();
            assert!(error.detail.starts_with("http:"), "{}", error.detail);
        }
        assert!(update("{}").apply(None).is_ok());
        assert!(update(r#"{"host": null}"#).apply(None).is_ok());
        assert!(update(r#"{"method": "HEAD"}"#).apply(None).is_err());
    }

    #[test]
    fn a_host_needs_http_1_1_on_create_and_on_update() {
        let error = CreateHttp::check_for(
            MonitorType::Http,
            Some(create(r#"{"version": "1.0", "host": "example.com"}"#)),
        )
        .unwrap_err();
        assert!(
            error.detail.contains("HTTP version 1.0"),
            "{}",
            error.detail
        );
        let mut check =
            CreateHttp::check_for(MonitorType::Http, Some(create(r#"{"version": "1.0"}"#)))
                .unwrap()
                .unwrap();
        assert!(update(r#"{"host": "example.com"}"#)
            .apply(Some(&mut check))
            .is_err());
        assert_eq!(check.host, None, "a refused patch changes nothing");
        update(r#"{"url_path": "/livez"}"#)
            .apply(Some(&mut check))
            .unwrap();
        assert_eq!(check.url_path, "/livez");
    }
}
