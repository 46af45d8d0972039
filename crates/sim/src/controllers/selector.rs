//! Label selectors as apimachinery's `labels.Parse` reads them, for the cloudscale CCM's
//! `loadbalancer-node-selector` annotation: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
//! `k notin (a,b)`, `k`, `!k`, joined by commas. The empty string selects everything.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    pub fn parse(text: &str) -> Result<Selector, String> {
        let requirements = split_top_level(text)
            .into_iter()
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| parse_requirement(part).ok_or_else(|| bad(text)))
            .collect::<Result<Vec<_>, _>>()?;
        if requirements.is_empty() && !text.trim().is_empty() {
            return Err(bad(text));
        }
        Ok(Selector { requirements })
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            // `!=` also matches nodes without the label, as in apimachinery.
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
            Requirement::NotIn(k, vs) => !labels.get(k).is_some_and(|l| vs.contains(l)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        })
    }
}

fn bad(text: &str) -> String {
    format!("unable to parse requirement: invalid label selector {text:?}")
}

/// Commas inside `( … )` belong to a value set, not between requirements.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
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

fn parse_requirement(part: &str) -> Option<Requirement> {
    if let Some(key) = part.strip_prefix('!') {
        return valid_key(key.trim()).map(Requirement::DoesNotExist);
    }
    for (op, make) in [
        (
            "==",
            Requirement::Equals as fn(String, String) -> Requirement,
        ),
        ("!=", Requirement::NotEquals),
        ("=", Requirement::Equals),
    ] {
        if let Some((key, value)) = part.split_once(op) {
            return Some(make(valid_key(key.trim())?, valid_value(value.trim())?));
        }
    }
    for (op, make) in [
        (
            " notin ",
            Requirement::NotIn as fn(String, Vec<String>) -> Requirement,
        ),
        (" in ", Requirement::In),
    ] {
        if let Some((key, values)) = part.split_once(op) {
            let values = values.trim().strip_prefix('(')?.strip_suffix(')')?;
            let values = values
                .split(',')
                .map(|v| valid_value(v.trim()))
                .collect::<Option<Vec<_>>>()?;
            return Some(make(valid_key(key.trim())?, values));
        }
    }
    valid_key(part).map(Requirement::Exists)
}

fn valid_key(key: &str) -> Option<String> {
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    ok.then(|| key.to_owned())
}

fn valid_value(value: &str) -> Option<String> {
    let ok = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    ok.then(|| value.to_owned())
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
    fn empty_selects_everything() {
        assert!(Selector::parse("").unwrap().matches(&labels(&[])));
    }

    #[test]
    fn equality_set_and_existence_requirements() {
        let node = labels(&[("role", "lb"), ("zone", "a")]);
        let cases = [
            ("role=lb", true),
            ("role==lb", true),
            ("role!=lb", false),
            ("other!=x", true),
            ("zone in (a,b)", true),
            ("zone notin (a, b)", false),
            ("role", true),
            ("!role", false),
            ("!gpu", true),
            ("role=lb,zone in (b)", false),
        ];
        for (text, expected) in cases {
            let selector = Selector::parse(text).unwrap();
            assert_eq!(selector.matches(&node), expected, "{text}");
        }
    }

    #[test]
    fn garbage_is_a_parse_error() {
        assert!(Selector::parse("role=(lb").is_err());
        assert!(Selector::parse("a in b").is_err());
    }
}
