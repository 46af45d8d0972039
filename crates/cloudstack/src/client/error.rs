//! The client's one error type. Messages name the command and CloudStack's own codes and text;
//! they never contain the secret key (it is never sent, and never formatted).

use std::path::PathBuf;
use std::time::Duration;

use skyplan_core::provider::http::{reqwest_kind, status_kind, with_causes};
use skyplan_core::provider::{ErrorKind, ProviderError};

/// CloudStack's `INTERNAL_ERROR`: thrown for anything unexpected, possibly half-way through.
const INTERNAL_ERROR: u16 = 530;
/// CloudStack's `PARAM_ERROR`, also used for ids that name nothing.
const PARAM_ERROR: u16 = 431;
/// CloudStack's `ACCOUNT_ERROR`: what a permission refused is answered with.
const ACCOUNT_ERROR: u16 = 531;
/// CloudStack's `RESOURCE_IN_USE_ERROR`.
const RESOURCE_IN_USE: u16 = 536;
/// CloudStack's `NETWORK_RULE_CONFLICT_ERROR` (a rule on a port another rule holds).
const NETWORK_RULE_CONFLICT: u16 = 537;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The cloud-config file is missing, unreadable or incomplete.
    #[error("cloud-config {}: {problem}", path.display())]
    Config { path: PathBuf, problem: String },
    #[error("could not build the CloudStack API client: {0}")]
    Build(String),
    /// HTTP 401: the server could not verify the request.
    #[error(
        "CloudStack {command}: 401 unauthorized: the server could not verify the request's \
         signature; check api-key and secret-key in the cloud-config, and that this machine's \
         clock is right (a request expires 10 minutes after it is signed)"
    )]
    Unauthorized { command: String },
    /// The API answered with an error: HTTP status = `errorcode` in CloudStack's envelope, or a
    /// bare HTTP error from a proxy in front of it (`errorcode` is then the HTTP status).
    #[error("CloudStack {command}: {errorcode}{}: {text}", cs_suffix(*.cserrorcode))]
    Api {
        command: String,
        errorcode: u16,
        cserrorcode: Option<u32>,
        text: String,
    },
    /// The request failed on the way (connect, TLS, timeout, connection dropped).
    #[error("CloudStack {command}: {}", with_causes(.source))]
    Transport {
        command: String,
        #[source]
        source: reqwest::Error,
    },
    /// The answer came but is not what the API sends.
    #[error("CloudStack {command}: unexpected response: {detail}")]
    Decode { command: String, detail: String },
    /// An async job ended with jobstatus 2.
    #[error("CloudStack {command}: job {jobid} failed: {errorcode}{}: {text}", cs_suffix(*.cserrorcode))]
    JobFailed {
        command: String,
        jobid: String,
        errorcode: u16,
        cserrorcode: Option<u32>,
        text: String,
    },
    /// The job was still running when the client stopped waiting; it may still finish.
    #[error("CloudStack {command}: job {jobid} still pending after {waited:?}")]
    JobTimeout {
        command: String,
        jobid: String,
        waited: Duration,
    },
    /// The job was started but polling it failed, so its outcome is unknown.
    #[error("CloudStack {command}: job {jobid}: outcome unknown: {source}")]
    JobLost {
        command: String,
        jobid: String,
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// What kind of failure this is, for the provider error that reports it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Config { .. } => ErrorKind::Config,
            Error::Build(_) => ErrorKind::Internal,
            Error::Unauthorized { .. } => ErrorKind::Auth,
            Error::Api { .. } if self.is_not_found() => ErrorKind::NotFound,
            Error::Api { errorcode, .. } | Error::JobFailed { errorcode, .. } => {
                code_kind(*errorcode)
            }
            Error::Transport { source, .. } => reqwest_kind(source),
            Error::Decode { .. } | Error::JobTimeout { .. } => ErrorKind::Api,
            Error::JobLost { source, .. } => source.kind(),
        }
    }

    /// The provider error about `address` that reports this one: its text, its kind, and this
    /// error as the source.
    pub fn for_address(self, address: impl ToString) -> ProviderError {
        let message = self.to_string();
        self.reported(address, message)
    }

    /// The provider error about `address` whose `message` says what failed (and names this
    /// error's text): of this error's kind, with it as the source.
    pub fn reported(self, address: impl ToString, message: impl ToString) -> ProviderError {
        ProviderError::new(address, message)
            .kind(self.kind())
            .caused_by(self)
    }

    /// The CloudStack error code (HTTP status / `errorcode`, or a failed job's errorcode).
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Unauthorized { .. } => Some(401),
            Error::Api { errorcode, .. } | Error::JobFailed { errorcode, .. } => Some(*errorcode),
            Error::JobLost { source, .. } => source.code(),
            _ => None,
        }
    }

    /// Whether the call may have been carried out although it failed (5xx, connection lost
    /// after sending): a create must look for what it may have made before trying again.
    ///
    /// CloudStack's own refusals (431 parameter error, 537 rule conflict, …) are certain: the
    /// server checked and did nothing. Its 530 internal error is not: it is thrown for
    /// anything unexpected, possibly after part of the work. A failed job is certain too (it
    /// ran and ended), though a failed create may leave an object in an error state.
    pub fn is_uncertain(&self) -> bool {
        match self {
            Error::Api { errorcode, .. } => {
                *errorcode == INTERNAL_ERROR || is_transient_status(*errorcode)
            }
            Error::Transport { source, .. } => !source.is_connect() && !source.is_builder(),
            Error::Decode { .. } | Error::JobTimeout { .. } | Error::JobLost { .. } => true,
            _ => false,
        }
    }

    /// Whether the command was refused because an id names nothing (431 with the server's
    /// "entity does not exist" / "Unable to find" texts): a delete of something already gone.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Api {
                errorcode, text, ..
            } if *errorcode == PARAM_ERROR => {
                let text = text.to_lowercase();
                text.contains("entity does not exist") || text.contains("unable to find")
            }
            _ => false,
        }
    }

    /// Whether the server refused the request before executing it (API limit), so it may be
    /// sent again even if it changes something.
    pub(super) fn is_rate_limited(&self) -> bool {
        matches!(self, Error::Api { errorcode: 429, .. })
    }
}

/// HTTP statuses that mean "try again" rather than "no": a proxy or the servlet container
/// failing, not CloudStack refusing (its own 53x codes are answers).
pub(super) fn is_transient_status(status: u16) -> bool {
    matches!(status, 500 | 502 | 503 | 504)
}

/// The kind of an error code: CloudStack's own beside HTTP's.
fn code_kind(code: u16) -> ErrorKind {
    match code {
        ACCOUNT_ERROR => ErrorKind::Forbidden,
        RESOURCE_IN_USE | NETWORK_RULE_CONFLICT => ErrorKind::Conflict,
        code => status_kind(code),
    }
}

fn cs_suffix(cserrorcode: Option<u32>) -> String {
    cserrorcode
        .map(|code| format!(" (cserrorcode {code})"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(errorcode: u16, text: &str) -> Error {
        Error::Api {
            command: "createLoadBalancerRule".into(),
            errorcode,
            cserrorcode: Some(4350),
            text: text.into(),
        }
    }

    #[test]
    fn api_error_names_command_codes_and_text() {
        let error = api(537, "The range specified, 80-80, conflicts with rule 12");
        assert_eq!(
            error.to_string(),
            "CloudStack createLoadBalancerRule: 537 (cserrorcode 4350): \
             The range specified, 80-80, conflicts with rule 12"
        );
        assert_eq!(error.code(), Some(537));
        assert_eq!(error.kind(), ErrorKind::Conflict);
        assert!(!error.is_uncertain());
    }

    #[test]
    fn codes_are_classified_as_cloudstack_means_them() {
        assert_eq!(api(531, "denied").kind(), ErrorKind::Forbidden);
        assert_eq!(api(536, "in use").kind(), ErrorKind::Conflict);
        assert_eq!(
            api(431, "Unable to find rule 7").kind(),
            ErrorKind::NotFound
        );
        assert_eq!(api(431, "size must be at least 1").kind(), ErrorKind::Api);
        assert_eq!(api(530, "boom").kind(), ErrorKind::Api);
        let config = Error::Config {
            path: "cloud-config".into(),
            problem: "no api-url".into(),
        };
        assert_eq!(config.kind(), ErrorKind::Config);
    }

    #[test]
    fn the_provider_error_reports_the_text_kind_and_source() {
        let error = api(537, "conflicts with rule 12").reported("load-balancer.web", "rule: x");
        assert_eq!(error.to_string(), "load-balancer.web: rule: x");
        assert_eq!(error.kind, ErrorKind::Conflict);
        let source = std::error::Error::source(&error).expect("the client's error");
        assert!(matches!(
            source.downcast_ref::<Error>(),
            Some(Error::Api { errorcode: 537, .. })
        ));
        let whole = api(431, "bad").for_address("cloudstack");
        assert_eq!(
            whole.to_string(),
            "cloudstack: CloudStack createLoadBalancerRule: 431 (cserrorcode 4350): bad"
        );
    }

    #[test]
    fn internal_and_proxy_errors_are_uncertain() {
        assert!(api(530, "boom").is_uncertain());
        assert!(api(503, "unavailable").is_uncertain());
        assert!(!api(431, "bad").is_uncertain());
        assert!(!api(429, "limit").is_uncertain());
    }

    #[test]
    fn failed_job_is_certain_and_carries_its_code() {
        let error = Error::JobFailed {
            command: "createKubernetesCluster".into(),
            jobid: "j-1".into(),
            errorcode: 530,
            cserrorcode: None,
            text: "too small".into(),
        };
        assert_eq!(
            error.to_string(),
            "CloudStack createKubernetesCluster: job j-1 failed: 530: too small"
        );
        assert_eq!(error.code(), Some(530));
        assert!(!error.is_uncertain());
    }

    #[test]
    fn not_found_is_a_param_error_about_a_missing_entity() {
        let missing = "Invalid parameter id value=x due to incorrect long value format, \
                       or entity does not exist or due to incorrect parameter annotation";
        assert!(api(431, missing).is_not_found());
        assert!(api(431, "Unable to find load balancer rule 7").is_not_found());
        assert!(!api(431, "size must be at least 1").is_not_found());
        assert!(!api(530, missing).is_not_found());
    }

    #[test]
    fn unauthorized_points_at_keys_and_clock() {
        let error = Error::Unauthorized {
            command: "listZones".into(),
        };
        let text = error.to_string();
        assert!(text.contains("api-key and secret-key") && text.contains("clock"));
        assert_eq!(error.code(), Some(401));
        assert_eq!(error.kind(), ErrorKind::Auth);
    }
}
