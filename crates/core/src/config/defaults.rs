//! `[defaults.load-balancer.PROVIDER]`, `[defaults.cluster.PROVIDER]`, `[defaults.nodes]`:
//! keys every resource table of that kind (and provider) inherits unless it sets them. A
//! table inherits key by key, recursively; an array is replaced whole — as a later `-c` layer
//! overrides an earlier one.
//!
//! Each key is checked against the schema of the provider's tables where the defaults write
//! it, not at every resource. The values keep their place: an inherited value is given a span
//! past the end of the resource's file ([`SourceFile::inherited_span`]), so a problem with it
//! points at the defaults and says which resource inherited it.

use std::collections::BTreeMap;
use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::for_each::FOR_EACH;
use super::parse::{Sections, IGNORE_CHANGES};
use super::schema_path::{self, KindSchema};
use super::section::ConfigSection;
use crate::model::ResourceKind;

/// The defaults of each kind and provider (the provider of a kind one section has all of,
/// `nodes`, is that section's).
#[derive(Default)]
pub(super) struct Defaults<'v> {
    tables: BTreeMap<(ResourceKind, &'static str), Written<'v>>,
}

/// A defaults table, its spans already those of an inherited value.
struct Written<'v> {
    file: usize,
    header: Range<usize>,
    table: DeTable<'v>,
}

/// One defaults table as `[defaults]` writes it: its kind and the section of its provider.
struct Found<'s, 'v> {
    kind: ResourceKind,
    section: &'s dyn ConfigSection,
    table: Spanned<DeValue<'v>>,
}

impl<'v> Defaults<'v> {
    /// Takes the `[defaults]` table of each file (by its index in `files`).
    pub fn collect(
        files: &[SourceFile],
        tables: Vec<(usize, Spanned<DeValue<'v>>)>,
        sections: Sections,
        problems: &mut Problems,
    ) -> Self {
        let mut defaults = Defaults::default();
        for (index, table) in tables {
            for found in by_kind(table, &files[index], sections, problems) {
                defaults.add(files, index, found, problems);
            }
        }
        defaults
    }

    fn add(
        &mut self,
        files: &[SourceFile],
        index: usize,
        found: Found<'_, 'v>,
        problems: &mut Problems,
    ) {
        let Found {
            kind,
            section,
            table,
        } = found;
        let (file, header) = (&files[index], table.span());
        let DeValue::Table(mut entries) = table.into_inner() else {
            problems.push(Problem::at(file, header, "defaults are a table of keys"));
            return;
        };
        let provider = section.provider();
        if let Some(first) = self.tables.get(&(kind, provider)) {
            let message = format!("the defaults of {kind} ({provider}) are defined twice");
            let note = Problem::at(
                &files[first.file],
                first.header.clone(),
                "first defined here",
            );
            problems.push(Problem::at(file, header, message).with_note(note));
            return;
        }
        let schema = schema_path::kind_schemas(section).into_iter();
        if let Some((_, schema)) = schema.into_iter().find(|(k, _)| *k == kind) {
            refuse_unknown_keys(&mut entries, &schema, "", file, problems);
        }
        // Spans past every file's end: a problem with an inherited value shows the defaults.
        let base = SourceFile::inherited_span(index, 0..0).start;
        let table = super::pieces::placed_at(entries, base);
        let written = Written {
            file: index,
            header,
            table,
        };
        self.tables.insert((kind, provider), written);
    }

    /// `table` with the keys it does not set taken from the defaults of its kind and
    /// provider; whether there are such defaults.
    pub fn inherit(
        &self,
        kind: ResourceKind,
        provider: &'static str,
        table: &mut DeTable<'v>,
    ) -> bool {
        let Some(defaults) = self.tables.get(&(kind, provider)) else {
            return false;
        };
        inherit(table, &defaults.table);
        true
    }
}

fn inherit<'v>(table: &mut DeTable<'v>, defaults: &DeTable<'v>) {
    for (key, value) in defaults {
        match (table.get_mut(key.get_ref().as_ref()), value.get_ref()) {
            (None, _) => {
                table.insert(key.clone(), value.clone());
            }
            (Some(own), DeValue::Table(inherited)) => {
                if let DeValue::Table(own) = own.get_mut() {
                    inherit(own, inherited);
                }
            }
            (Some(_), _) => {}
        }
    }
}

/// The defaults tables of one `[defaults]`, each with its kind and provider; a kind or
/// provider that does not exist is reported.
fn by_kind<'s, 'v>(
    table: Spanned<DeValue<'v>>,
    file: &SourceFile,
    sections: Sections<'s>,
    problems: &mut Problems,
) -> Vec<Found<'s, 'v>> {
    let span = table.span();
    let DeValue::Table(kinds) = table.into_inner() else {
        problems.push(Problem::at(file, span, "[defaults] is a table of kinds"));
        return vec![];
    };
    let mut found = Vec::new();
    for (key, value) in kinds {
        let Some(kind) = (ResourceKind::ALL.iter()).find(|k| k.as_str() == key.get_ref()) else {
            let message = format!("`{}` is no kind of resource", key.get_ref());
            let kinds: Vec<_> = ResourceKind::ALL.iter().map(|k| k.as_str()).collect();
            let help = format!("defaults are for \"{}\"", kinds.join("\", \""));
            problems.push(Problem::at(file, key.span(), message).with_help(help));
            continue;
        };
        if let Some(section) = (sections.iter()).find(|s| s.unnamed_kinds().contains(kind)) {
            found.push(Found {
                kind: *kind,
                section: *section,
                table: value,
            });
            continue;
        }
        let DeValue::Table(providers) = value.into_inner() else {
            let message =
                format!("[defaults.{kind}] is a table per provider: [defaults.{kind}.PROVIDER]");
            problems.push(Problem::at(file, key.span(), message));
            continue;
        };
        for (provider, table) in providers {
            let section = (sections.iter())
                .find(|s| s.provider() == provider.get_ref() && s.kinds().contains(kind));
            match section {
                Some(section) => found.push(Found {
                    kind: *kind,
                    section: *section,
                    table,
                }),
                None => problems.push(no_such_provider(file, *kind, &provider, sections)),
            }
        }
    }
    found
}

fn no_such_provider(
    file: &SourceFile,
    kind: ResourceKind,
    provider: &Spanned<toml::de::DeString<'_>>,
    sections: Sections,
) -> Problem {
    let message = format!("`{}` is no provider of {kind} tables", provider.get_ref());
    let providers: Vec<_> = (sections.iter())
        .filter(|s| s.kinds().contains(&kind))
        .map(|s| s.provider())
        .collect();
    let help = format!(
        "the providers of {kind} tables: \"{}\"",
        providers.join("\", \"")
    );
    Problem::at(file, provider.span(), message).with_help(help)
}

/// Reports, and takes out, each key of a defaults table (at `prefix`) that the provider's
/// tables of the kind do not have; and the keys defaults cannot give.
fn refuse_unknown_keys(
    table: &mut DeTable<'_>,
    schema: &KindSchema,
    prefix: &str,
    file: &SourceFile,
    problems: &mut Problems,
) {
    let mut refused = Vec::new();
    for (key, value) in table.iter_mut() {
        let path = format!("{prefix}{}", key.get_ref());
        if prefix.is_empty() && matches!(key.get_ref().as_ref(), "provider" | FOR_EACH) {
            let message = format!("`{path}` cannot be a default");
            let help = "the table's header names the provider; for-each is each table's own";
            problems.push(Problem::at(file, key.span(), message).with_help(help));
            refused.push(key.get_ref().to_string());
        } else if prefix.is_empty() && key.get_ref() == IGNORE_CHANGES {
            continue;
        } else if schema_path::steps(schema, &path).is_none() {
            let message = format!("`{path}` is not a key of these tables");
            let help = format!("their keys: {}", schema.keys().join(", "));
            problems.push(Problem::at(file, key.span(), message).with_help(help));
            refused.push(key.get_ref().to_string());
        } else if let DeValue::Table(nested) = value.get_mut() {
            refuse_unknown_keys(nested, schema, &format!("{path}."), file, problems);
        }
    }
    for key in refused {
        table.remove(key.as_str());
    }
}
