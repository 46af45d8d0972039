//! A provider's error about one resource: its text as the user reads it, what kind of failure
//! it is, and the error it wraps, so that a caller can act on the kind and walk the causes.

use std::sync::Arc;

use crate::config::SourceLocation;

/// What kind of failure a [`ProviderError`] is, for callers that act on it (retry a
/// transport failure, point at the config) without parsing its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorKind {
    /// A value the config writes is wrong or names what does not exist (an unknown zone).
    Config,
    /// The credentials are missing or were refused (HTTP 401).
    Auth,
    /// The credentials were accepted but may not do this (HTTP 403).
    Forbidden,
    /// What was asked for does not exist (HTTP 404, an ID the cloud does not know).
    NotFound,
    /// Something changed concurrently and the cloud refused the change (HTTP 409).
    Conflict,
    /// No answer came: connection refused, DNS, TLS, timeout, connection lost.
    Transport,
    /// The cloud answered with an error, or with what its API never sends.
    Api,
    /// A bug in skyplan: the pipeline or a provider broke its own rules.
    Internal,
    /// Not classified: the message says what happened.
    #[default]
    Other,
}

/// A provider's error about one resource. Errors about a value the config names (an unknown
/// zone) carry where the config writes it, and are shown as `file:line:col: address: message`.
/// The message already ends with the wrapped error's causes (`http::with_causes`), so that it
/// stays one searchable line; `source` keeps the error itself for callers that walk the chain.
#[derive(Debug, Clone)]
pub struct ProviderError {
    pub address: String,
    pub message: String,
    pub location: Option<SourceLocation>,
    pub kind: ErrorKind,
    /// An `Arc`, so that the error stays `Clone` (a refresh's error is reported by each target
    /// it concerns).
    pub source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl ProviderError {
    pub fn new(address: impl ToString, message: impl ToString) -> Self {
        ProviderError {
            address: address.to_string(),
            message: message.to_string(),
            location: None,
            kind: ErrorKind::Other,
            source: None,
        }
    }

    /// `inner` said about `address` (a cluster's error about the load balancer bound to it):
    /// its whole text becomes the message, its kind and source are kept.
    pub fn wrap(address: impl ToString, inner: ProviderError) -> Self {
        let message = inner.to_string();
        ProviderError {
            kind: inner.kind,
            source: inner.source,
            ..ProviderError::new(address, message)
        }
    }

    /// The error at the config's position of the value at fault: a config error, unless a
    /// kind was given before.
    pub fn at(mut self, location: &SourceLocation) -> Self {
        self.location = Some(location.clone());
        if self.kind == ErrorKind::Other {
            self.kind = ErrorKind::Config;
        }
        self
    }

    pub fn kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// The error this one wraps, returned by [`std::error::Error::source`]. (Not named
    /// `source`: an inherent method would hide that one.)
    pub fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(location) = &self.location {
            write!(f, "{location}: ")?;
        }
        write!(f, "{}: {}", self.address, self.message)
    }
}

/// By hand rather than thiserror's `#[source]`: on an `Arc` field that would return the `Arc`
/// (std makes `Arc<E>` an error too), which a caller cannot downcast to the error it wraps.
impl std::error::Error for ProviderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as _)
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;

    fn location() -> SourceLocation {
        SourceLocation {
            file: Arc::from(std::path::Path::new("skyplan.toml")),
            line: 3,
            column: 8,
        }
    }

    #[test]
    fn the_text_is_address_and_message_after_the_location() {
        let plain = ProviderError::new("load-balancer.web", "zone `zz9` does not exist");
        assert_eq!(
            plain.to_string(),
            "load-balancer.web: zone `zz9` does not exist"
        );
        assert_eq!(
            plain.at(&location()).to_string(),
            "skyplan.toml:3:8: load-balancer.web: zone `zz9` does not exist"
        );
    }

    #[test]
    fn a_located_error_is_a_config_error_unless_classified_before() {
        let plain = ProviderError::new("cluster.lab", "unknown");
        assert_eq!(plain.kind, ErrorKind::Other);
        assert_eq!(plain.clone().at(&location()).kind, ErrorKind::Config);
        let missing = plain.kind(ErrorKind::NotFound).at(&location());
        assert_eq!(missing.kind, ErrorKind::NotFound);
    }

    #[test]
    fn the_wrapped_error_is_the_source_and_can_be_downcast() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let error = ProviderError::new("cloudscale", "listing servers: refused")
            .kind(ErrorKind::Transport)
            .caused_by(io);
        assert_eq!(error.to_string(), "cloudscale: listing servers: refused");
        let source = error.source().expect("a source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("the io error");
        assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);
        assert!(ProviderError::new("cloudscale", "no source")
            .source()
            .is_none());
    }

    #[test]
    fn a_wrapped_provider_error_keeps_its_kind_and_source_under_another_address() {
        let inner = ProviderError::new("cluster.prod", "listing nodes: 403 Forbidden")
            .kind(ErrorKind::Forbidden)
            .caused_by(std::fmt::Error);
        let outer = ProviderError::wrap("load-balancer.web", inner);
        assert_eq!(
            outer.to_string(),
            "load-balancer.web: cluster.prod: listing nodes: 403 Forbidden"
        );
        assert_eq!(outer.kind, ErrorKind::Forbidden);
        assert!(outer.source().unwrap().is::<std::fmt::Error>());
    }
}
