//! Kubernetes label syntax, selectors and node-name globs: what the apiserver accepts as a
//! label key or value (apimachinery `validation.IsQualifiedName` / `IsValidLabelValue`), and
//! kubectl's label-selector language (`labels.Parse`). Pure: the config checks with it, the
//! node-policy planner selects with it.

use std::collections::BTreeMap;
use std::fmt;

/// The longest name part of a key, and the longest value (apimachinery `LabelValueMaxLength`).
const NAME_MAX: usize = 63;
/// The longest prefix of a key: a DNS subdomain (`DNS1123SubdomainMaxLength`).
const PREFIX_MAX: usize = 253;

/// Checks a label (or taint) key: `[prefix/]name`, the prefix a DNS subdomain of at most 253
/// characters, the name at most 63 alphanumerics with `-`, `_`, `.` inside.
pub fn check_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        check_dns_subdomain(prefix).map_err(|why| format!("prefix `{prefix}` {why}"))?;
    }
    check_name(name).map_err(|why| format!("name `{name}` {why}"))
}

/// Checks a label (or taint) value: empty, or at most 63 characters of the name charset.
pub fn check_value(value: &str) -> Result<(), String> {
    match value.is_empty() {
        true => Ok(()),
        false => check_name(value),
    }
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("is empty".into());
    }
    if name.len() > NAME_MAX {
        return Err(format!("is longer than {NAME_MAX} characters"));
    }
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !name.chars().all(inner) || !ends(name.chars().next()) || !ends(name.chars().last()) {
        return Err("must be alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character".into());
    }
    Ok(())
}

fn check_dns_subdomain(prefix: &str) -> Result<(), String> {
    if prefix.is_empty() || prefix.len() > PREFIX_MAX {
        return Err(format!("must be 1 to {PREFIX_MAX} characters"));
    }
    let label_ok = |label: &str| {
        let chars = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        let ends =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        label.chars().all(chars) && ends(label.chars().next()) && ends(label.chars().last())
    };
    match prefix.split('.').all(label_ok) {
        true => Ok(()),
        false => Err("must be a DNS subdomain: lower-case alphanumerics, '-' and '.'".into()),
    }
}

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Greater(String, i64),
    Less(String, i64),
}

impl Requirement {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let number = |key: &String| labels.get(key).and_then(|v| v.parse::<i64>().ok());
        match self {
            Requirement::Exists(key) => labels.contains_key(key),
            Requirement::NotExists(key) => !labels.contains_key(key),
            Requirement::In(key, values) => labels.get(key).is_some_and(|v| values.contains(v)),
            // As in apimachinery: a missing key satisfies `!=` and `notin`.
            Requirement::NotIn(key, values) => !labels.get(key).is_some_and(|v| values.contains(v)),
            Requirement::Greater(key, n) => number(key).is_some_and(|v| v > *n),
            Requirement::Less(key, n) => number(key).is_some_and(|v| v < *n),
        }
    }
}

/// A parsed label selector; the empty selector matches every node, as in kubectl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses kubectl's syntax: `a`, `!a`, `a=b`, `a==b`, `a!=b`, `a in (b,c)`,
    /// `a notin (b)`, `a>1`, `a<1`, joined by commas.
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        let requirements = split_requirements(text)?
            .into_iter()
            .map(|part| parse_requirement(part.trim()))
            .collect::<Result<_, _>>()?;
        Ok(LabelSelector { requirements })
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} requirement(s)", self.requirements.len())
    }
}

/// Splits at the commas outside parentheses.
fn split_requirements(text: &str) -> Result<Vec<&str>, String> {
    if text.trim().is_empty() {
        return Ok(vec![]);
    }
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
        if !(0..=1).contains(&depth) {
            return Err("unbalanced parentheses".into());
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    if part.is_empty() {
        return Err("an empty requirement (two commas in a row?)".into());
    }
    if let Some(key) = part.strip_prefix('!') {
        return key_checked(key.trim()).map(Requirement::NotExists);
    }
    for (operator, build) in SET_OPERATORS {
        if let Some((key, rest)) = split_word(part, operator) {
            let values = set_values(rest)?;
            return Ok(build(key_checked(key)?, values));
        }
    }
    for operator in ["==", "!=", "=", ">", "<"] {
        let Some((key, value)) = part.split_once(operator) else {
            continue;
        };
        let (key, value) = (key_checked(key.trim())?, value.trim());
        return match operator {
            "!=" => value_checked(value).map(|v| Requirement::NotIn(key, vec![v])),
            ">" | "<" => {
                let n = value
                    .parse::<i64>()
                    .map_err(|_| format!("`{value}` is not an integer (needed by `{operator}`)"))?;
                Ok(match operator {
                    ">" => Requirement::Greater(key, n),
                    _ => Requirement::Less(key, n),
                })
            }
            _ => value_checked(value).map(|v| Requirement::In(key, vec![v])),
        };
    }
    key_checked(part).map(Requirement::Exists)
}

type SetBuilder = fn(String, Vec<String>) -> Requirement;
const SET_OPERATORS: [(&str, SetBuilder); 2] =
    [(" notin ", Requirement::NotIn), (" in ", Requirement::In)];

/// `key in (…)` → (`key`, `(…)`), with any spacing around the word.
fn split_word<'a>(part: &'a str, word: &str) -> Option<(&'a str, &'a str)> {
    let (key, rest) = part.split_once(word)?;
    Some((key.trim(), rest.trim()))
}

fn set_values(text: &str) -> Result<Vec<String>, String> {
    let inner = text
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("`{text}`: a set needs parentheses, e.g. (a,b)"))?;
    inner.split(',').map(|v| value_checked(v.trim())).collect()
}

fn key_checked(key: &str) -> Result<String, String> {
    check_key(key).map_err(|why| format!("label key `{key}`: {why}"))?;
    Ok(key.to_string())
}

fn value_checked(value: &str) -> Result<String, String> {
    check_value(value).map_err(|why| format!("label value `{value}` {why}"))?;
    Ok(value.to_string())
}

/// Whether a node name matches a glob: `*` any run of characters, `?` one character.
pub fn glob_matches(glob: &str, name: &str) -> bool {
    let (glob, name): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    // Classic two-pointer matching with backtracking to the last `*`.
    let (mut g, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match glob.get(g) {
            Some('*') => {
                star = Some((g, n));
                g += 1;
            }
            Some(c) if *c == '?' || *c == name[n] => {
                g += 1;
                n += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    g = sg + 1;
                    n = sn + 1;
                    star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|c| *c == '*')
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
    fn keys_and_values_follow_the_apiserver_rules() {
        assert!(check_key("tier").is_ok());
        assert!(check_key("node-role.kubernetes.io/worker").is_ok());
        assert!(check_key("Example.com/x").is_err(), "prefix is lower-case");
        assert!(check_key("a/b/c").is_err());
        assert!(check_key("-tier").is_err());
        assert!(check_key(&"a".repeat(64)).is_err());
        assert!(check_key(&"a".repeat(63)).is_ok());
        assert!(check_value("").is_ok());
        assert!(check_value("web_1.a-b").is_ok());
        assert!(check_value("web!").is_err());
        assert!(check_value(&"v".repeat(64)).is_err());
    }

    #[test]
    fn selectors_match_as_kubectl_does() {
        let node = labels(&[("role", "web"), ("zone", "lpg1"), ("cpus", "8")]);
        let matches = |s: &str| LabelSelector::parse(s).unwrap().matches(&node);
        assert!(matches(""));
        assert!(matches("role"));
        assert!(!matches("!role"));
        assert!(matches("role=web,zone==lpg1"));
        assert!(!matches("role!=web"));
        assert!(matches("spot!=true"), "a missing key satisfies !=");
        assert!(matches("zone in (rma1, lpg1)"));
        assert!(!matches("zone notin (lpg1)"));
        assert!(matches("cpus>4,cpus<16"));
        assert!(!matches("cpus>8"));
    }

    #[test]
    fn bad_selectors_say_why() {
        for bad in [
            "role=",
            "a,,b",
            "zone in lpg1",
            "x in (a",
            "cpus>many",
            "Bad Key",
        ] {
            let result = LabelSelector::parse(bad);
            if bad == "role=" {
                // An empty value is a valid label value: `role=` selects nodes with role "".
                assert!(result.is_ok());
                continue;
            }
            assert!(result.is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn globs_match_node_names() {
        assert!(glob_matches("worker-*", "worker-1"));
        assert!(glob_matches("*", "anything"));
        assert!(glob_matches("node-?", "node-4"));
        assert!(!glob_matches("node-?", "node-10"));
        assert!(glob_matches("*-web-*", "prod-web-3"));
        assert!(!glob_matches("worker-*", "control-1"));
        assert!(glob_matches("node-1", "node-1"));
    }
}
