//! Object name rules (apimachinery `validation.IsDNS1035Label`, `IsDNS1123Label`,
//! `IsDNS1123Subdomain`), with the apiserver's messages.

use serde_json::{json, Value};

use crate::kubernetes::status::FieldError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// Services: a lowercase letter first.
    Dns1035Label,
    /// Namespaces.
    Dns1123Label,
    /// Nodes: dot-separated labels.
    Dns1123Subdomain,
}

pub fn validate(object: &Value, rule: NameRule) -> Vec<FieldError> {
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    if name.is_empty() {
        return vec![FieldError::required(
            "metadata.name",
            "name or generateName is required",
        )];
    }
    match check(name, rule) {
        Ok(()) => Vec::new(),
        Err(detail) => vec![FieldError::invalid("metadata.name", json!(name), detail)],
    }
}

fn check(name: &str, rule: NameRule) -> Result<(), String> {
    let label_ok = |label: &str, first_alpha: bool| {
        let bytes = label.as_bytes();
        let inner = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
        let end = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        let first = |b: &u8| match first_alpha {
            true => b.is_ascii_lowercase(),
            false => end(b),
        };
        !bytes.is_empty()
            && bytes.len() <= 63
            && bytes.first().is_some_and(first)
            && bytes.last().is_some_and(end)
            && bytes.iter().all(inner)
    };
    let ok = match rule {
        NameRule::Dns1035Label => label_ok(name, true),
        NameRule::Dns1123Label => label_ok(name, false),
        NameRule::Dns1123Subdomain => {
            name.len() <= 253 && name.split('.').all(|label| label_ok(label, false))
        }
    };
    if ok {
        return Ok(());
    }
    Err(match rule {
        NameRule::Dns1035Label => {
            "a DNS-1035 label must consist of lower case alphanumeric \
            characters or '-', start with an alphabetic character, and end with an alphanumeric \
            character (e.g. 'my-name',  or 'abc-123', regex used for validation is \
            '[a-z]([-a-z0-9]*[a-z0-9])?')"
        }
        NameRule::Dns1123Label => {
            "a lowercase RFC 1123 label must consist of lower case \
            alphanumeric characters or '-', and must start and end with an alphanumeric \
            character (e.g. 'my-name',  or '123-abc', regex used for validation is \
            '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        }
        NameRule::Dns1123Subdomain => {
            "a lowercase RFC 1123 subdomain must consist of lower \
            case alphanumeric characters, '-' or '.', and must start and end with an \
            alphanumeric character (e.g. 'example.com', regex used for validation is \
            '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        }
    }
    .to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Value {
        json!({"metadata": {"name": name}})
    }

    #[test]
    fn each_rule_accepts_and_refuses_its_names() {
        assert!(validate(&named("shop-1"), NameRule::Dns1035Label).is_empty());
        assert_eq!(validate(&named("1shop"), NameRule::Dns1035Label).len(), 1);
        assert!(validate(&named("1shop"), NameRule::Dns1123Label).is_empty());
        assert_eq!(validate(&named("Shop"), NameRule::Dns1123Label).len(), 1);
        assert!(validate(&named("node-1.lab.example"), NameRule::Dns1123Subdomain).is_empty());
        assert_eq!(
            validate(&named("a..b"), NameRule::Dns1123Subdomain).len(),
            1
        );
        assert_eq!(
            validate(&json!({}), NameRule::Dns1123Label)[0].to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
    }
}
