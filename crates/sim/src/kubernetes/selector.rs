//! Label selectors (`labelSelector=`) as apimachinery `labels.Parse` reads them: terms joined
//! by commas, each `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)` or `k notin (a,b)`. `!=` and
//! `notin` also match objects without the label. And the few field selectors clients use
//! (`metadata.name=x`, `metadata.namespace!=y`): equality on a dotted path's string value.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        split_terms(text)?
            .iter()
            .map(|term| parse_term(term))
            .collect::<Result<_, _>>()
            .map(LabelSelector)
    }

    /// Whether an object's `metadata.labels` (absent: none) satisfies every term.
    pub fn matches(&self, object: &Value) -> bool {
        let label = |key: &str| {
            object["metadata"]["labels"]
                .get(key)
                .and_then(Value::as_str)
        };
        self.0.iter().all(|requirement| match requirement {
            Requirement::Equals(k, v) => label(k) == Some(v),
            Requirement::NotEquals(k, v) => label(k) != Some(v),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::NotExists(k) => label(k).is_none(),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => !label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
        })
    }
}

/// Commas separate terms except inside the parentheses of a set.
fn split_terms(text: &str) -> Result<Vec<String>, String> {
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut depth = 0;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Err(format!("unbalanced ')' in selector {text:?}")),
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if depth != 0 {
        return Err(format!("unbalanced '(' in selector {text:?}"));
    }
    terms.push(current);
    Ok(terms
        .into_iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect())
}

fn parse_term(term: &str) -> Result<Requirement, String> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::NotExists(key_of(key)?));
    }
    if let Some((key, values)) = set_term(term, "notin")? {
        return Ok(Requirement::NotIn(key, values));
    }
    if let Some((key, values)) = set_term(term, "in")? {
        return Ok(Requirement::In(key, values));
    }
    if let Some((key, value)) = term.split_once("!=") {
        return Ok(Requirement::NotEquals(key_of(key)?, value_of(value)?));
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(Requirement::Equals(key_of(key)?, value_of(value)?));
    }
    Ok(Requirement::Exists(key_of(term)?))
}

/// `key in (a, b)`: the operator is a whole word between the key and the parenthesis.
fn set_term(term: &str, operator: &str) -> Result<Option<(String, Vec<String>)>, String> {
    let Some(open) = term.find('(') else {
        return Ok(None);
    };
    let head = term[..open].trim_end();
    let Some(key) = head.strip_suffix(operator) else {
        return Ok(None);
    };
    if !key.ends_with(char::is_whitespace) {
        return Ok(None);
    }
    let inner = term[open + 1..]
        .strip_suffix(')')
        .ok_or_else(|| format!("expected ')' at the end of {term:?}"))?;
    let values = inner
        .split(',')
        .map(value_of)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some((key_of(key)?, values)))
}

fn key_of(text: &str) -> Result<String, String> {
    let key = text.trim();
    let valid = |c: char| c.is_ascii_alphanumeric() || "-_./".contains(c);
    if key.is_empty() || !key.chars().all(valid) {
        return Err(format!("invalid label key {key:?}"));
    }
    Ok(key.to_owned())
}

fn value_of(text: &str) -> Result<String, String> {
    let value = text.trim();
    let valid = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    if !value.chars().all(valid) {
        return Err(format!("invalid label value {value:?}"));
    }
    Ok(value.to_owned())
}

/// `fieldSelector=`: `path=value`, `path==value`, `path!=value` on string fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(Vec<String>, bool, String)>);

impl FieldSelector {
    pub fn parse(text: &str) -> Result<FieldSelector, String> {
        let mut terms = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (path, equal, value) = if let Some((p, v)) = term.split_once("!=") {
                (p, false, v)
            } else if let Some((p, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (p, true, v)
            } else {
                return Err(format!("invalid field selector term {term:?}"));
            };
            let path = path.trim().split('.').map(str::to_owned).collect();
            terms.push((path, equal, value.trim().to_owned()));
        }
        Ok(FieldSelector(terms))
    }

    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(path, equal, value)| {
            let found = path
                .iter()
                .try_fold(object, |node, key| node.get(key))
                .and_then(Value::as_str)
                .unwrap_or("");
            (found == value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({"metadata": {"labels": labels}})
    }

    fn matches(selector: &str, labels: Value) -> bool {
        LabelSelector::parse(selector)
            .unwrap()
            .matches(&labelled(labels))
    }

    #[test]
    fn equality_and_inequality() {
        assert!(matches("tier=web", json!({"tier": "web"})));
        assert!(matches("tier==web", json!({"tier": "web"})));
        assert!(!matches("tier=web", json!({"tier": "db"})));
        assert!(matches("tier!=web", json!({"tier": "db"})));
        assert!(
            matches("tier!=web", json!({})),
            "!= matches a missing label"
        );
        assert!(!matches("tier!=web", json!({"tier": "web"})));
    }

    #[test]
    fn existence() {
        assert!(matches(
            "node.kubernetes.io/exclude-from-external-load-balancers",
            json!({"node.kubernetes.io/exclude-from-external-load-balancers": ""})
        ));
        assert!(!matches("tier", json!({})));
        assert!(matches("!tier", json!({})));
        assert!(!matches("!tier", json!({"tier": "x"})));
    }

    #[test]
    fn sets_and_several_terms() {
        assert!(matches("tier in (web, api)", json!({"tier": "api"})));
        assert!(!matches("tier in (web,api)", json!({"tier": "db"})));
        assert!(!matches("tier in (web)", json!({})));
        assert!(matches("tier notin (web,api)", json!({"tier": "db"})));
        assert!(matches("tier notin (web)", json!({})));
        assert!(matches(
            "tier in (web,api),zone=a,!gpu",
            json!({"tier": "web", "zone": "a"})
        ));
        assert!(!matches(
            "tier in (web,api),zone=a",
            json!({"tier": "web", "zone": "b"})
        ));
        assert!(matches("", json!({})));
        assert!(
            matches("index", json!({"index": "1"})),
            "a key that starts with 'in'"
        );
    }

    #[test]
    fn malformed_selectors_are_refused() {
        for bad in ["tier in (web", "tier)", "=web", "tier=we b", "ti er"] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn field_selectors_on_name_and_namespace() {
        let object = json!({"metadata": {"name": "shop", "namespace": "default"}});
        let select = |s: &str| FieldSelector::parse(s).unwrap().matches(&object);
        assert!(select("metadata.name=shop"));
        assert!(!select("metadata.name=other"));
        assert!(select("metadata.name!=other,metadata.namespace==default"));
        assert!(FieldSelector::parse("metadata.name").is_err());
    }
}
