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

#[cfg(test)]
pub mod recording {
    //! A local HTTP server that records what each request carried, as the server received it.

    use std::sync::{Arc, Mutex};

    use axum::extract::Request;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    use axum::Router;

    /// One request as received: its path and its User-Agent header.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Received {
        pub path: String,
        pub user_agent: Option<String>,
    }

    pub struct Recorder {
        pub url: String,
        received: Arc<Mutex<Vec<Received>>>,
    }

    impl Recorder {
        pub fn received(&self) -> Vec<Received> {
            self.received.lock().unwrap().clone()
        }
    }

    /// Serves on a free local port; each request is recorded and answered `answer(path)`
    /// (status, JSON body).
    pub async fn serve(answer: fn(&str) -> (u16, serde_json::Value)) -> Recorder {
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let app = Router::new().fallback(move |request: Request| {
            let log = log.clone();
            async move {
                let path = request.uri().path().to_owned();
                let user_agent = request
                    .headers()
                    .get(axum::http::header::USER_AGENT)
                    .map(|value| value.to_str().unwrap_or("(not text)").to_owned());
                log.lock().unwrap().push(Received {
                    path: path.clone(),
                    user_agent,
                });
                let (status, body) = answer(&path);
                let status = StatusCode::from_u16(status).unwrap();
                (status, axum::Json(body)).into_response()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Recorder {
            url: format!("http://{address}"),
            received,
        }
    }

    /// Asserts that there were requests and each carried `skyplan/<version>`.
    pub fn assert_skyplan_agent(received: &[Received]) {
        assert!(!received.is_empty(), "no request was received");
        let expected = format!("skyplan/{}", env!("CARGO_PKG_VERSION"));
        assert_eq!(super::USER_AGENT, expected);
        for request in received {
            assert_eq!(
                request.user_agent.as_deref(),
                Some(expected.as_str()),
                "{request:?}"
            );
        }
    }
}
