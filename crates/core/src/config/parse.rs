//! Parsing the files and merging them. Each top-level section, and each entry of a named
//! section such as `[load-balancer.NAME]`, is deserialized on its own: serde stops at the
//! first error, so this way one bad resource does not hide the errors of the others.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use serde_spanned::Spanned;
use toml::de::{DeArray, DeString, DeTable, DeValue, Deserializer, ValueDeserializer};

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::raw::{
    RawDocument, RawKubernetesBackend, RawMaintenance, RawMoved, RawPostgres, RawRollout,
    RawSettings, RawUnrouted,
};
use super::reuse::Expanded;
use super::section::{ConfigSection, Raw, Table};
use crate::model::ResourceKind;
use crate::parallel::map_in_parallel;

/// The providers' config sections the files are read with (see [`ConfigSection`]).
pub(super) type Sections<'s> = &'s [&'s dyn ConfigSection];

/// A raw section with the file it came from; its span is its table header. Boxed: a raw
/// load balancer is a kilobyte, and the sections map them by name (a `BTreeMap` node holds
/// eleven).
pub(super) struct Sourced<'f, T> {
    pub file: &'f SourceFile,
    pub value: Box<Spanned<T>>,
}

impl<'f, T> Sourced<'f, T> {
    pub fn get(&self) -> &T {
        self.value.get_ref()
    }

    pub fn span(&self) -> Range<usize> {
        self.value.span()
    }

    /// The file and span of the table.
    fn place(&self) -> (&'f SourceFile, Range<usize>) {
        (self.file, self.span())
    }
}

/// All files merged. Load balancers are keyed by name, hence sorted by address.
#[derive(Default)]
pub(super) struct RawConfig<'f> {
    pub sections: Sections<'static>,
    /// The `[provider.NAME]` of each section that has one, by the section's index.
    pub section_settings: BTreeMap<usize, Table<'f>>,
    /// The resource tables that name a section's provider, by kind and key.
    pub section_resources: BTreeMap<(ResourceKind, String), SectionResource<'f>>,
    pub settings: Option<Sourced<'f, RawSettings>>,
    pub postgres: Option<Sourced<'f, RawPostgres>>,
    pub kubernetes_backend: Option<Sourced<'f, RawKubernetesBackend>>,
    pub maintenance: Option<Sourced<'f, RawMaintenance>>,
    pub rollout: Option<Sourced<'f, RawRollout>>,
    /// Every `[[moved]]` entry, in file order (the files in theirs).
    pub moved: Vec<Sourced<'f, RawMoved>>,
    /// Resource tables naming no provider of their kind, by kind, for validation to refuse.
    pub unrouted: BTreeMap<ResourceKind, BTreeMap<String, Sourced<'f, RawUnrouted>>>,
}

/// A resource table of a section's provider.
pub(super) struct SectionResource<'f> {
    /// The section's index.
    pub section: usize,
    pub table: Table<'f>,
    /// Where the table writes `provider = "…"`.
    pub provider: Range<usize>,
    /// Its `ignore-changes`, each entry where it is written: core's key in every provider's
    /// table, taken out before the section reads the rest.
    pub ignore_changes: Vec<Spanned<String>>,
    /// The table as reuse made it, when that is not what the file writes.
    pub written: Option<toml::Table>,
}

impl<'f> RawConfig<'f> {
    /// Whether the provider's resources have what they need: its `[provider.NAME]` table, when
    /// it has one.
    pub fn has_provider(&self, name: &str) -> bool {
        self.section_index(name).is_some_and(|i| {
            !self.sections[i].has_settings() || self.section_settings.contains_key(&i)
        })
    }

    /// Every provider a resource may name, in the sections' order.
    pub fn provider_names(&self) -> Vec<&'static str> {
        self.sections.iter().map(|s| s.provider()).collect()
    }

    /// The sections whose `[KIND.NAME]` tables name them, in their order.
    pub fn sections_of(&self, kind: ResourceKind) -> Vec<&'f dyn ConfigSection> {
        (self.sections.iter())
            .filter(|s| s.kinds().contains(&kind))
            .copied()
            .collect()
    }

    fn section_index(&self, provider: &str) -> Option<usize> {
        self.sections.iter().position(|s| s.provider() == provider)
    }

    /// The keys of every `[cluster.KEY]` of a provider of clusters, sorted.
    pub fn cluster_names(&self) -> Vec<&str> {
        (self.section_resources.keys())
            .filter(|(kind, _)| *kind == ResourceKind::Cluster)
            .map(|(_, key)| key.as_str())
            .collect()
    }

    /// The provider `[cluster.KEY]` names, when it is a provider of clusters.
    pub fn cluster_provider(&self, key: &str) -> Option<&'static str> {
        let found = self
            .section_resources
            .get(&(ResourceKind::Cluster, key.to_string()))?;
        Some(self.sections[found.section].provider())
    }

    /// The cluster tables, with their section's index.
    pub fn cluster_tables(&self) -> impl Iterator<Item = (&str, usize, &Table<'f>)> {
        (self.section_resources.iter())
            .filter(|((kind, _), _)| *kind == ResourceKind::Cluster)
            .map(|((_, key), found)| (key.as_str(), found.section, &found.table))
    }
}

/// Sections whose tables hold named entries, each parsed on its own.
pub(super) const NAMED_SECTIONS: [&str; 4] = ["cluster", "load-balancer", "nodes", "provider"];

pub(super) fn parse<'f>(
    files: &'f [SourceFile],
    sections: Sections<'static>,
    variables: &super::variables::Variables,
    problems: &mut Problems,
) -> RawConfig<'f> {
    let mut config = RawConfig {
        sections,
        ..RawConfig::default()
    };
    let roots = files
        .iter()
        .map(|file| parse_roots(file, problems))
        .collect();
    let (roots, expanded) = super::reuse::expand(files, roots, sections, variables, problems);
    for (file, roots) in files.iter().zip(roots) {
        let parsed = deserialize_roots(roots, sections, &expanded);
        config.merge_documents(file, parsed, problems);
    }
    config
}

/// [`parse`] for documents parsed already, their spans into `file`: the layers of a config
/// laid over each other (see `layers`), one document per file. Reuse is expanded on the
/// laid-over documents, so a later layer's `[variables]` and `[defaults…]` win key by key.
pub(super) fn parse_layered<'f>(
    file: &'f SourceFile,
    documents: Vec<Spanned<DeTable<'f>>>,
    sections: Sections<'static>,
    variables: &super::variables::Variables,
    problems: &mut Problems,
) -> RawConfig<'f> {
    let mut config = RawConfig {
        sections,
        ..RawConfig::default()
    };
    let (roots, expanded) = expand_layered(file, documents, sections, variables, problems);
    let parsed = deserialize_roots(roots, sections, &expanded);
    config.merge_documents(file, parsed, problems);
    config
}

/// The laid-over documents of joined files (`file`, see `layers`) with reuse expanded: the
/// tables as the providers' sections read them.
pub(super) fn expand_layered<'f>(
    file: &'f SourceFile,
    documents: Vec<Spanned<DeTable<'f>>>,
    sections: Sections<'static>,
    variables: &super::variables::Variables,
    problems: &mut Problems,
) -> (Vec<Root<'f>>, Expanded) {
    let roots = (documents.into_iter())
        .map(|document| Root {
            span: document.span(),
            table: document.into_inner(),
        })
        .collect();
    let files = std::slice::from_ref(file);
    let (mut roots, expanded) =
        super::reuse::expand(files, vec![roots], sections, variables, problems);
    (roots.pop().unwrap_or_default(), expanded)
}

impl<'f> RawConfig<'f> {
    fn merge_documents(
        &mut self,
        file: &'f SourceFile,
        parsed: Vec<Parsed>,
        problems: &mut Problems,
    ) {
        for document in parsed {
            match document {
                Ok(Document::Core(document)) => self.merge(file, *document, problems),
                Ok(Document::Section(entry)) => self.merge_section(file, entry, problems),
                Err(failed) => failed.report(file, problems),
            }
        }
    }
}

/// A file's top-level table, or one of its pieces: what `[variables]`, `[defaults]` and
/// `for-each` are expanded in before the tables are deserialized.
pub(super) struct Root<'f> {
    pub span: Range<usize>,
    pub table: DeTable<'f>,
}

/// The file as partial documents, one per section or named entry; a syntax error is a
/// problem and no document.
#[cfg(test)]
fn parse_file(file: &SourceFile, sections: Sections, problems: &mut Problems) -> Vec<Parsed> {
    deserialize_roots(parse_roots(file, problems), sections, &Expanded::new())
}

/// The file parsed whole, its sections and entries deserialized on every core.
#[cfg(test)]
fn parse_whole(file: &SourceFile, sections: Sections, problems: &mut Problems) -> Vec<Parsed> {
    deserialize_roots(whole_root(file, problems), sections, &Expanded::new())
}

/// The file's tables: in pieces parsed on every core when it is large, else whole.
fn parse_roots<'f>(file: &'f SourceFile, problems: &mut Problems) -> Vec<Root<'f>> {
    let pieces = super::pieces::cut(&file.text, &NAMED_SECTIONS);
    if pieces.len() > 1 {
        if let Some(roots) = roots_in_pieces(&file.text, pieces) {
            return roots;
        }
    }
    whole_root(file, problems)
}

/// The file parsed whole, on one thread.
fn whole_root<'f>(file: &'f SourceFile, problems: &mut Problems) -> Vec<Root<'f>> {
    let (root, errors) = DeTable::parse_recoverable(&file.text);
    if !errors.is_empty() {
        for error in &errors {
            problems.push_toml(file, error);
        }
        return vec![];
    }
    let span = root.span();
    vec![Root {
        span,
        table: root.into_inner(),
    }]
}

/// Every section and entry of the roots deserialized, on every core.
fn deserialize_roots(roots: Vec<Root<'_>>, sections: Sections, expanded: &Expanded) -> Vec<Parsed> {
    let parts: Vec<_> = (roots.into_iter())
        .flat_map(|root| {
            let span = root.span;
            (split(root.table, sections, expanded).into_iter())
                .map(move |part| (span.clone(), part))
        })
        .collect();
    map_in_parallel(parts, PARTS_PER_THREAD, |(span, part)| {
        deserialize(&span, part, sections)
    })
}

type Parsed = Result<Document, Failed>;

/// A part that did not deserialize, and the resource it was, if it was one: an error in a
/// value it inherits names it.
struct Failed {
    error: toml::de::Error,
    resource: Option<String>,
}

impl From<toml::de::Error> for Failed {
    fn from(error: toml::de::Error) -> Self {
        Failed {
            error,
            resource: None,
        }
    }
}

impl Failed {
    fn report(&self, file: &SourceFile, problems: &mut Problems) {
        let since = problems.count();
        problems.push_toml(file, &self.error);
        if let Some(resource) = &self.resource {
            problems.name_inheritor(since, resource);
        }
    }
}

/// One part of a file, deserialized: core's sections, or a table of a provider's section.
enum Document {
    /// Boxed: every part of a file is one, and most are one small table.
    Core(Box<RawDocument>),
    Section(SectionEntry),
}

/// A table a provider's section deserialized.
struct SectionEntry {
    section: usize,
    slot: Slot,
    key: String,
    span: Range<usize>,
    /// Where a resource table writes its provider.
    provider: Range<usize>,
    ignore_changes: Vec<Spanned<String>>,
    raw: Raw,
    /// The table as reuse made it, when that is not what the file writes.
    written: Option<toml::Table>,
}

/// Which table of a section's provider a part is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// `[provider.NAME]`.
    Settings,
    /// `[load-balancer.KEY]` (of the kind) with `provider = "NAME"`.
    Resource(ResourceKind),
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Document::Core(document) => document.fmt(f),
            Document::Section(entry) => {
                let SectionEntry {
                    section,
                    slot,
                    key,
                    span,
                    ..
                } = entry;
                write!(f, "section {section} {slot:?} {key} at {span:?}")
            }
        }
    }
}

/// A part of a file before it is deserialized.
enum Part<'f> {
    Core(DeTable<'f>),
    Section {
        section: usize,
        slot: Slot,
        key: String,
        provider: Range<usize>,
        value: Spanned<DeValue<'f>>,
        /// A resource table's `ignore-changes`, taken out of `value`.
        ignore_changes: Option<Spanned<DeValue<'f>>>,
        /// Whether reuse made the table other than the file writes it.
        expanded: bool,
    },
}

fn deserialize(root_span: &Range<usize>, part: Part<'_>, sections: Sections) -> Parsed {
    match part {
        Part::Core(part) => {
            let root = Spanned::new(root_span.clone(), part);
            RawDocument::deserialize(Deserializer::from(root))
                .map(|d| Document::Core(Box::new(d)))
                .map_err(Failed::from)
        }
        Part::Section {
            section,
            slot,
            key,
            provider,
            value,
            ignore_changes,
            expanded,
        } => {
            let span = value.span();
            let written = match expanded {
                true => Some(toml::Table::deserialize(ValueDeserializer::from(
                    value.clone(),
                ))?),
                false => None,
            };
            let ignore_changes = match ignore_changes {
                Some(list) => Vec::<Spanned<String>>::deserialize(ValueDeserializer::from(list))?,
                None => vec![],
            };
            let table = ValueDeserializer::from(value);
            let raw = match slot {
                Slot::Settings => sections[section]
                    .parse_settings(table)
                    .map_err(Failed::from),
                Slot::Resource(kind) => {
                    sections[section]
                        .parse_resource(kind, table)
                        .map_err(|error| Failed {
                            error,
                            resource: Some(format!("{kind}.{key}")),
                        })
                }
            }?;
            Ok(Document::Section(SectionEntry {
                section,
                slot,
                key,
                span,
                provider,
                ignore_changes,
                raw,
                written,
            }))
        }
    }
}

/// The file parsed piece by piece on every core; None — parse it whole — when a piece is not
/// valid TOML on its own (the whole file's errors are the ones to report) or when two pieces
/// write into the same table (which only the whole file's parse merges, or refuses, as TOML
/// says).
fn roots_in_pieces(text: &str, pieces: Vec<Range<usize>>) -> Option<Vec<Root<'_>>> {
    let parsed = map_in_parallel(pieces, 1, |piece| {
        let offset = piece.start;
        let (root, errors) = DeTable::parse_recoverable(&text[piece]);
        if !errors.is_empty() {
            return None;
        }
        let span = root.span();
        let span = span.start + offset..span.end + offset;
        let table = super::pieces::placed_at(root.into_inner(), offset);
        Some((tables_written(&table), Root { span, table }))
    });
    let parsed = parsed.into_iter().collect::<Option<Vec<_>>>()?;
    let mut seen = std::collections::HashSet::new();
    let mut roots = Vec::with_capacity(parsed.len());
    for (tables, root) in parsed {
        for table in tables {
            if !seen.insert(table) {
                return None;
            }
        }
        roots.push(root);
    }
    Some(roots)
}

/// The tables a piece writes into: each top-level table, or for a named section each of its
/// entries (`load-balancer.web`).
fn tables_written(root: &DeTable<'_>) -> Vec<(String, String)> {
    let mut tables = Vec::new();
    for (key, value) in root {
        let key = key.get_ref().to_string();
        match value.get_ref() {
            DeValue::Table(entries) if NAMED_SECTIONS.contains(&key.as_str()) => {
                for name in entries.keys() {
                    tables.push((key.clone(), name.get_ref().to_string()));
                }
            }
            _ => tables.push((key, String::new())),
        }
    }
    tables
}

/// Parts deserialized on one thread before the work is split across cores (a config of
/// thousands of load balancers spent a third of its loading time here).
const PARTS_PER_THREAD: usize = 256;

/// Cuts a document into one-entry documents: one per top-level key, and one per entry of a
/// named section (`{load-balancer = {a, b}}` becomes `{load-balancer = {a}}`,
/// `{load-balancer = {b}}`).
/// An entry that belongs to a provider's section becomes a [`Part::Section`]; each
/// `[[moved]]` entry is a part of its own too (`{moved = [a, b]}` becomes `{moved = [a]}`,
/// `{moved = [b]}`).
fn split<'f>(root: DeTable<'f>, sections: Sections, expanded: &Expanded) -> Vec<Part<'f>> {
    let mut parts = Vec::new();
    for (key, value) in root {
        let span = value.span();
        match value.into_inner() {
            DeValue::Array(entries) if key.get_ref() == MOVED => {
                for entry in entries {
                    let one = DeValue::Array(DeArray::from_iter([entry]));
                    parts.push(Part::Core(DeTable::from_iter([(
                        key.clone(),
                        Spanned::new(span.clone(), one),
                    )])));
                }
            }
            DeValue::Table(entries) if NAMED_SECTIONS.contains(&key.get_ref().as_ref()) => {
                for entry in entries {
                    if let Some((section, slot, provider)) =
                        section_of(key.get_ref(), &entry, sections)
                    {
                        let (value, ignore_changes) = match slot {
                            Slot::Resource(_) => without_ignore_changes(entry.1),
                            Slot::Settings => (entry.1, None),
                        };
                        let name = entry.0.get_ref().to_string();
                        let expanded = match slot {
                            Slot::Resource(kind) => expanded.contains(&(kind, name)),
                            Slot::Settings => false,
                        };
                        parts.push(Part::Section {
                            expanded,
                            section,
                            slot,
                            key: entry.0.get_ref().to_string(),
                            provider,
                            value,
                            ignore_changes,
                        });
                        continue;
                    }
                    let section_key = key.clone();
                    let section = DeValue::Table(DeTable::from_iter([entry]));
                    parts.push(Part::Core(DeTable::from_iter([(
                        section_key,
                        Spanned::new(span.clone(), section),
                    )])));
                }
            }
            other => parts.push(Part::Core(DeTable::from_iter([(
                key,
                Spanned::new(span, other),
            )]))),
        }
    }
    parts
}

/// The section an entry of a named section belongs to: `[provider.NAME]` of a section's
/// provider, or a resource table of a kind the section takes that names its provider; with
/// where the table writes `provider = …` (nowhere for settings).
fn section_of(
    named_section: &str,
    (key, entry): &(Spanned<DeString<'_>>, Spanned<DeValue<'_>>),
    sections: Sections,
) -> Option<(usize, Slot, Range<usize>)> {
    if named_section == "provider" {
        let index =
            (sections.iter()).position(|s| s.provider() == key.get_ref() && s.has_settings())?;
        return Some((index, Slot::Settings, key.span()));
    }
    let kind = *ResourceKind::ALL
        .iter()
        .find(|kind| kind.as_str() == named_section)?;
    // A kind one section has all of (`[nodes.KEY]`) names no provider.
    if let Some(index) = sections
        .iter()
        .position(|s| s.unnamed_kinds().contains(&kind))
    {
        return Some((index, Slot::Resource(kind), key.span()));
    }
    let (provider, span) = provider_of(entry)?;
    let index = sections
        .iter()
        .position(|s| s.provider() == provider && s.kinds().contains(&kind))?;
    Some((index, Slot::Resource(kind), span))
}

/// A resource table without its `ignore-changes`, and that key's value: core reads it for
/// every provider, so no section has to know it.
fn without_ignore_changes<'f>(
    entry: Spanned<DeValue<'f>>,
) -> (Spanned<DeValue<'f>>, Option<Spanned<DeValue<'f>>>) {
    let span = entry.span();
    let table = match entry.into_inner() {
        DeValue::Table(table) => table,
        // Not a table: its section says so.
        other => return (Spanned::new(span, other), None),
    };
    let mut ignore_changes = None;
    let rest = DeTable::from_iter(table.into_iter().filter_map(|(key, value)| {
        if key.get_ref() == IGNORE_CHANGES {
            ignore_changes = Some(value);
            None
        } else {
            Some((key, value))
        }
    }));
    (Spanned::new(span, DeValue::Table(rest)), ignore_changes)
}

/// The top-level array of `[[moved]]` entries.
const MOVED: &str = "moved";

/// The key every resource table may have, whatever its provider.
pub(super) const IGNORE_CHANGES: &str = "ignore-changes";

/// The `provider = "…"` a named entry's table writes, and where.
fn provider_of<'e>(entry: &'e Spanned<DeValue<'_>>) -> Option<(&'e str, Range<usize>)> {
    let DeValue::Table(table) = entry.get_ref() else {
        return None;
    };
    table.iter().find_map(|(key, value)| match value.get_ref() {
        DeValue::String(text) if key.get_ref() == "provider" => Some((text.as_ref(), value.span())),
        _ => None,
    })
}

impl<'f> RawConfig<'f> {
    fn merge(&mut self, file: &'f SourceFile, document: RawDocument, problems: &mut Problems) {
        let RawDocument {
            settings,
            backend,
            provider,
            maintenance,
            rollout,
            moved,
            load_balancer,
            cluster,
            nodes,
            // Taken out before the document is deserialized (`reuse.rs`).
            variables: _,
            defaults: _,
        } = document;
        let moved = moved.into_iter().map(|value| Sourced {
            file,
            value: Box::new(value),
        });
        self.moved.extend(moved);
        place(&mut self.settings, file, settings, "[settings]", problems);
        let postgres = backend.postgres;
        place(
            &mut self.postgres,
            file,
            postgres,
            "[backend.postgres]",
            problems,
        );
        place(
            &mut self.kubernetes_backend,
            file,
            backend.kubernetes,
            "[backend.kubernetes]",
            problems,
        );
        for (name, table) in provider {
            problems.push(self.no_provider_table(file, &name, table.span()));
        }
        place(
            &mut self.maintenance,
            file,
            maintenance,
            "[maintenance]",
            problems,
        );
        place(&mut self.rollout, file, rollout, "[rollout]", problems);
        let unrouted = [
            (ResourceKind::LoadBalancer, load_balancer),
            (ResourceKind::Cluster, cluster),
            (ResourceKind::Nodes, nodes),
        ];
        for (kind, entries) in unrouted {
            for (name, value) in entries {
                if !self.defined_before(kind, &name, file, value.span(), problems) {
                    let table = Sourced { file, value };
                    self.unrouted.entry(kind).or_default().insert(name, table);
                }
            }
        }
    }
}

impl<'f> RawConfig<'f> {
    /// Whether `[KIND.NAME]` was already defined, whichever provider it named (a name is one
    /// resource of its kind); reports the second definition.
    fn defined_before(
        &self,
        kind: ResourceKind,
        name: &str,
        file: &SourceFile,
        span: Range<usize>,
        problems: &mut Problems,
    ) -> bool {
        let Some(first) = self.first_definition(kind, name) else {
            return false;
        };
        problems.push(defined_twice(&format!("{kind}.{name}"), first, file, span));
        true
    }

    /// Where `[KIND.NAME]` is defined: a section's table, or one naming no provider of its kind.
    fn first_definition(
        &self,
        kind: ResourceKind,
        name: &str,
    ) -> Option<(&'f SourceFile, Range<usize>)> {
        match self.section_resources.get(&(kind, name.to_string())) {
            Some(found) => Some(found.table.place()),
            None => self.unrouted.get(&kind)?.get(name).map(Sourced::place),
        }
    }

    /// Adds a table of a section's provider, unless it is defined already.
    fn merge_section(
        &mut self,
        file: &'f SourceFile,
        entry: SectionEntry,
        problems: &mut Problems,
    ) {
        let SectionEntry {
            section,
            slot,
            key,
            span,
            provider,
            ignore_changes,
            raw,
            written,
        } = entry;
        let table = Table::new(file, span.clone(), raw);
        let kind = match slot {
            Slot::Settings => {
                let what = format!("[provider.{key}]");
                match self.section_settings.get(&section) {
                    Some(first) => problems.push(defined_twice(&what, first.place(), file, span)),
                    None => {
                        self.section_settings.insert(section, table);
                    }
                }
                return;
            }
            Slot::Resource(kind) => kind,
        };
        if self.defined_before(kind, &key, file, span, problems) {
            return;
        }
        let resource = SectionResource {
            section,
            table,
            provider,
            ignore_changes,
            written,
        };
        self.section_resources.insert((kind, key), resource);
    }

    /// `[provider.NAME]` of a provider that has no such table, or of none.
    fn no_provider_table(&self, file: &SourceFile, name: &str, span: Range<usize>) -> Problem {
        let with_tables: Vec<_> = (self.sections.iter())
            .filter(|s| s.has_settings())
            .map(|s| s.provider())
            .collect();
        let message = match self.section_index(name) {
            Some(_) => format!(
                "`{name}` has no [provider.{name}] table: its resources say how they are reached"
            ),
            None => format!("`{name}` is not a supported provider"),
        };
        let help = format!(
            "the providers with a table: \"{}\"",
            with_tables.join("\", \"")
        );
        Problem::at(file, span, message).with_help(help)
    }
}

impl<'f> Table<'f> {
    fn place(&self) -> (&'f SourceFile, Range<usize>) {
        (self.file, self.span())
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
        Some(first) => problems.push(defined_twice(what, first.place(), file, value.span())),
        None => {
            *slot = Some(Sourced {
                file,
                value: Box::new(value),
            })
        }
    }
}

fn defined_twice(
    what: &str,
    (first_file, first_span): (&SourceFile, Range<usize>),
    file: &SourceFile,
    span: Range<usize>,
) -> Problem {
    Problem::at(file, span, format!("{what} is defined twice"))
        .with_help("keep one definition")
        .with_note(Problem::at(first_file, first_span, "first defined here"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::TestSection;

    /// `count` load balancers, then the provider: large enough to be cut.
    fn large(count: usize, extra: &str) -> String {
        let mut text = String::new();
        for i in 0..count {
            text.push_str(&format!(
                "[load-balancer.lb{i}]\nprovider = \"test\"\nsize = 1\n\
                 ccm = \"a-cluster-of-some-name\"\n\
                 [[load-balancer.lb{i}.ports]]\nport = 80\nnode-port = 30080\n"
            ));
        }
        text + extra + "[provider.test]\nendpoint = \"embedded\"\n"
    }

    /// The documents (sorted, as their merge does) and the problems of `text` parsed whole or
    /// (when it is large enough) in pieces.
    fn parsed(in_pieces: bool, text: &str) -> (Vec<String>, Vec<String>) {
        let file = SourceFile::new("a.toml", text);
        let mut problems = Problems::default();
        let parse = if in_pieces { parse_file } else { parse_whole };
        let mut documents = Vec::new();
        for document in parse(&file, &[&TestSection], &mut problems) {
            match document {
                Ok(document) => documents.push(format!("{document:?}")),
                Err(failed) => failed.report(&file, &mut problems),
            }
        }
        documents.sort();
        let problems = match problems.into_result(()) {
            Ok(()) => vec![],
            Err(error) => error.lines(),
        };
        (documents, problems)
    }

    #[test]
    fn a_large_file_reads_the_same_in_pieces_as_whole() {
        let text = large(3000, "");
        assert!(crate::config::pieces::cut(&text, &NAMED_SECTIONS).len() > 10);
        let whole = parsed(false, &text);
        assert_eq!(whole.0.len(), 3001);
        assert!(whole.1.is_empty());
        assert_eq!(parsed(true, &text), whole);
    }

    #[test]
    fn errors_in_a_later_piece_point_at_their_place_in_the_file() {
        let text = large(3000, "").replace(
            "[load-balancer.lb2500]\nprovider = \"test\"\nsize = 1\n",
            "[load-balancer.lb2500]\nprovider = \"test\"\nbogus = 1\n",
        );
        let (_, problems) = parsed(true, &text);
        assert_eq!(problems, parsed(false, &text).1);
        let line = text.lines().position(|l| l == "bogus = 1").unwrap() + 1;
        assert!(
            problems[0].starts_with(&format!("a.toml:{line}:1: unknown key `bogus`")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_table_written_in_two_pieces_is_read_as_the_whole_file_reads_it() {
        // lb5's ports again at the end: legal TOML only whole (an array of tables grows), and
        // lb5 twice: a duplicate only the whole file's parser reports.
        for extra in [
            "[[load-balancer.lb5.ports]]\nport = 81\nnode-port = 30081\n",
            "[load-balancer.lb5]\nsize = 2\n",
            "[provider.test]\nendpoint = \"embedded\"\n",
        ] {
            let text = large(3000, extra);
            assert_eq!(parsed(true, &text), parsed(false, &text), "{extra}");
        }
        let (_, problems) = parsed(true, &large(3000, "[load-balancer.lb5]\nsize = 2\n"));
        assert!(problems[0].contains("duplicate key"), "{problems:?}");
    }
}
