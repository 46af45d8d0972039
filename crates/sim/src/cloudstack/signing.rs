//! Request signatures, checked exactly as `ApiServer.verifyRequest` does (research §4.1): every
//! parameter but `signature`, names sorted case-sensitively and left as they are, values
//! encoded like Java's `URLEncoder` with `+` turned into `%20`, joined with `&`, the whole
//! string lower-cased, HMAC-SHA1 with the secret key, Base64. `signatureversion=3` makes
//! `expires` mandatory and a past `expires` is refused.

use base64::Engine;
use hmac::{Hmac, Mac};
use jiff::Timestamp;
use sha1::Sha1;

use super::params::Params;

/// The keys a request must be signed with. Debug never shows the secret.
#[derive(Clone)]
pub struct Keys {
    pub api_key: String,
    pub secret_key: String,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("api_key", &self.api_key)
            .field("secret_key", &"***")
            .finish()
    }
}

/// True when the request carries the right key, a valid signature and no expired `expires`.
pub fn verify(params: &Params, keys: &Keys, now: Timestamp) -> bool {
    let (Some(api_key), Some(signature)) = (params.get("apikey"), params.get("signature")) else {
        return false;
    };
    if !api_key.eq_ignore_ascii_case(&keys.api_key) {
        return false;
    }
    if params.get("signatureversion") == Some("3") {
        let Some(expires) = params.get("expires").and_then(parse_expires) else {
            return false;
        };
        if expires < now {
            return false;
        }
    }
    let expected = signature_of(params.pairs(), &keys.secret_key);
    constant_time_eq(expected.as_bytes(), signature.as_bytes())
}

/// The signature the server computes for these parameters.
pub fn signature_of(pairs: &[(String, String)], secret: &str) -> String {
    let unsigned = canonical(pairs);
    let mut mac = Hmac::<Sha1>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(unsigned.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// The string that is signed.
pub fn canonical(pairs: &[(String, String)]) -> String {
    let mut first: Vec<&(String, String)> = Vec::new();
    for pair in pairs {
        // A repeated name is signed with its first value, as the server takes `[0]`.
        if !first.iter().any(|(name, _)| *name == pair.0) {
            first.push(pair);
        }
    }
    first.retain(|(name, _)| !name.eq_ignore_ascii_case("signature"));
    // Rust's `str` order is byte order, which is Java's `String.compareTo` for ASCII names.
    first.sort_by(|a, b| a.0.cmp(&b.0));
    first
        .iter()
        .map(|(name, value)| format!("{name}={}", java_url_encode(value)))
        .collect::<Vec<_>>()
        .join("&")
        .to_lowercase()
}

/// `URLEncoder.encode(value, "UTF-8").replaceAll("\\+", "%20")`: only `A-Z a-z 0-9 . - * _`
/// stay literal; notably `~` is encoded, unlike in most other libraries.
pub fn java_url_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// `DateUtil.parseTZDateString`'s common formats: `2030-01-01T00:00:00+0000` and RFC 3339.
pub fn parse_expires(text: &str) -> Option<Timestamp> {
    Timestamp::strptime("%Y-%m-%dT%H:%M:%S%z", text)
        .ok()
        .or_else(|| text.parse().ok())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "SECRETkey456";

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn keys() -> Keys {
        Keys {
            api_key: "APIKEY123".into(),
            secret_key: SECRET.into(),
        }
    }

    fn signed(list: &[(&str, &str)], signature: &str) -> Params {
        let mut all = pairs(list);
        all.push(("signature".into(), signature.into()));
        Params::new(all)
    }

    fn before_2030() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    // Research §4.3, vector 1.
    const VECTOR_1: &[(&str, &str)] = &[
        ("apiKey", "APIKEY123"),
        ("command", "listKubernetesClusters"),
        ("response", "json"),
        ("signatureVersion", "3"),
        ("expires", "2030-01-01T00:00:00+0000"),
    ];

    #[test]
    fn vector_1_canonical_string_and_signature() {
        assert_eq!(
            canonical(&pairs(VECTOR_1)),
            "apikey=apikey123&command=listkubernetesclusters&expires=2030-01-01t00%3a00%3a00%2b0000&response=json&signatureversion=3"
        );
        let params = signed(VECTOR_1, "AbBkR7zFEvEni4Meh8xpQ33Eg44=");
        assert!(verify(&params, &keys(), before_2030()));
    }

    #[test]
    fn vectors_2_and_3_verify() {
        let vector_2 = [
            ("apiKey", "APIKEY123"),
            ("command", "updateLoadBalancerRule"),
            ("id", "5c1f0a3e-0000-4000-8000-000000000001"),
            ("algorithm", "source"),
            ("protocol", "tcp-proxy"),
            ("cidrlist", "10.0.0.0/8,192.168.1.0/24"),
            ("response", "json"),
        ];
        assert!(verify(
            &signed(&vector_2, "Hysktc0syEudHDO7esXMlndEv3w="),
            &keys(),
            before_2030()
        ));
        let vector_3 = [
            ("apiKey", "APIKEY123"),
            ("command", "scaleKubernetesCluster"),
            ("id", "abc"),
            ("nodeofferings[0].node", "worker"),
            ("nodeofferings[0].offering", "off-1"),
            ("size", "3"),
            ("response", "json"),
        ];
        assert!(canonical(&pairs(&vector_3)).contains("nodeofferings[0].node=worker"));
        assert!(verify(
            &signed(&vector_3, "55wd+VM54RyPp1o5RXDhT7BNC58="),
            &keys(),
            before_2030()
        ));
    }

    #[test]
    fn vector_4_tilde_is_encoded_like_java() {
        let vector_4 = [
            ("apiKey", "APIKEY123"),
            ("command", "createLoadBalancerRule"),
            ("name", "a b*c~d"),
            ("publicport", "80"),
            ("privateport", "30080"),
            ("algorithm", "roundrobin"),
            ("response", "json"),
        ];
        assert_eq!(java_url_encode("a b*c~d"), "a%20b*c%7Ed");
        let server = signed(&vector_4, "cTnsdbBLdKDruuMljx8UgjhkYtA=");
        assert!(verify(&server, &keys(), before_2030()));
        let python_cs = signed(&vector_4, "GABWJpi1MKzsACAIjVQSGfN4ToY=");
        assert!(!verify(&python_cs, &keys(), before_2030()));
    }

    #[test]
    fn wrong_key_secret_or_missing_parts_are_refused() {
        let good = signed(VECTOR_1, "AbBkR7zFEvEni4Meh8xpQ33Eg44=");
        let other_secret = Keys {
            secret_key: "other".into(),
            ..keys()
        };
        assert!(!verify(&good, &other_secret, before_2030()));
        let other_key = Keys {
            api_key: "NOPE".into(),
            ..keys()
        };
        assert!(!verify(&good, &other_key, before_2030()));
        assert!(!verify(
            &Params::new(pairs(VECTOR_1)),
            &keys(),
            before_2030()
        ));
    }

    #[test]
    fn expired_requests_are_refused() {
        let params = signed(VECTOR_1, "AbBkR7zFEvEni4Meh8xpQ33Eg44=");
        let after: Timestamp = "2030-01-01T00:00:01Z".parse().unwrap();
        assert!(!verify(&params, &keys(), after));
    }

    #[test]
    fn expires_takes_both_formats() {
        let want: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(parse_expires("2030-01-01T00:00:00+0000"), Some(want));
        assert_eq!(parse_expires("2030-01-01T01:00:00+01:00"), Some(want));
        assert_eq!(parse_expires("2030-01-01T00:00:00Z"), Some(want));
        assert_eq!(parse_expires("tomorrow"), None);
    }

    #[test]
    fn debug_hides_the_secret() {
        assert!(!format!("{:?}", keys()).contains(SECRET));
    }
}
