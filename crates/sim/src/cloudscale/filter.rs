//! Tag filters on list endpoints: `?tag:KEY=VALUE` keeps objects with that tag value,
//! `?tag:KEY` (no `=`) keeps objects that have the key. Other query parameters are ignored.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::world::Tags;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TagFilter {
    /// (key, required value); `None` only asks for the key.
    conditions: Vec<(String, Option<String>)>,
}

impl TagFilter {
    pub fn parse(query: &str) -> Self {
        let conditions = query
            .split('&')
            .filter_map(|pair| {
                let (key, value) = match pair.split_once('=') {
                    Some((key, value)) => (key, Some(percent_decode(value))),
                    None => (pair, None),
                };
                let key = percent_decode(key);
                let tag = key.strip_prefix("tag:")?.to_owned();
                Some((tag, value))
            })
            .collect();
        TagFilter { conditions }
    }

    pub fn matches(&self, tags: &Tags) -> bool {
        self.conditions
            .iter()
            .all(|(key, value)| match (tags.get(key), value) {
                (Some(actual), Some(wanted)) => actual == wanted,
                (Some(_), None) => true,
                (None, _) => false,
            })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for TagFilter {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(TagFilter::parse(parts.uri.query().unwrap_or_default()))
    }
}

/// Form decoding (`+` is a space, `%XX` a byte); an invalid escape is kept literally.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                if let Some(byte) = text
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    out.push(byte);
                    i += 2;
                } else {
                    out.push(b'%');
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(pairs: &[(&str, &str)]) -> Tags {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn value_and_presence_conditions() {
        let filter = TagFilter::parse("tag:skyplan.address=lb%2Fweb&tag:env&other=1");
        assert!(filter.matches(&tags(&[("skyplan.address", "lb/web"), ("env", "")])));
        assert!(!filter.matches(&tags(&[("skyplan.address", "lb/web")])));
        assert!(!filter.matches(&tags(&[("skyplan.address", "lb/db"), ("env", "x")])));
    }

    #[test]
    fn empty_value_is_a_value_not_presence() {
        let filter = TagFilter::parse("tag:env=");
        assert!(filter.matches(&tags(&[("env", "")])));
        assert!(!filter.matches(&tags(&[("env", "prod")])));
    }

    #[test]
    fn no_query_keeps_everything() {
        assert!(TagFilter::parse("").matches(&Tags::new()));
    }
}
