//! What every client of skyplan does the same way on the wire and in its messages.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
