//! Parsing the files and merging them. Each top-level section, and each entry of a named
//! section such as `[load-balancer.NAME]`, is deserialized on its own: serde stops at the
//! first error, so this way one bad resource does not hide the errors of the others.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue, Deserializer};

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::raw::{RawCloudscale, RawDocument, RawLoadBalancer, RawMaintenance, RawSettings};

/// A raw section with the file it came from; its span is its table header.
pub(super) struct Sourced<'f, T> {
    pub file: &'f SourceFile,
    pub value: Spanned<T>,
}

impl<T> Sourced<'_, T> {
    pub fn get(&self) -> &T {
        self.value.get_ref()
    }

    pub fn span(&self) -> Range<usize> {
        self.value.span()
    }
}

/// All files merged. Load balancers are keyed by name, hence sorted by address.
#[derive(Default)]
pub(super) struct RawConfig<'f> {
    pub settings: Option<Sourced<'f, RawSettings>>,
    pub cloudscale: Option<Sourced<'f, RawCloudscale>>,
    pub maintenance: Option<Sourced<'f, RawMaintenance>>,
    pub load_balancers: BTreeMap<String, Sourced<'f, RawLoadBalancer>>,
}

/// Sections whose tables hold named entries, each parsed on its own.
const NAMED_SECTIONS: [&str; 2] = ["load-balancer", "provider"];

pub(super) fn parse<'f>(files: &'f [SourceFile], problems: &mut Problems) -> RawConfig<'f> {
    let mut config = RawConfig::default();
    for file in files {
        for document in parse_file(file, problems) {
            config.merge(file, document, problems);
        }
    }
    config
}

/// The file as partial documents, one per section or named entry that parsed.
fn parse_file(file: &SourceFile, problems: &mut Problems) -> Vec<RawDocument> {
    let (root, errors) = DeTable::parse_recoverable(&file.text);
    if !errors.is_empty() {
        for error in &errors {
            problems.push_toml(file, error);
        }
        return vec![];
    }
    let span = root.span();
    split(root.into_inner())
        .into_iter()
        .filter_map(|part| {
            let deserializer = Deserializer::from(Spanned::new(span.clone(), part));
            RawDocument::deserialize(deserializer)
                .map_err(|error| problems.push_toml(file, &error))
                .ok()
        })
        .collect()
}

/// Cuts a document into one-entry documents: one per top-level key, and one per entry of a
/// named section (`{load-balancer = {a, b}}` becomes `{load-balancer = {a}}`,
/// `{load-balancer = {b}}`).
fn split(root: DeTable<'_>) -> Vec<DeTable<'_>> {
    let mut parts = Vec::new();
    for (key, value) in root {
        let span = value.span();
        match value.into_inner() {
            DeValue::Table(entries) if NAMED_SECTIONS.contains(&key.get_ref().as_ref()) => {
                for entry in entries {
                    let section = DeValue::Table(DeTable::from_iter([entry]));
                    parts.push(DeTable::from_iter([(
                        key.clone(),
                        Spanned::new(span.clone(), section),
                    )]));
                }
            }
            other => parts.push(DeTable::from_iter([(key, Spanned::new(span, other))])),
        }
    }
    parts
}

impl<'f> RawConfig<'f> {
    fn merge(&mut self, file: &'f SourceFile, document: RawDocument, problems: &mut Problems) {
        let RawDocument {
            settings,
            provider,
            maintenance,
            load_balancer,
            cluster,
            nodes,
        } = document;
        place(&mut self.settings, file, settings, "[settings]", problems);
        let cloudscale = provider.cloudscale;
        place(
            &mut self.cloudscale,
            file,
            cloudscale,
            "[provider.cloudscale]",
            problems,
        );
        place(
            &mut self.maintenance,
            file,
            maintenance,
            "[maintenance]",
            problems,
        );
        for (name, value) in load_balancer {
            match self.load_balancers.entry(name) {
                Entry::Vacant(slot) => {
                    slot.insert(Sourced { file, value });
                }
                Entry::Occupied(first) => {
                    let what = format!("load-balancer.{}", first.key());
                    problems.push(defined_twice(&what, first.get(), file, value.span()));
                }
            }
        }
        let unsupported = [
            ("clusters", "cluster", cluster),
            ("node policies", "nodes", nodes),
        ];
        for (what, table, section) in unsupported {
            if let Some(section) = section {
                let message = format!("{what} ([{table}.NAME]) are not supported yet");
                problems.push(Problem::at(file, section.span(), message));
            }
        }
    }
}

/// Puts a section that may appear in only one file into its slot.
fn place<'f, T>(
    slot: &mut Option<Sourced<'f, T>>,
    file: &'f SourceFile,
    section: Option<Spanned<T>>,
    what: &str,
    problems: &mut Problems,
) {
    let Some(value) = section else { return };
    match slot {
        Some(first) => problems.push(defined_twice(what, first, file, value.span())),
        None => *slot = Some(Sourced { file, value }),
    }
}

fn defined_twice<T>(
    what: &str,
    first: &Sourced<'_, T>,
    file: &SourceFile,
    span: Range<usize>,
) -> Problem {
    Problem::at(file, span, format!("{what} is defined twice"))
        .with_help("keep one definition")
        .with_note(Problem::at(first.file, first.span(), "first defined here"))
}
