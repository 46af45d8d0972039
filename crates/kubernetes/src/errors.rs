//! kube errors as a user can act on them: the API's Status as `<code> <reason>: <message>`
//! (kubectl's `Error from server (NotFound): …`, without a Debug dump), a request that never
//! reached the server as `cannot connect to <server>: <root cause>` (refused, DNS, TLS).

use std::error::Error;

use kube::core::Status;

use skyplan_core::provider::http::{status_kind, with_causes};
use skyplan_core::provider::ErrorKind;

/// kube-client's reason for an error body that is not a Status (a proxy's HTML, plain text).
const UNPARSED: &str = "Failed to parse error data";

/// A body that is not a Status is shown up to this many characters.
const MAX_BODY: usize = 300;

/// `error` on one line, naming `server` when the connection could not be made.
pub fn describe(error: &kube::Error, server: &str) -> String {
    match error {
        kube::Error::Api(status) => status_line(status),
        kube::Error::Service(inner) => transport(inner.as_ref(), server),
        kube::Error::HyperError(inner) => transport(inner, server),
        other => with_causes(other),
    }
}

/// What kind of failure `error` is: the API's Status by its code, a request that got no answer
/// a transport failure, credentials the client could not use (an exec plugin, a token file)
/// an auth one, a kubeconfig it could not use a config one.
pub fn kind(error: &kube::Error) -> ErrorKind {
    match error {
        kube::Error::Api(status) => status_kind(status.code),
        kube::Error::Service(_) | kube::Error::HyperError(_) => ErrorKind::Transport,
        kube::Error::Auth(_) => ErrorKind::Auth,
        kube::Error::SerdeError(_) => ErrorKind::Api,
        kube::Error::InferConfig(_) | kube::Error::InferKubeconfig(_) => ErrorKind::Config,
        _ => ErrorKind::Other,
    }
}

/// `401 Unauthorized: Unauthorized`, `404 NotFound: namespaces "nons" not found`.
pub fn status_line(status: &Status) -> String {
    let reason = match status.reason.as_str() {
        "" | UNPARSED => http::StatusCode::from_u16(status.code)
            .ok()
            .and_then(|code| code.canonical_reason())
            .unwrap_or("error")
            .replace(' ', ""),
        reason => reason.to_owned(),
    };
    let message: String = status
        .message
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match message.chars().count() {
        0 => format!("{} {reason}", status.code),
        n if n > MAX_BODY => {
            let cut: String = message.chars().take(MAX_BODY).collect();
            format!("{} {reason}: {cut}…", status.code)
        }
        _ => format!("{} {reason}: {message}", status.code),
    }
}

/// A transport failure: a connection that could not be made names the server and the root
/// cause; anything else (a connection lost mid-answer, a timeout) shows its causes.
fn transport(error: &(dyn Error + 'static), server: &str) -> String {
    let mut layer = Some(error);
    while let Some(current) = layer {
        if let Some(client) = current.downcast_ref::<hyper_util::client::legacy::Error>() {
            if client.is_connect() {
                let root = client
                    .source()
                    .map_or_else(|| client.to_string(), with_causes);
                return format!("cannot connect to {server}: {root}");
            }
        }
        layer = current.source();
    }
    with_causes(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str, message: &str) -> kube::Error {
        let mut status = Status::failure(message, reason).with_code(code);
        status.metadata = Some(Default::default());
        kube::Error::Api(status.boxed())
    }

    #[test]
    fn a_status_reads_code_reason_message() {
        let not_found = status(404, "NotFound", "namespaces \"nons\" not found");
        assert_eq!(
            describe(&not_found, "https://k"),
            "404 NotFound: namespaces \"nons\" not found"
        );
        let unauthorized = status(401, "Unauthorized", "Unauthorized");
        assert_eq!(
            describe(&unauthorized, "https://k"),
            "401 Unauthorized: Unauthorized"
        );
        assert_eq!(
            describe(&status(403, "Forbidden", ""), "https://k"),
            "403 Forbidden"
        );
    }

    #[test]
    fn a_status_is_classified_by_its_code() {
        assert_eq!(kind(&status(401, "Unauthorized", "")), ErrorKind::Auth);
        assert_eq!(kind(&status(403, "Forbidden", "")), ErrorKind::Forbidden);
        assert_eq!(kind(&status(404, "NotFound", "")), ErrorKind::NotFound);
        assert_eq!(kind(&status(409, "Conflict", "")), ErrorKind::Conflict);
        assert_eq!(kind(&status(422, "Invalid", "")), ErrorKind::Api);
    }

    #[test]
    fn a_body_that_is_not_a_status_is_shown_short_under_the_http_reason() {
        let html = format!("<html>\n<body>{}</body></html>", "x".repeat(1000));
        let text = describe(&status(502, UNPARSED, &html), "https://k");
        assert!(
            text.starts_with("502 BadGateway: <html> <body>xxx"),
            "{text}"
        );
        assert!(text.chars().count() < MAX_BODY + 20, "{text}");
    }

    #[tokio::test]
    async fn a_refused_connection_names_the_server_and_the_root_cause() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let client = kube::Client::try_from(kube::Config::new(server.parse().unwrap())).unwrap();
        let api: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(client);
        let error = api.list(&Default::default()).await.unwrap_err();
        let text = describe(&error, &server);
        assert!(
            text.starts_with(&format!("cannot connect to {server}: ")),
            "{text}"
        );
        assert!(text.contains("onnection refused"), "{text}");
        assert_eq!(kind(&error), ErrorKind::Transport);
    }

    /// What a provider reports of a failed request: its line as before, its kind, and the
    /// kube error itself as the source.
    #[tokio::test]
    async fn a_failed_request_is_the_source_of_the_connections_error() {
        use skyplan_core::model::{Address, ResourceKind};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let client = kube::Client::try_from(kube::Config::new(server.parse().unwrap())).unwrap();
        let address = Address::new(ResourceKind::Cluster, "prod");
        let connection = crate::connection::ClusterConnection::new(address, client);
        let error = connection.nodes().await.unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cluster.prod: listing nodes: cannot connect to"),
            "{error}"
        );
        assert_eq!(error.kind, ErrorKind::Transport);
        let source = std::error::Error::source(&error).expect("the kube error");
        assert!(source.downcast_ref::<kube::Error>().is_some(), "{source:?}");
    }
}
