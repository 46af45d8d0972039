//! Environments: several configs read as one (`-c base -c env/prod`), each layer laid over
//! the ones before it key by key.
//!
//! The layers' files are joined into one [`SourceFile`] and each is parsed on its own with
//! its spans moved to where its text starts in the joined one; the layers are then merged as
//! TOML tables before anything is deserialized. So a table holding keys of several files is
//! still one table with a span for every value, and a value's place — for an error, for
//! `config show --origin`, for a relative path — is the file its span falls in. Whatever
//! makes a value later (defaults, variables, one resource per item: `reuse`, run on the
//! laid-over documents) keeps the span of the text it comes from, and so its origin. An
//! inherited default's span is moved past the joined file's end (`SourceFile::inherited_span`,
//! with the joined file as its own `others`), so a problem can say it is inherited; resolving
//! it gives the joined file's span back, which falls in the file that writes it.
//!
//! Within a layer (a directory's files) each table is still written in one file only; the
//! parser reports one written twice.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::diagnostics::Problems;
use super::files::SourceFile;
use crate::parallel::map_in_parallel;

/// Sections whose entries are each a unit of their own (`[load-balancer.web]`): a later
/// layer's entry of the same name is laid over the earlier one, a new name is added.
const NAMED_SECTIONS: [&str; 4] = ["cluster", "load-balancer", "nodes", "provider"];

/// What a table of the joined files is, to find it again in another layer: a top-level key
/// (`settings`), or an entry of a named section (`load-balancer`, `web`).
type Unit = (String, Option<String>);

/// The layers' files joined, and how many files each layer has.
pub(super) struct Layered {
    pub file: SourceFile,
    files_per_layer: Vec<usize>,
}

impl Layered {
    pub fn new(layers: Vec<Vec<SourceFile>>) -> Layered {
        let files_per_layer = layers.iter().map(Vec::len).collect();
        // One file with itself as its `others`: a value inherited from its defaults keeps a
        // span past its end (see `SourceFile::inherited_span`), which falls back in it.
        let joined = SourceFile::joined(layers.into_iter().flatten().collect());
        let file = SourceFile::with_each_other(vec![joined]).remove(0);
        Layered {
            file,
            files_per_layer,
        }
    }

    pub fn layer_count(&self) -> usize {
        self.files_per_layer.len()
    }

    /// One document per file, in order, with every table an earlier layer also writes laid
    /// over that layer's (and so left out of the later file's document). A syntax error is
    /// a problem and leaves its file's document empty.
    pub fn documents(&self, problems: &mut Problems) -> Vec<Spanned<DeTable<'_>>> {
        // Each file parsed on a core of its own; laid over each other in order.
        let parsed = map_in_parallel(self.file.parts(), 1, |(start, part)| {
            let span = start..start + part.text.len();
            let mut problems = Problems::default();
            let table = parse(&self.file.text[span.clone()], part, start, &mut problems);
            (span, table, problems)
        });
        let mut parsed = parsed.into_iter();
        let mut merged: Vec<Spanned<DeTable<'_>>> = Vec::new();
        let mut holder: HashMap<Unit, usize> = HashMap::new();
        for &count in &self.files_per_layer {
            let mut in_this_layer = HashSet::new();
            for (span, table, found) in parsed.by_ref().take(count) {
                problems.append(found);
                let layer = Layer {
                    merged: &mut merged,
                    holder: &mut holder,
                    in_this_layer: &mut in_this_layer,
                };
                let own = layer.merge_file(table);
                merged.push(Spanned::new(span, own));
            }
        }
        merged
    }
}

/// A file's text parsed, its spans moved `start` bytes on (where it is in the joined text).
fn parse<'f>(
    text: &'f str,
    file: &SourceFile,
    start: usize,
    problems: &mut Problems,
) -> DeTable<'f> {
    let (table, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        for error in &errors {
            problems.push_toml(file, error);
        }
        return DeTable::new();
    }
    super::pieces::placed_at(table.into_inner(), start)
}

/// The merge state while one layer's files are read.
struct Layer<'m, 'f> {
    merged: &'m mut Vec<Spanned<DeTable<'f>>>,
    /// Which document holds each unit.
    holder: &'m mut HashMap<Unit, usize>,
    /// The units this layer wrote already: a second one is a duplicate, left for the parser
    /// to report.
    in_this_layer: &'m mut HashSet<Unit>,
}

impl<'f> Layer<'_, 'f> {
    /// Lays each unit of a file's table over an earlier layer's; returns what is new, the
    /// file's own document.
    fn merge_file(mut self, table: DeTable<'f>) -> DeTable<'f> {
        let document = self.merged.len();
        let mut own = DeTable::new();
        for (key, value) in table {
            let name = key.get_ref().to_string();
            let span = value.span();
            match value.into_inner() {
                DeValue::Table(entries) if NAMED_SECTIONS.contains(&name.as_str()) => {
                    self.merge_entries(&mut own, (&key, span), entries, document);
                }
                value => {
                    let unit = (name, None);
                    let value = Spanned::new(span, value);
                    match self.earlier(&unit, document) {
                        Some(at) => overlay_entry(self.merged[at].get_mut(), key, value),
                        None => {
                            own.insert(key, value);
                        }
                    }
                }
            }
        }
        own
    }

    /// The entries of a named section (`[load-balancer.*]`), each laid over an earlier
    /// layer's entry of its name or added to the file's own section (`section`: its key, and
    /// the span of its table).
    fn merge_entries(
        &mut self,
        own: &mut DeTable<'f>,
        section: (&Spanned<DeString<'f>>, Range<usize>),
        entries: DeTable<'f>,
        document: usize,
    ) {
        let name = section.0.get_ref().to_string();
        for (entry_key, entry) in entries {
            let unit = (name.clone(), Some(entry_key.get_ref().to_string()));
            match self.earlier(&unit, document) {
                Some(at) => overlay_entry(table_at(&mut self.merged[at], &name), entry_key, entry),
                None => {
                    let table = own_section(own, section.0, section.1.clone());
                    table.insert(entry_key, entry);
                }
            }
        }
    }

    /// The document of an earlier layer that writes `unit`, to lay this one over; None when
    /// none does, or when this layer wrote it already (a duplicate, reported as such). Notes
    /// the unit as this layer's, held by `document` when it is new.
    fn earlier(&mut self, unit: &Unit, document: usize) -> Option<usize> {
        let first_in_layer = self.in_this_layer.insert(unit.clone());
        match self.holder.get(unit) {
            Some(&at) if first_in_layer => Some(at),
            Some(_) => None,
            None => {
                self.holder.insert(unit.clone(), document);
                None
            }
        }
    }
}

/// The named section `name` of a merged document, which holds one of its entries.
fn table_at<'d, 'f>(document: &'d mut Spanned<DeTable<'f>>, name: &str) -> &'d mut DeTable<'f> {
    let key = Spanned::new(0..0, DeString::from(name.to_string()));
    match document.get_mut().get_mut(&key).map(Spanned::get_mut) {
        Some(DeValue::Table(table)) => table,
        _ => unreachable!("the holder of an entry of [{name}] has the section"),
    }
}

/// The file's own table of a named section, made at its first entry.
fn own_section<'d, 'f>(
    own: &'d mut DeTable<'f>,
    key: &Spanned<DeString<'f>>,
    span: Range<usize>,
) -> &'d mut DeTable<'f> {
    let section = own
        .entry(key.clone())
        .or_insert_with(|| Spanned::new(span, DeValue::Table(DeTable::new())));
    match section.get_mut() {
        DeValue::Table(table) => table,
        _ => unreachable!("made as a table"),
    }
}

/// Every key of `later` laid over `table`.
pub(super) fn lay_over<'f>(table: &mut DeTable<'f>, later: DeTable<'f>) {
    for (key, value) in later {
        overlay_entry(table, key, value);
    }
}

/// `value` laid over the value of `key` in `table`: tables merge key by key, recursively;
/// anything else — a string, an array, an array of tables — replaces the earlier value whole,
/// key and all, so that its place is the later file's.
fn overlay_entry<'f>(
    table: &mut DeTable<'f>,
    key: Spanned<DeString<'f>>,
    value: Spanned<DeValue<'f>>,
) {
    if let Some(earlier) = table.get_mut(&key) {
        if let (DeValue::Table(earlier), DeValue::Table(_)) = (earlier.get_mut(), value.get_ref()) {
            let DeValue::Table(later) = value.into_inner() else {
                unreachable!("matched as a table")
            };
            lay_over(earlier, later);
            return;
        }
    }
    table.remove(&key);
    table.insert(key, value);
}

#[cfg(test)]
#[path = "layers_tests.rs"]
mod tests;
