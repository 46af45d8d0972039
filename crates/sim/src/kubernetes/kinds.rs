//! The resources the simulator serves and how each is addressed: the plural in URLs and
//! errors, the Kind in bodies, whether it lives in a namespace.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Namespace,
    Node,
    Service,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Namespace, Kind::Node, Kind::Service];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Namespace => "Namespace",
            Kind::Node => "Node",
            Kind::Service => "Service",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Kind::Namespace => "namespaces",
            Kind::Node => "nodes",
            Kind::Service => "services",
        }
    }

    pub fn singular(self) -> &'static str {
        match self {
            Kind::Namespace => "namespace",
            Kind::Node => "node",
            Kind::Service => "service",
        }
    }

    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            Kind::Namespace => &["ns"],
            Kind::Node => &["no"],
            Kind::Service => &["svc"],
        }
    }

    pub fn namespaced(self) -> bool {
        self == Kind::Service
    }

    /// Whether `/status` is served: the controllers write Node addresses and Service
    /// load-balancer ingress there.
    pub fn has_status(self) -> bool {
        self != Kind::Namespace
    }

    pub fn list_kind(self) -> String {
        format!("{}List", self.name())
    }
}

/// Where one object lives: its namespace (namespaced kinds only) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectKey {
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectKey {
    pub fn cluster(name: impl Into<String>) -> Self {
        ObjectKey {
            namespace: None,
            name: name.into(),
        }
    }

    pub fn namespaced(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectKey {
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }

    /// The key in the world file's map: `name`, or `namespace/name`, so that a map ordered by
    /// key lists objects the way etcd does.
    pub fn storage_key(&self) -> String {
        match &self.namespace {
            Some(namespace) => format!("{namespace}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.storage_key())
    }
}
