//! Parsers for single config values: ports, addresses, CIDRs, UUIDs, endpoints, time zones and
//! the fixed word lists. They know nothing of files; the caller attaches the position.

use std::net::IpAddr;

use ipnet::IpNet;

use super::types::Endpoint;
use crate::model::Impact;

/// Why a value was rejected, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub message: String,
    pub help: Option<String>,
}

impl Invalid {
    pub fn new(message: impl Into<String>) -> Self {
        Invalid {
            message: message.into(),
            help: None,
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// A value that must be one of a fixed list of words; the config and the wire share the
/// spelling.
pub trait Choice: Copy + 'static {
    /// What the value is, for messages ("algorithm").
    const WHAT: &'static str;
    fn all() -> &'static [Self];
    fn word(self) -> &'static str;
}

/// Implements [`Choice`] for enums made with [`wire_enum!`](crate::wire_enum), each with what
/// it is called in messages. Exported for the providers' own words.
#[macro_export]
macro_rules! choices {
    ($($type:ty => $what:literal),+ $(,)?) => {
        $(impl $crate::config::section::Choice for $type {
            const WHAT: &'static str = $what;
            fn all() -> &'static [Self] {
                &<$type>::ALL
            }
            fn word(self) -> &'static str {
                self.as_str()
            }
        })+
    };
}

crate::choices!(
    Impact => "impact class",
);

pub fn choice<T: Choice>(text: &str) -> Result<T, Invalid> {
    T::all()
        .iter()
        .copied()
        .find(|value| value.word() == text)
        .ok_or_else(|| {
            let words: Vec<_> = T::all()
                .iter()
                .map(|v| format!("\"{}\"", v.word()))
                .collect();
            Invalid::new(format!("`{text}` is not a valid {}", T::WHAT))
                .help(format!("expected one of {}", words.join(", ")))
        })
}

pub fn port(number: i64) -> Result<u16, Invalid> {
    u16::try_from(number)
        .ok()
        .filter(|&port| port != 0)
        .ok_or_else(|| Invalid::new(format!("{number} is not a port")).help("ports are 1-65535"))
}

pub fn ip_address(text: &str) -> Result<IpAddr, Invalid> {
    text.parse().map_err(|_| {
        Invalid::new(format!("`{text}` is not an IP address"))
            .help("write an IPv4 or IPv6 address, e.g. 10.0.0.11 or 2001:db8::11")
    })
}

/// A network in CIDR notation. A bare address is refused rather than widened silently, and so
/// are bits set beyond the prefix, since either may not mean what the user thinks.
pub fn cidr(text: &str) -> Result<IpNet, Invalid> {
    if let Ok(address) = text.parse::<IpAddr>() {
        let prefix = if address.is_ipv4() { 32 } else { 128 };
        return Err(Invalid::new(format!("`{text}` is an address, not a CIDR"))
            .help(format!("write {address}/{prefix}")));
    }
    let net: IpNet = text.parse().map_err(|_| {
        Invalid::new(format!("`{text}` is not a CIDR"))
            .help("write an address and a prefix length, e.g. 5.102.150.123/32")
    })?;
    if net.trunc() != net {
        return Err(
            Invalid::new(format!("`{text}` has address bits set beyond its prefix"))
                .help(format!("write {}", net.trunc())),
        );
    }
    Ok(net)
}

/// A UUID in its canonical lower-case form, as the APIs return it.
pub fn uuid(text: &str) -> Result<String, Invalid> {
    uuid::Uuid::parse_str(text)
        .map(|id| id.hyphenated().to_string())
        .map_err(|_| {
            Invalid::new(format!("`{text}` is not a UUID"))
                .help("write the UUID, e.g. 2db69ba3-1864-4608-853a-0771b6885a3a")
        })
}

/// A DNS label, as Kubernetes names namespaces and parts of object names: lower-case letters,
/// digits and '-', not at either end, at most `max` long (63 for a namespace).
pub fn is_dns_label(text: &str, max: usize) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= max
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

/// `~/…` is the home directory; a relative path is relative to the config.
pub fn expand_path(root: &std::path::Path, text: &str) -> std::path::PathBuf {
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
        _ => root.join(text),
    }
}

pub fn endpoint(text: &str) -> Result<Endpoint, Invalid> {
    if text == "embedded" {
        return Ok(Endpoint::Embedded);
    }
    let is_web_url = reqwest::Url::parse(text).is_ok_and(|url| {
        matches!(url.scheme(), "http" | "https") && url.host_str().is_some_and(|h| !h.is_empty())
    });
    if is_web_url {
        Ok(Endpoint::Url(text.to_string()))
    } else {
        Err(Invalid::new(format!("`{text}` is not an endpoint"))
            .help("write \"embedded\" or an http(s) URL such as https://api.cloudscale.ch/v1"))
    }
}

pub(super) fn timezone(text: &str) -> Result<String, Invalid> {
    jiff::tz::TimeZone::get(text)
        .map(|_| text.to_string())
        .map_err(|_| {
            Invalid::new(format!("`{text}` is not a known time zone"))
                .help("write an IANA time zone name such as Europe/Zurich or UTC")
        })
}

/// A duration such as `90s`, `5m` or `1h30m` (jiff's friendly format, as `--lock-timeout`
/// reads it); not negative.
pub fn duration(text: &str) -> Result<std::time::Duration, Invalid> {
    let help = "write a duration such as \"90s\", \"5m\" or \"1h30m\"";
    let signed: jiff::SignedDuration = text
        .parse()
        .map_err(|_| Invalid::new(format!("`{text}` is not a duration")).help(help))?;
    std::time::Duration::try_from(signed)
        .map_err(|_| Invalid::new(format!("`{text}` is negative")).help(help))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_list_the_allowed_words() {
        assert_eq!(choice::<Impact>("pool-recreate"), Ok(Impact::PoolRecreate));
        let error = choice::<Impact>("all").unwrap_err();
        assert_eq!(error.message, "`all` is not a valid impact class");
        assert_eq!(
            error.help.unwrap(),
            r#"expected one of "none", "minimal", "pool-recreate", "forbidden""#
        );
    }

    #[test]
    fn ports_are_1_to_65535() {
        assert_eq!(port(1), Ok(1));
        assert_eq!(port(65535), Ok(65535));
        for bad in [0, -1, 65536] {
            assert_eq!(
                port(bad).unwrap_err().message,
                format!("{bad} is not a port")
            );
        }
    }

    #[test]
    fn cidrs_are_normalised_and_bare_addresses_refused() {
        assert_eq!(cidr("2001:DB8::/32").unwrap().to_string(), "2001:db8::/32");
        let bare = cidr("5.102.150.123").unwrap_err();
        assert_eq!(bare.help.unwrap(), "write 5.102.150.123/32");
        assert_eq!(cidr("::1").unwrap_err().help.unwrap(), "write ::1/128");
        assert_eq!(
            cidr("10.0.0.1/24").unwrap_err().help.unwrap(),
            "write 10.0.0.0/24"
        );
        assert_eq!(
            cidr("10.0.0/8").unwrap_err().message,
            "`10.0.0/8` is not a CIDR"
        );
    }

    #[test]
    fn addresses_and_uuids() {
        assert_eq!(ip_address("::0001").unwrap().to_string(), "::1");
        assert!(ip_address("10.0.0.300").is_err());
        assert_eq!(
            uuid("2DB69BA3-1864-4608-853A-0771B6885A3A").unwrap(),
            "2db69ba3-1864-4608-853a-0771b6885a3a"
        );
        assert!(uuid("subnet-1").is_err());
    }

    #[test]
    fn endpoints_are_embedded_or_web_urls() {
        assert_eq!(endpoint("embedded"), Ok(Endpoint::Embedded));
        assert_eq!(
            endpoint("https://api.cloudscale.ch/v1"),
            Ok(Endpoint::Url("https://api.cloudscale.ch/v1".into()))
        );
        for bad in ["ftp://example.com", "api.cloudscale.ch", "Embedded"] {
            assert!(endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_are_friendly_and_not_negative() {
        assert_eq!(duration("90s"), Ok(std::time::Duration::from_secs(90)));
        assert_eq!(duration("5m"), Ok(std::time::Duration::from_secs(300)));
        assert_eq!(duration("0s"), Ok(std::time::Duration::ZERO));
        assert_eq!(
            duration("5 parsecs").unwrap_err().message,
            "`5 parsecs` is not a duration"
        );
        assert_eq!(duration("-5s").unwrap_err().message, "`-5s` is negative");
    }

    #[test]
    fn time_zones_come_from_the_tz_database() {
        assert_eq!(timezone("Europe/Zurich").unwrap(), "Europe/Zurich");
        assert!(timezone("Mars/Olympus").is_err());
    }
}
