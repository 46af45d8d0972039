//! Request signing exactly as the CloudStack server verifies it (`ApiServer.verifyRequest`):
//! parameter names sorted case-sensitively and left literal, values encoded like Java's
//! `URLEncoder` with `+` turned into `%20`, the whole string lower-cased, HMAC-SHA1 with the
//! secret key, standard padded Base64.

use std::collections::BTreeMap;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha1::Sha1;

use super::Secret;

/// How long a signed request stays valid. The server refuses requests whose `expires` has
/// passed, and (with `enforce.post.requests.and.timestamps`) those more than 15 minutes ahead.
pub const VALIDITY: jiff::SignedDuration = jiff::SignedDuration::from_mins(10);

/// `expires` for a request signed at `now`: `now` + [`VALIDITY`], spelled like `cs` does
/// (`2030-01-01T00:00:00+0000`), one of the formats `DateUtil.parseTZDateString` accepts.
pub fn expires_at(now: jiff::Timestamp) -> String {
    let expiry = now
        .saturating_add(VALIDITY)
        .expect("10 minutes is a valid span");
    expiry
        .to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%Y-%m-%dT%H:%M:%S+0000")
        .to_string()
}

/// One value encoded the way `URLEncoder.encode(value, "UTF-8").replaceAll("\\+", "%20")`
/// does: only `A-Z a-z 0-9 . - * _` stay literal; every other UTF-8 byte becomes `%XX`.
/// Unlike most URL libraries this encodes `~`, which is where `cs` and the server disagree.
pub fn java_url_encode(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'*' | b'_') {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// The string the server signs: `name=encoded(value)` joined with `&` in the sorted order of
/// the names (a `BTreeMap` sorts by bytes, as Java's `String.compareTo` does for the ASCII
/// names CloudStack uses), `signature` left out, then lower-cased as a whole.
pub fn canonical_string(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .filter(|(name, _)| !name.eq_ignore_ascii_case("signature"))
        .map(|(name, value)| format!("{name}={}", java_url_encode(value)))
        .collect::<Vec<_>>()
        .join("&")
        .to_lowercase()
}

/// The request's `signature` (before it is URL-encoded into the request).
pub fn signature(params: &BTreeMap<String, String>, secret: &Secret) -> String {
    let mut mac = Hmac::<Sha1>::new_from_slice(secret.expose().as_bytes())
        .expect("HMAC accepts keys of any length");
    mac.update(canonical_string(params).as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// The `application/x-www-form-urlencoded` body of a signed request: every parameter plus its
/// `signature`, names and values encoded (the server decodes both before it checks).
pub fn signed_form_body(params: &BTreeMap<String, String>, secret: &Secret) -> String {
    let signature = signature(params, secret);
    params
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .chain([("signature", signature.as_str())])
        .map(|(name, value)| format!("{}={}", java_url_encode(name), java_url_encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret() -> Secret {
        Secret::new("SECRETkey456")
    }

    /// The research vectors' parameters (§4.3): `apiKey` and `response` are in every one.
    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        [("apiKey", "APIKEY123"), ("response", "json")]
            .iter()
            .chain(pairs)
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn vector_1_signature_version_3() {
        let params = params(&[
            ("command", "listKubernetesClusters"),
            ("signatureVersion", "3"),
            ("expires", "2030-01-01T00:00:00+0000"),
        ]);
        assert_eq!(
            canonical_string(&params),
            "apikey=apikey123&command=listkubernetesclusters\
             &expires=2030-01-01t00%3a00%3a00%2b0000&response=json&signatureversion=3"
        );
        assert_eq!(
            signature(&params, &secret()),
            "AbBkR7zFEvEni4Meh8xpQ33Eg44="
        );
    }

    #[test]
    fn vector_2_commas_and_slashes_in_values() {
        let params = params(&[
            ("command", "updateLoadBalancerRule"),
            ("id", "5c1f0a3e-0000-4000-8000-000000000001"),
            ("algorithm", "source"),
            ("protocol", "tcp-proxy"),
            ("cidrlist", "10.0.0.0/8,192.168.1.0/24"),
        ]);
        assert_eq!(
            signature(&params, &secret()),
            "Hysktc0syEudHDO7esXMlndEv3w="
        );
    }

    #[test]
    fn vector_3_map_parameter_names_stay_literal() {
        let params = params(&[
            ("command", "scaleKubernetesCluster"),
            ("id", "abc"),
            ("nodeofferings[0].node", "worker"),
            ("nodeofferings[0].offering", "off-1"),
            ("size", "3"),
        ]);
        assert!(canonical_string(&params).contains("&nodeofferings[0].node=worker&"));
        assert_eq!(
            signature(&params, &secret()),
            "55wd+VM54RyPp1o5RXDhT7BNC58="
        );
    }

    /// `cs` signs this as `GABWJpi1MKzsACAIjVQSGfN4ToY=` because Python's `quote` keeps `~`;
    /// the expected value here is the one the Java algorithm of `ApiServer.verifyRequest`
    /// computes (`~` → `%7E`), i.e. the one the server accepts.
    #[test]
    fn vector_4_tilde_is_encoded_like_the_server_does() {
        let params = params(&[
            ("command", "createLoadBalancerRule"),
            ("name", "a b*c~d"),
            ("algorithm", "roundrobin"),
            ("privateport", "30080"),
            ("publicport", "80"),
        ]);
        assert!(canonical_string(&params).contains("name=a%20b*c%7ed"));
        assert_eq!(
            signature(&params, &secret()),
            "cTnsdbBLdKDruuMljx8UgjhkYtA="
        );
    }

    #[test]
    fn java_encoding_keeps_only_its_safe_characters() {
        assert_eq!(java_url_encode("AZaz09.-*_"), "AZaz09.-*_");
        assert_eq!(java_url_encode("a b+c~d/e:f"), "a%20b%2Bc%7Ed%2Fe%3Af");
        assert_eq!(java_url_encode("grüezi"), "gr%C3%BCezi");
        assert_eq!(java_url_encode(""), "");
    }

    #[test]
    fn names_sort_case_sensitively_before_lowercasing() {
        // `Zeta` sorts before `alpha` in byte order (as in Java), though not after lowering.
        let params = params(&[("alpha", "1"), ("Zeta", "2"), ("command", "x")]);
        assert_eq!(
            canonical_string(&params),
            "zeta=2&alpha=1&apikey=apikey123&command=x&response=json"
        );
    }

    #[test]
    fn a_signature_parameter_is_not_signed() {
        let plain = params(&[("command", "listZones")]);
        let mut with_signature = plain.clone();
        with_signature.insert("signature".into(), "old".into());
        assert_eq!(
            signature(&plain, &secret()),
            signature(&with_signature, &secret())
        );
    }

    #[test]
    fn form_body_encodes_names_values_and_the_signature() {
        let params = params(&[("command", "x"), ("nodeofferings[0].node", "a b")]);
        let body = signed_form_body(&params, &secret());
        let expected_signature = java_url_encode(&signature(&params, &secret()));
        assert!(
            body.starts_with("apiKey=APIKEY123&command=x&nodeofferings%5B0%5D.node=a%20b&"),
            "{body}"
        );
        assert!(
            body.ends_with(&format!("&signature={expected_signature}")),
            "{body}"
        );
    }

    /// Percent-decoding, to check the encoder against.
    fn decode(encoded: &str) -> Vec<u8> {
        let bytes = encoded.as_bytes();
        let mut decoded = Vec::new();
        let mut index = 0;
        while index < bytes.len() {
            if bytes[index] == b'%' {
                let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).unwrap();
                decoded.push(u8::from_str_radix(hex, 16).unwrap());
                index += 3;
            } else {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
        decoded
    }

    proptest::proptest! {
        #[test]
        fn encoding_is_reversible_and_uses_only_safe_characters(value in "\\PC*") {
            let encoded = java_url_encode(&value);
            proptest::prop_assert!(encoded
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-*_%".contains(&b)));
            proptest::prop_assert_eq!(decode(&encoded), value.as_bytes());
        }
    }

    #[test]
    fn expires_is_ten_minutes_ahead_in_utc() {
        let now: jiff::Timestamp = "2029-12-31T23:50:00Z".parse().unwrap();
        assert_eq!(expires_at(now), "2030-01-01T00:00:00+0000");
    }
}
