//! What every client of skyplan does the same way on the wire and in its messages.

use super::ErrorKind;

/// Sent as `User-Agent` on every request, to Kubernetes and to each cloud, so that the API's
/// logs (and Kubernetes' managedFields and audit log) name skyplan and its version.
pub const USER_AGENT: &str = concat!("skyplan/", env!("CARGO_PKG_VERSION"));

/// The error and its causes down to the root, on one line (`a: b: c`): an HTTP client's own
/// message names only the request, the reason a user can act on (refused, DNS, TLS) is in its
/// causes, and callers often keep only the message. A cause whose text the line already ends
/// with is left out (an io::Error shows its inner error's text, and then has it as source).
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let more = inner.to_string();
        if !more.is_empty() && !text.ends_with(&more) {
            text = format!("{text}: {more}");
        }
        cause = inner.source();
    }
    text
}

/// The kind of failure an HTTP error status is, the same for every cloud (and Kubernetes):
/// who refused and why, whatever the body says.
pub fn status_kind(status: u16) -> ErrorKind {
    match status {
        401 => ErrorKind::Auth,
        403 => ErrorKind::Forbidden,
        404 => ErrorKind::NotFound,
        409 => ErrorKind::Conflict,
        _ => ErrorKind::Api,
    }
}

/// The kind of failure a reqwest error is: an error status by its status, a body that is not
/// what the API sends the API's, a request that could not be built skyplan's; anything else
/// never got its answer (connect, DNS, TLS, timeout, a connection lost).
pub fn reqwest_kind(error: &reqwest::Error) -> ErrorKind {
    match error.status() {
        Some(status) => status_kind(status.as_u16()),
        None if error.is_decode() => ErrorKind::Api,
        None if error.is_builder() => ErrorKind::Internal,
        None => ErrorKind::Transport,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ProviderError;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn the_causes_reach_the_root_without_repeating_themselves() {
        let root = Layer("invalid peer certificate: UnknownIssuer", None);
        let io = Layer(
            "invalid peer certificate: UnknownIssuer",
            Some(Box::new(root)),
        );
        let top = Layer("client error (Connect)", Some(Box::new(io)));
        assert_eq!(
            with_causes(&top),
            "client error (Connect): invalid peer certificate: UnknownIssuer"
        );
    }

    #[test]
    fn statuses_are_classified_alike_for_every_cloud() {
        assert_eq!(status_kind(401), ErrorKind::Auth);
        assert_eq!(status_kind(403), ErrorKind::Forbidden);
        assert_eq!(status_kind(404), ErrorKind::NotFound);
        assert_eq!(status_kind(409), ErrorKind::Conflict);
        assert_eq!(status_kind(422), ErrorKind::Api);
        assert_eq!(status_kind(503), ErrorKind::Api);
    }

    /// A port nothing listens on: bound, then released.
    fn closed_port() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_transport_error_whose_source_is_reqwests() {
        let url = format!("http://127.0.0.1:{}/v1/servers", closed_port());
        let failed = reqwest::get(&url).await.unwrap_err();
        assert_eq!(reqwest_kind(&failed), ErrorKind::Transport);
        let message = format!("listing servers: {}", with_causes(&failed));
        let error = ProviderError::new("cloudscale", &message)
            .kind(reqwest_kind(&failed))
            .caused_by(failed);
        assert_eq!(error.to_string(), format!("cloudscale: {message}"));
        let source = std::error::Error::source(&error).expect("the reqwest error");
        let reqwest = source.downcast_ref::<reqwest::Error>().expect("reqwest's");
        assert!(reqwest.is_connect(), "{reqwest:?}");
        assert_eq!(reqwest.url().map(|u| u.as_str()), Some(url.as_str()));
    }
}
