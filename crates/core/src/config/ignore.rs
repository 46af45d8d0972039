//! What core keeps of each resource's table beyond its provider's spec: its `ignore-changes`
//! (read here, for every provider alike) and what it takes to resolve the table again with
//! some attributes at the cloud's values — how a plan leaves an ignored attribute as the
//! cloud has it, and how `--refresh-only` turns a live object into a state entry.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::rewrite;
use super::schema_path::{self, KindSchema, Step};
use super::section::ConfigSection;
use super::types::{Config, ResourceSpec, SourceLocation};
use super::written::WrittenKeys;
use crate::model::Address;

/// One `ignore-changes` entry: an attribute path as the JSON plan spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredPath {
    pub path: String,
    /// Where the entry is written.
    pub location: SourceLocation,
    /// For a kind planned per live object, the collection its attributes are under when the
    /// path names an attribute of every object (`labels.tier` under `nodes`); `None` when it
    /// is a whole attribute path.
    pub on_each: Option<&'static str>,
}

impl IgnoredPath {
    /// Whether the entry names the attribute at `path` or what contains it.
    pub fn covers(&self, path: &str) -> bool {
        match self.on_each {
            None => covers(&self.path, path),
            Some(collection) => on_some_object(collection, path)
                .any(|below_object| covers(&self.path, below_object)),
        }
    }
}

/// The resource's `ignore-changes`, and the table it was resolved from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Origin {
    pub ignore_changes: Vec<IgnoredPath>,
    table: Option<Arc<TableSource>>,
}

impl Origin {
    pub(super) fn new(ignore_changes: Vec<IgnoredPath>, table: TableSource) -> Origin {
        Origin {
            ignore_changes,
            table: Some(Arc::new(table)),
        }
    }

    /// Whether `ignore-changes` covers the attribute at `path`: the path itself or a prefix of
    /// it (`ports.http` covers `ports.http.algorithm`). The whole resource (an empty path: a
    /// creation or deletion) is never ignored.
    pub fn ignores(&self, path: &str) -> bool {
        !path.is_empty() && (self.ignore_changes.iter()).any(|ignored| ignored.covers(path))
    }

    /// The resource's spec with each `(path, value)` written into its table, resolved again by
    /// its section: the attributes at those paths as the cloud has them. An error says why a
    /// value cannot be written as config (no such key, a value the section refuses).
    pub fn with_values(
        &self,
        config: &Config,
        address: &Address,
        values: &[(&str, &Value)],
    ) -> Result<ResourceSpec, String> {
        let table = self
            .table
            .as_ref()
            .ok_or("the resource was not read from a config file")?;
        table.with_values(config, address, values)
    }

    /// Where in the table the attribute at `path` is written (`algorithm` for
    /// `ports.http.algorithm` when the port takes it from the load balancer), to tell whether
    /// writing one attribute changes another.
    pub fn written_at(&self, path: &str) -> Option<String> {
        let table = self.table.as_ref()?;
        schema_path::steps(&table.schema, path).map(|steps| Step::written_at(&steps))
    }

    /// Where the attribute at `path` (as the plan spells it) is written, spelled as
    /// [`written_keys`](Self::written_keys) spells keys; for a kind planned per object, below
    /// the object (`labels.tier` for `nodes.node-1.labels.tier`).
    pub fn written_key(&self, path: &str) -> Option<String> {
        match self.table.as_ref()?.on_each {
            None => self.written_at(path),
            Some(collection) => on_some_object(collection, path).find_map(|b| self.written_at(b)),
        }
    }

    /// Every key of the table of `address` as the file writes it, with where; none for a table
    /// reuse made (for-each, defaults, variables), whose keys the file does not write there.
    pub fn written_keys(
        &self,
        address: &Address,
        files: &mut WrittenKeys,
    ) -> Vec<(String, SourceLocation)> {
        match self.table.as_deref() {
            Some(table) if table.written.is_none() => {
                files.of(&table.file, address.kind.as_str(), &address.name)
            }
            _ => vec![],
        }
    }
}

#[cfg(test)]
impl Origin {
    /// The origin of a table written in `text` (file `a.toml`) with the kind's `schema`, for
    /// tests outside the config stage.
    pub(crate) fn of_text(text: &str, schema: KindSchema, on_each: Option<&'static str>) -> Origin {
        let table = TableSource {
            section: &super::tests::TestSection,
            file: super::files::SourceFile::new("a.toml", text),
            written: None,
            schema: Arc::new(schema),
            on_each,
        };
        Origin::new(vec![], table)
    }
}

/// Whether `prefix` names `path` or what contains it.
fn covers(prefix: &str, path: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Each way of reading `path` as `COLLECTION.OBJECT.REST`, as REST: an object's name may hold
/// dots (`ip-10-0-0-1.internal`), so every dot after the collection is a candidate.
fn on_some_object<'p>(collection: &str, path: &'p str) -> impl Iterator<Item = &'p str> {
    let objects = path
        .strip_prefix(collection)
        .and_then(|rest| rest.strip_prefix('.'))
        .unwrap_or_default();
    (objects.match_indices('.')).map(move |(dot, _)| &objects[dot + 1..])
}

/// A resource table as written, with its section and the schema of its kind.
pub(super) struct TableSource {
    pub section: &'static dyn ConfigSection,
    pub file: super::files::SourceFile,
    /// The table as reuse made it (for-each, defaults, variables), when that is not what the
    /// file writes.
    pub written: Option<toml::Table>,
    pub schema: Arc<KindSchema>,
    /// For a kind planned per live object, the collection its attributes are under (`nodes`).
    pub on_each: Option<&'static str>,
}

impl TableSource {
    fn with_values(
        &self,
        config: &Config,
        address: &Address,
        values: &[(&str, &Value)],
    ) -> Result<ResourceSpec, String> {
        rewrite::resolve_with(self, config, address, values)
    }
}

impl PartialEq for TableSource {
    /// The same file's table: what it resolves to is the resource's spec, compared beside it.
    fn eq(&self, other: &TableSource) -> bool {
        self.file.path == other.file.path && self.section.provider() == other.section.provider()
    }
}

impl fmt::Debug for TableSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} table in {}",
            self.section.provider(),
            self.file.path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_covers_itself_and_what_is_below_it_only() {
        assert!(covers("allowed-cidrs", "allowed-cidrs"));
        assert!(covers("ports.http", "ports.http.algorithm"));
        assert!(!covers("ports.http", "ports.https.algorithm"));
        assert!(!covers("timeouts.client-data-ms", "timeouts"));
    }

    #[test]
    fn the_whole_resource_is_never_ignored() {
        let origin = Origin {
            ignore_changes: vec![entry("zone", None)],
            table: None,
        };
        assert!(origin.ignores("zone"));
        assert!(!origin.ignores(""));
        assert!(!origin.ignores("zones"));
    }

    fn entry(path: &str, on_each: Option<&'static str>) -> IgnoredPath {
        IgnoredPath {
            path: path.into(),
            location: SourceLocation {
                file: Arc::from(std::path::Path::new("a.toml")),
                line: 1,
                column: 1,
            },
            on_each,
        }
    }

    #[test]
    fn a_path_on_each_object_covers_it_on_every_object_whatever_its_name() {
        let label = entry("labels.tier", Some("nodes"));
        assert!(label.covers("nodes.node-1.labels.tier"));
        assert!(label.covers("nodes.ip-10-0-0-1.internal.labels.tier"));
        assert!(!label.covers("nodes.node-1.labels.tiers"));
        assert!(!label.covers("nodes.node-1.taints.tier:NoSchedule"));
        assert!(!label.covers("labels.tier"), "only under the collection");
        let taints = entry("taints", Some("nodes"));
        assert!(taints.covers("nodes.node-2.taints.dedicated:NoSchedule"));
        let one_node = entry("nodes.node-1.labels", None);
        assert!(one_node.covers("nodes.node-1.labels.tier"));
        assert!(!one_node.covers("nodes.node-2.labels.tier"));
    }
}
