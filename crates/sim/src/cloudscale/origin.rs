//! The base URL a response's `href`s start with: the one the client reached the simulator at,
//! not the address it listens on. A client behind a port-forward (`kubectl port-forward`, an
//! SSH tunnel) or a proxy follows `href`s, and the listen address is no use to it. The host is
//! the request's (`X-Forwarded-Host` from a proxy, else `Host`, else the HTTP/2 authority); the
//! scheme `https` only when a proxy says so in `X-Forwarded-Proto`, since the simulator itself
//! serves plain HTTP. A request that names no usable host gets the listen address.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::header::HOST;
use axum::http::request::Parts;
use axum::http::uri::Authority;
use axum::http::HeaderMap;

/// `Some("http://HOST/v1")` when the request names its host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin(Option<String>);

impl Origin {
    /// The base for this request, `listen` if it named none.
    pub fn base_or(&self, listen: &str) -> String {
        self.0.clone().unwrap_or_else(|| listen.to_owned())
    }

    fn of(parts: &Parts) -> Origin {
        let named = first(&parts.headers, "x-forwarded-host")
            .or_else(|| first(&parts.headers, HOST.as_str()))
            .map(str::to_owned)
            .or_else(|| parts.uri.authority().map(|a| a.to_string()));
        let host = named.and_then(|host| host.parse::<Authority>().ok());
        let scheme = match first(&parts.headers, "x-forwarded-proto") {
            Some(proto) if proto.eq_ignore_ascii_case("https") => "https",
            _ => "http",
        };
        // Credentials in an authority (`user@host`) have no place in an href.
        let host = host.filter(|host| !host.as_str().contains('@'));
        Origin(host.map(|host| format!("{scheme}://{host}/v1")))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Origin {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Origin::of(parts))
    }
}

/// The first value of a header that proxies may have appended to (`a, b`), trimmed.
fn first<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let value = headers.get(name)?.to_str().ok()?;
    let first = value.split(',').next()?.trim();
    (!first.is_empty()).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn origin(uri: &str, headers: &[(&str, &str)]) -> Origin {
        let mut request = Request::builder().uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Origin::of(&request.body(()).unwrap().into_parts().0)
    }

    const LISTEN: &str = "http://127.0.0.1:9000/v1";

    #[test]
    fn the_host_header_names_the_base() {
        let seen = origin("/v1/servers", &[("host", "localhost:8080")]);
        assert_eq!(seen.base_or(LISTEN), "http://localhost:8080/v1");
    }

    #[test]
    fn a_proxy_names_host_and_scheme() {
        let headers = [
            ("host", "127.0.0.1:9000"),
            ("x-forwarded-host", "api.example.test, inner.proxy"),
            ("x-forwarded-proto", "https"),
        ];
        let seen = origin("/v1/servers", &headers);
        assert_eq!(seen.base_or(LISTEN), "https://api.example.test/v1");
    }

    #[test]
    fn the_http2_authority_serves_without_a_host_header() {
        let seen = origin("http://[::1]:8443/v1/servers", &[]);
        assert_eq!(seen.base_or(LISTEN), "http://[::1]:8443/v1");
    }

    #[test]
    fn no_usable_host_falls_back_to_the_listen_address() {
        for headers in [
            &[][..],
            &[("host", "not a host")][..],
            &[("host", "user@evil.test")][..],
        ] {
            assert_eq!(origin("/v1/servers", headers).base_or(LISTEN), LISTEN);
        }
    }
}
