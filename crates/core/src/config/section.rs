//! A provider's part of the config language, plugged into the config stage: its
//! `[provider.NAME]` table and the resource tables that name it (`provider = "NAME"`).
//!
//! The stage reads the files once; each table that belongs to a section is deserialized by
//! that section (on the thread that parsed it), resolved by it, and what comes back stays
//! opaque: only the provider that made a settings or spec value reads it back
//! ([`Opaque::get`]). The stage does what every provider needs — duplicates across files and
//! providers, a resource naming a provider without a table, positions — so a section holds
//! only its own keys and rules. Everything a section needs to report a bad value at
//! file:line:col is re-exported here.

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use schemars::{Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use toml::de::ValueDeserializer;

pub use super::check::Checker;
pub use super::diagnostics::{Problem, Problems};
pub use super::files::SourceFile;
pub use super::schema::{choice as choice_schema, port as port_schema};
pub use super::types::{Endpoint, KeyLocations, Resource, ResourceSpec, SourceLocation};
pub use super::validate::once;
pub use super::values::{choice, cidr, endpoint, ip_address, port, uuid, Choice, Invalid};
pub use super::values::{expand_path, is_dns_label};
use crate::model::ResourceKind;

use super::parse::RawConfig;

/// One provider's config section. Implemented by a unit struct in the provider's crate and
/// listed in the binary's registry.
pub trait ConfigSection: Send + Sync {
    /// The name resource tables write as `provider = "NAME"`, and of its `[provider.NAME]`.
    fn provider(&self) -> &'static str;

    /// The kinds of resource table (`[load-balancer.KEY]`, …) that may name this provider.
    fn kinds(&self) -> &'static [ResourceKind];

    /// The kinds whose tables name no provider and are all this section's (`[nodes.KEY]`).
    fn unnamed_kinds(&self) -> &'static [ResourceKind] {
        &[]
    }

    /// The keys of its tables that hold credentials, each with where the credential comes
    /// from instead (e.g. `("token", "the environment variable CLOUDSCALE_API_TOKEN")`):
    /// `${var.…}` is refused there, as a secret never comes from a variable.
    fn secret_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Whether the provider has a `[provider.NAME]` table, which its resources then need.
    fn has_settings(&self) -> bool {
        true
    }

    /// What a resource table of `kind` naming this provider is, for the message that lists the
    /// providers of a kind ("an existing cluster skyplan connects to").
    fn describe(&self, _kind: ResourceKind) -> Option<&'static str> {
        None
    }

    /// Deserializes `[provider.NAME]` into the section's raw type (see [`raw`]). Only called
    /// when the section [`has_settings`](Self::has_settings).
    fn parse_settings(&self, _table: ValueDeserializer<'_>) -> Result<Raw, toml::de::Error> {
        Ok(Box::new(()))
    }

    /// Deserializes a resource table of one of [`kinds`](Self::kinds).
    fn parse_resource(
        &self,
        kind: ResourceKind,
        table: ValueDeserializer<'_>,
    ) -> Result<Raw, toml::de::Error>;

    /// `[provider.NAME]` resolved: values checked (each bad one reported), defaults applied.
    /// A path the table writes resolves against its own file's directory
    /// ([`SourceFile::path_value`]), since layers may lie in several.
    fn settings(&self, _table: &Table<'_>, _problems: &mut Problems) -> Opaque {
        Opaque::new(())
    }

    /// A resource table of `kind` resolved.
    fn resource(
        &self,
        kind: ResourceKind,
        key: &str,
        table: &Table<'_>,
        context: &Resolving<'_>,
        problems: &mut Problems,
    ) -> Resource;

    /// Rules across tables (two resources claiming one thing, a name that must be declared).
    fn validate(&self, _declared: &Declared<'_, '_>, _problems: &mut Problems) {}

    /// Where `[provider.NAME]` makes the cloud the embedded one (its `endpoint`, else the
    /// table), `None` for a real cloud: a controller in a real cluster cannot reach it.
    fn embedded_at(&self, _settings: &Table<'_>) -> Option<Range<usize>> {
        None
    }

    /// A resource table in controller mode (`mode = "ccm"`): where the mode is written and the
    /// cluster whose controller is to act on it.
    fn controller_mode<'t>(&self, _table: &'t Table<'_>) -> Option<(Range<usize>, &'t str)> {
        None
    }

    /// Where a cluster table says its cluster is a real one, reached from outside skyplan (a
    /// kubeconfig): its controllers cannot reach an embedded cloud. `None` for a simulated
    /// cluster, which lives in the embedded world.
    fn real_cluster_at(&self, _table: &Table<'_>) -> Option<Range<usize>> {
        None
    }

    /// For a kind planned per live object rather than per key of its table (a node policy:
    /// `nodes.NODE.labels.KEY`), how its attributes are named, which `ignore-changes` then
    /// follows. `None`: the attributes are the table's keys, checked against its schema.
    fn attributes_per_object(&self, _kind: ResourceKind) -> Option<PerObjectAttributes> {
        None
    }

    /// The JSON schema of its tables, generated with the config's generator.
    fn schema(&self, generator: &mut SchemaGenerator) -> SectionSchema;
}

/// The attributes of a kind planned per live object: `COLLECTION.OBJECT.PATH`
/// (`nodes.node-1.labels.tier`). An `ignore-changes` entry names `PATH` on every object
/// (`labels.tier`) or `COLLECTION.OBJECT[.PATH]` on one.
#[derive(Clone, Copy)]
pub struct PerObjectAttributes {
    /// The first segment of every attribute path (`nodes`).
    pub collection: &'static str,
    /// Whether `PATH` names an attribute of one object; `Err` says how paths are spelled.
    pub check: fn(&str) -> Result<(), String>,
}

/// What a section resolves a resource table with.
pub struct Resolving<'a> {
    /// The provider's settings, when it has a `[provider.NAME]` table.
    pub settings: Option<&'a Opaque>,
}

/// The schemas a section adds to the config's: its `[provider.NAME]` (when it has one), and one
/// per resource kind it accepts.
pub struct SectionSchema {
    pub settings: Option<Schema>,
    pub resources: Vec<(ResourceKind, Schema)>,
}

/// A table as a section deserialized it.
pub type Raw = Box<dyn Any + Send + Sync>;

/// Deserializes a table into `T`, for [`ConfigSection::parse_settings`] and
/// [`ConfigSection::parse_resource`].
pub fn raw<T: DeserializeOwned + Send + Sync + 'static>(
    table: ValueDeserializer<'_>,
) -> Result<Raw, toml::de::Error> {
    Ok(Box::new(T::deserialize(table)?))
}

/// A table of one file, deserialized by its section.
pub struct Table<'f> {
    pub file: &'f SourceFile,
    span: Range<usize>,
    raw: Raw,
}

impl<'f> Table<'f> {
    pub(super) fn new(file: &'f SourceFile, span: Range<usize>, raw: Raw) -> Self {
        Table { file, span, raw }
    }

    /// The table as its section deserialized it.
    ///
    /// # Panics
    /// When asked for another type than its section parsed it into: a bug in the section.
    pub fn get<T: Any>(&self) -> &T {
        self.try_get()
            .expect("a table is read back as the type its section parsed it into")
    }

    /// The table, when its section parsed it into a `T`.
    pub fn try_get<T: Any>(&self) -> Option<&T> {
        self.raw.downcast_ref()
    }

    /// The table's span in its file.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// Where the table starts.
    pub fn location(&self) -> SourceLocation {
        self.file.location(&self.span)
    }
}

/// What a section's [`validate`](ConfigSection::validate) may look at: its own tables, and
/// the names every provider declares.
pub struct Declared<'a, 'f> {
    pub(super) raw: &'a RawConfig<'f>,
    pub(super) section: usize,
}

impl<'f> Declared<'_, 'f> {
    /// The section's `[provider.NAME]`, when the config has it.
    pub fn settings(&self) -> Option<&Table<'f>> {
        self.raw.section_settings.get(&self.section)
    }

    /// The section's resource tables of `kind`, by key.
    pub fn tables(&self, kind: ResourceKind) -> impl Iterator<Item = (&str, &Table<'f>)> {
        self.raw
            .section_resources
            .range((kind, String::new())..)
            .take_while(move |((k, _), _)| *k == kind)
            .filter(|(_, resource)| resource.section == self.section)
            .map(|((_, key), resource)| (key.as_str(), &resource.table))
    }

    /// The keys of every `[cluster.KEY]`, whichever provider it names.
    pub fn cluster_names(&self) -> Vec<&str> {
        self.raw.cluster_names()
    }

    /// The provider `[cluster.KEY]` names, when the config declares it.
    pub fn cluster_provider(&self, key: &str) -> Option<&'static str> {
        self.raw.cluster_provider(key)
    }
}

/// A value only the provider that made it reads back: a provider's settings, or a resource's
/// spec. Compared by value, so configs stay comparable.
#[derive(Clone)]
pub struct Opaque(Arc<dyn OpaqueValue>);

impl Opaque {
    pub fn new<T: Any + fmt::Debug + PartialEq + Send + Sync>(value: T) -> Self {
        Opaque(Arc::new(value))
    }

    /// The value, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
}

trait OpaqueValue: Any + fmt::Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn equals(&self, other: &dyn Any) -> bool;
}

impl<T: Any + fmt::Debug + PartialEq + Send + Sync> OpaqueValue for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn equals(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>().is_some_and(|other| other == self)
    }
}

impl PartialEq for Opaque {
    fn eq(&self, other: &Opaque) -> bool {
        self.0.equals(other.0.as_any())
    }
}

impl fmt::Debug for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_values_read_back_as_their_type_and_compare_by_value() {
        let a = Opaque::new(String::from("x"));
        assert_eq!(a.get::<String>().map(String::as_str), Some("x"));
        assert_eq!(a.get::<u32>(), None);
        assert_eq!(a, Opaque::new(String::from("x")));
        assert_ne!(a, Opaque::new(String::from("y")));
        assert_ne!(a, Opaque::new(7u32), "another type is another value");
        assert_eq!(format!("{a:?}"), "\"x\"");
    }
}
