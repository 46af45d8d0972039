//! Label selectors in kubectl's syntax, as the CCM parses `loadbalancer-node-selector` with
//! `labels.Parse`: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`, joined by
//! commas. Only what matching node labels needs.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    /// An empty selector matches everything, as in Kubernetes.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            requirements.push(requirement(part)?);
        }
        Ok(Selector { requirements })
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::Absent(k) => !labels.contains_key(k),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
        })
    }
}

/// Commas inside `( … )` belong to a set, not between requirements.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn requirement(part: &str) -> Result<Requirement, String> {
    let bad = || format!("`{part}` is not a label selector requirement");
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::Absent(key.trim().to_string()));
    }
    if let Some((key, value)) = part.split_once("!=") {
        return Ok(Requirement::NotEquals(
            key.trim().into(),
            value.trim().into(),
        ));
    }
    if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok(Requirement::Equals(key.trim().into(), value.trim().into()));
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    match words.as_slice() {
        [key] => Ok(Requirement::Exists(key.to_string())),
        [key, rest] => {
            let rest = rest.trim();
            let (negated, set) = if let Some(set) = rest.strip_prefix("notin") {
                (true, set)
            } else if let Some(set) = rest.strip_prefix("in") {
                (false, set)
            } else {
                return Err(bad());
            };
            let set = set.trim();
            let inner = set
                .strip_prefix('(')
                .and_then(|s| s.strip_suffix(')'))
                .ok_or_else(bad)?;
            let values = inner.split(',').map(|v| v.trim().to_string()).collect();
            Ok(match negated {
                true => Requirement::NotIn(key.to_string(), values),
                false => Requirement::In(key.to_string(), values),
            })
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn matches_like_kubernetes() {
        let web = labels(&[("tier", "web"), ("zone", "a")]);
        let db = labels(&[("tier", "db"), ("spot", "")]);
        let cases = [
            ("", true, true),
            ("tier=web", true, false),
            ("tier==web", true, false),
            ("tier!=web", false, true),
            ("spot", false, true),
            ("!spot", true, false),
            ("tier in (web, api)", true, false),
            ("tier notin (web,api),!spot", false, false),
            ("tier in (web,db),zone=a", true, false),
        ];
        for (text, on_web, on_db) in cases {
            let selector = Selector::parse(text).unwrap();
            assert_eq!(selector.matches(&web), on_web, "{text} on web");
            assert_eq!(selector.matches(&db), on_db, "{text} on db");
        }
        assert!(Selector::parse("tier maybe (x)").is_err());
    }
}
