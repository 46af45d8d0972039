//! Which failures are retried, and how long to wait in between.

use std::time::Duration;

use rand::Rng;

use super::error::is_transient_status;
use super::Error;

/// How failed requests are retried: exponential backoff from `first` doubling up to `max`, each
/// pause shortened by a random part of up to half so that clients that failed together do not
/// come back together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub first: Duration,
    pub max: Duration,
    /// Attempts in all, the first included.
    pub attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            first: Duration::from_millis(500),
            max: Duration::from_secs(10),
            attempts: 6,
        }
    }
}

impl RetryPolicy {
    /// The pause after failure number `failure` (0-based).
    pub fn delay(&self, failure: u32) -> Duration {
        let full = self
            .first
            .saturating_mul(2u32.saturating_pow(failure))
            .min(self.max);
        full.mul_f64(rand::rng().random_range(0.5..=1.0))
    }
}

/// Whether a command only reads (`list…`, `get…`, `query…`), so repeating it is harmless.
pub fn is_read_only(command: &str) -> bool {
    let lower = command.to_ascii_lowercase();
    ["list", "get", "query"]
        .iter()
        .any(|prefix| lower.starts_with(prefix))
}

/// Whether a failed request may be sent again. A read always may, after a rate limit, a
/// transient 5xx or a broken connection. A command that changes something only when it
/// certainly was not executed: the connection was never made, or the API limiter refused it
/// (429 comes before the command runs). Anything else may have been carried out, and the
/// caller must look before it tries again (`Error::is_uncertain`).
pub fn is_retryable(command: &str, error: &Error) -> bool {
    if error.is_rate_limited() {
        return true;
    }
    let read = is_read_only(command);
    match error {
        Error::Api { errorcode, .. } => read && is_transient_status(*errorcode),
        Error::Transport { source, .. } => source.is_connect() || (read && !source.is_builder()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(errorcode: u16) -> Error {
        Error::Api {
            command: "x".into(),
            errorcode,
            cserrorcode: None,
            text: "t".into(),
        }
    }

    #[test]
    fn reads_are_recognised_by_their_verb() {
        for read in [
            "listZones",
            "getKubernetesClusterConfig",
            "queryAsyncJobResult",
        ] {
            assert!(is_read_only(read), "{read}");
        }
        for write in [
            "createTags",
            "deleteLoadBalancerRule",
            "assignToLoadBalancerRule",
        ] {
            assert!(!is_read_only(write), "{write}");
        }
    }

    #[test]
    fn transient_errors_are_retried_for_reads_only() {
        assert!(is_retryable("listZones", &api(503)));
        assert!(!is_retryable("createTags", &api(503)));
        assert!(is_retryable("createTags", &api(429)));
        assert!(!is_retryable("listZones", &api(431)));
        assert!(!is_retryable("listZones", &api(530)));
        let unauthorized = Error::Unauthorized {
            command: "listZones".into(),
        };
        assert!(!is_retryable("listZones", &unauthorized));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let policy = RetryPolicy {
            first: Duration::from_millis(200),
            max: Duration::from_secs(5),
            attempts: 6,
        };
        for (failure, full_ms) in [
            (0, 200),
            (1, 400),
            (2, 800),
            (4, 3200),
            (5, 5000),
            (30, 5000),
        ] {
            let delay = policy.delay(failure);
            let full = Duration::from_millis(full_ms);
            assert!(delay <= full && delay >= full / 2, "{failure}: {delay:?}");
        }
    }
}
