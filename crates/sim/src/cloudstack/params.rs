//! Request parameters: decoded from the query string and the form body, looked up by name
//! case-insensitively (clients spell `signatureVersion`, `apiKey` …), with the server's
//! parameter-parsing errors (synchronous 431s).

use std::collections::BTreeMap;

use super::api::{ApiError, ApiResult};

#[derive(Debug, Clone, Default)]
pub struct Params {
    /// As received, in order; a repeated name keeps its first value (the server signs `[0]`).
    pairs: Vec<(String, String)>,
}

impl Params {
    #[cfg(test)]
    pub fn new(pairs: Vec<(String, String)>) -> Self {
        Params { pairs }
    }

    /// The query string's and then the body's `name=value` pairs.
    pub fn decode(query: &str, body: &str) -> Self {
        let pairs = [query, body]
            .iter()
            .flat_map(|text| text.split('&'))
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                (form_decode(name), form_decode(value))
            })
            .collect();
        Params { pairs }
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A value given and not blank.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.trim().is_empty())
    }

    pub fn command(&self) -> &str {
        self.get("command").unwrap_or("")
    }

    pub fn required(&self, name: &str) -> ApiResult<&str> {
        self.text(name).ok_or_else(|| {
            ApiError::param(format!(
                "Unable to execute API command {} due to missing parameter {name}",
                self.command().to_lowercase()
            ))
        })
    }

    /// The server's message for a value it cannot parse or an id naming nothing.
    pub fn invalid(&self, name: &str, value: &str) -> ApiError {
        ApiError::param(format!(
            "Unable to execute API command {} due to invalid value. Invalid parameter {name} \
             value={value} due to incorrect long value format, or entity does not exist or due \
             to incorrect parameter annotation for the field in api cmd class.",
            self.command().to_lowercase()
        ))
    }

    /// An id parameter that must name an existing object (`exists`).
    pub fn id(&self, name: &str, exists: impl Fn(&str) -> bool) -> ApiResult<String> {
        let value = self.required(name)?;
        self.check_id(name, value, exists)
    }

    pub fn optional_id(
        &self,
        name: &str,
        exists: impl Fn(&str) -> bool,
    ) -> ApiResult<Option<String>> {
        self.text(name)
            .map(|value| self.check_id(name, value, exists))
            .transpose()
    }

    fn check_id(
        &self,
        name: &str,
        value: &str,
        exists: impl Fn(&str) -> bool,
    ) -> ApiResult<String> {
        if exists(value) {
            Ok(value.to_owned())
        } else {
            Err(self.invalid(name, value))
        }
    }

    pub fn optional_int(&self, name: &str) -> ApiResult<Option<i64>> {
        self.text(name)
            .map(|v| v.trim().parse().map_err(|_| self.invalid(name, v)))
            .transpose()
    }

    pub fn int(&self, name: &str) -> ApiResult<i64> {
        let value = self.required(name)?;
        value.trim().parse().map_err(|_| self.invalid(name, value))
    }

    pub fn optional_bool(&self, name: &str) -> Option<bool> {
        self.text(name).map(|v| v.eq_ignore_ascii_case("true"))
    }

    /// A LIST parameter: comma-separated, entries trimmed, empty entries dropped (the server
    /// tokenizes on commas).
    pub fn list(&self, name: &str) -> Option<Vec<String>> {
        self.get(name).map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
    }

    /// A MAP parameter `name[i].key=value`: one map per index, in index order.
    pub fn map(&self, name: &str) -> Vec<BTreeMap<String, String>> {
        let prefix = format!("{}[", name.to_lowercase());
        let mut entries: BTreeMap<u32, BTreeMap<String, String>> = BTreeMap::new();
        for (n, v) in &self.pairs {
            let lower = n.to_lowercase();
            let Some(rest) = lower.strip_prefix(&prefix) else {
                continue;
            };
            let Some((index, key)) = rest.split_once("].") else {
                continue;
            };
            if let Ok(index) = index.parse() {
                entries
                    .entry(index)
                    .or_default()
                    .entry(key.to_owned())
                    .or_insert_with(|| v.clone());
            }
        }
        entries.into_values().collect()
    }
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte.
pub fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(digit: u8) -> Option<u8> {
    (digit as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_query_and_body_with_names_case_insensitive() {
        let params = Params::decode(
            "command=listZones&signatureVersion=3",
            "name=a+b%2Fc&expires=2030-01-01T00%3A00%3A00%2B0000",
        );
        assert_eq!(params.get("signatureversion"), Some("3"));
        assert_eq!(params.get("name"), Some("a b/c"));
        assert_eq!(params.get("expires"), Some("2030-01-01T00:00:00+0000"));
        assert_eq!(params.command(), "listZones");
    }

    #[test]
    fn broken_escapes_stay_literal() {
        assert_eq!(form_decode("100%"), "100%");
        assert_eq!(form_decode("%zz%4"), "%zz%4");
        assert_eq!(form_decode("%41"), "A");
    }

    #[test]
    fn maps_group_by_index() {
        let params = Params::decode(
            "nodeofferings[1].node=control&nodeofferings[0].node=worker&\
             nodeofferings[0].offering=o1&nodeofferings[1].offering=o2",
            "",
        );
        let map = params.map("nodeofferings");
        assert_eq!(map.len(), 2);
        assert_eq!(map[0]["node"], "worker");
        assert_eq!(map[1]["offering"], "o2");
    }

    #[test]
    fn missing_and_invalid_parameters_are_431() {
        let params = Params::decode("command=deleteLoadBalancerRule", "");
        let missing = params.required("id").unwrap_err();
        assert_eq!(missing.code, 431);
        assert!(missing.text.ends_with("missing parameter id"));
        let params = Params::decode("command=x&size=big", "");
        assert_eq!(params.optional_int("size").unwrap_err().code, 431);
    }
}
