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
        Ok(Address::new(kind, name))
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
}
