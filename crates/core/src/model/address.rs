//! `Address`: a resource's `kind.name` (or `kind.name["key"]` for a for-each instance), as
//! the config, the plan and the state name it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The kinds of resource a config can declare. The table name of a resource is
/// `<kind>.<name>`, e.g. `[load-balancer.hello]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceKind {
    Cluster,
    LoadBalancer,
    /// A policy over the nodes of a cluster (`[nodes.NAME]`).
    Nodes,
}

impl ResourceKind {
    pub const ALL: &'static [ResourceKind] = &[
        ResourceKind::Cluster,
        ResourceKind::LoadBalancer,
        ResourceKind::Nodes,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Cluster => "cluster",
            ResourceKind::LoadBalancer => "load-balancer",
            ResourceKind::Nodes => "nodes",
        }
    }
}

impl Serialize for ResourceKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A resource's address: its table name, unique in a config (`load-balancer.hello`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address {
    pub kind: ResourceKind,
    pub name: String,
}

impl Address {
    pub fn new(kind: ResourceKind, name: impl Into<String>) -> Self {
        Address {
            kind,
            name: name.into(),
        }
    }
}

impl Address {
    /// The address of one instance of a resource table with `for-each`:
    /// `load-balancer.web["a"]`.
    pub fn instance(kind: ResourceKind, name: &str, key: &str) -> Self {
        Address::new(kind, instance_name(name, key))
    }

    /// The name a provider derives cloud names from: the table key, and for an instance of a
    /// `for-each` the key and the instance's key joined by `-` (`web["a"]` is `web-a`), as
    /// quotes and brackets are no part of a valid cloud name. An instance's key is letters,
    /// digits and `-`, so two instances of one table never share one.
    pub fn cloud_name(&self) -> String {
        match split_instance(&self.name) {
            Some((name, key)) => format!("{name}-{key}"),
            None => self.name.clone(),
        }
    }
}

/// The name of the instance `key` of the table `name`: `web["a"]`.
pub fn instance_name(name: &str, key: &str) -> String {
    format!("{name}[\"{key}\"]")
}

/// `web["a"]` as `("web", "a")`; `None` for a name without an instance key.
fn split_instance(name: &str) -> Option<(&str, &str)> {
    let (name, rest) = name.split_once("[\"")?;
    let key = rest.strip_suffix("\"]")?;
    Some((name, key))
}

/// `web[a]` or `web['a']` (as a shell leaves `'web["a"]'` unquoted, or a user writes it) as
/// the address spells it, `web["a"]`.
fn normalized_instance(name: &str) -> String {
    let Some((base, rest)) = name.split_once('[') else {
        return name.to_string();
    };
    let Some(key) = rest.strip_suffix(']') else {
        return name.to_string();
    };
    let key = key.trim_matches(|c| c == '"' || c == '\'');
    instance_name(base, key)
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.kind, self.name)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{input}` is not a resource address: expected KIND.NAME with KIND one of {kinds}")]
pub struct AddressParseError {
    input: String,
    kinds: String,
}

impl FromStr for Address {
    type Err = AddressParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let error = || AddressParseError {
            input: s.to_string(),
            kinds: ResourceKind::ALL
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let (kind, name) = s.split_once('.').ok_or_else(error)?;
        let kind = ResourceKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == kind)
            .ok_or_else(error)?;
        if name.is_empty() {
            return Err(error());
        }
        Ok(Address::new(kind, normalized_instance(name)))
    }
}

impl Serialize for Address {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Address {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text() {
        let a: Address = "load-balancer.hello".parse().unwrap();
        assert_eq!(a, Address::new(ResourceKind::LoadBalancer, "hello"));
        assert_eq!(a.to_string(), "load-balancer.hello");
    }

    #[test]
    fn rejects_unknown_kinds_and_empty_names() {
        assert!("clusters.x".parse::<Address>().is_err());
        assert_eq!(
            "cluster.lab".parse::<Address>().unwrap(),
            Address::new(ResourceKind::Cluster, "lab")
        );
        assert!("load-balancer.".parse::<Address>().is_err());
        assert!("hello".parse::<Address>().is_err());
    }

    #[test]
    fn an_instance_address_round_trips_and_reads_without_quotes_too() {
        let a = Address::instance(ResourceKind::LoadBalancer, "web", "a");
        assert_eq!(a.to_string(), r#"load-balancer.web["a"]"#);
        assert_eq!(r#"load-balancer.web["a"]"#.parse::<Address>().unwrap(), a);
        assert_eq!("load-balancer.web[a]".parse::<Address>().unwrap(), a);
        assert_eq!("load-balancer.web['a']".parse::<Address>().unwrap(), a);
        assert_eq!(
            r#"cluster.prod["lpg1.x"]"#.parse::<Address>().unwrap(),
            Address::instance(ResourceKind::Cluster, "prod", "lpg1.x")
        );
    }

    #[test]
    fn cloud_names_of_instances_have_no_quotes_and_differ_by_key() {
        let web = |key| Address::instance(ResourceKind::LoadBalancer, "web", key).cloud_name();
        assert_eq!(web("a"), "web-a");
        assert_ne!(web("a"), web("b"));
        assert_eq!(
            Address::new(ResourceKind::LoadBalancer, "web").cloud_name(),
            "web"
        );
    }
}
