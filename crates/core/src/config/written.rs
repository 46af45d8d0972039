//! Where each key of a resource's table is written, by the path [`Step::written_at`] spells
//! (`timeouts.member-connect-ms`, `ports.[http].name`): with an attribute's path mapped the
//! same way (see [`Origin::written_key`](super::Origin::written_key)), an annotation about the
//! attribute points at the key that sets it.
//!
//! [`Step::written_at`]: super::schema_path::Step::written_at

use std::collections::HashMap;
use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use super::files::SourceFile;
use super::rewrite::element_name;
use super::types::SourceLocation;

/// The keys of every resource table of each file read so far, each file parsed once: a config
/// of thousands of tables is not parsed again for each of them.
#[derive(Default)]
pub struct WrittenKeys {
    /// By where a file's text is (each text is one `Arc<str>`, alive with the config while
    /// this is), then by the table's kind and name: each key's path and span in that text.
    files: HashMap<usize, HashMap<(String, String), Vec<Key>>>,
}

type Key = (String, Range<usize>);

impl WrittenKeys {
    /// Every key of the table `[kind.name]` as `file` writes it, with where the key is written;
    /// for joined files (layers) each layer's, a later layer's after an earlier one's.
    pub(super) fn of(
        &mut self,
        file: &SourceFile,
        kind: &str,
        name: &str,
    ) -> Vec<(String, SourceLocation)> {
        let mut keys = Vec::new();
        for (start, part) in file.parts() {
            let at = part.text.as_ptr() as usize;
            let tables = (self.files.entry(at)).or_insert_with(|| tables_of(&part.text));
            let found = tables.get(&(kind.to_string(), name.to_string()));
            // A part's spans are its own: shifted to the joined text, which places them in it.
            keys.extend(found.into_iter().flatten().map(|(path, span)| {
                (
                    path.clone(),
                    file.location(&(span.start + start..span.end + start)),
                )
            }));
        }
        keys
    }
}

/// The keys of each `[kind.name]` table of a file's text, by kind and name.
fn tables_of(text: &str) -> HashMap<(String, String), Vec<Key>> {
    // The config stage parsed every file already: one that fails here has no tables.
    let Ok(document) = DeTable::parse(text) else {
        return HashMap::new();
    };
    let mut tables = HashMap::new();
    for (kind, named) in document.get_ref().iter() {
        let DeValue::Table(named) = named.get_ref() else {
            continue;
        };
        for (name, table) in named.iter() {
            if let DeValue::Table(table) = table.get_ref() {
                let mut keys = Vec::new();
                walk(table, "", &mut |path, span| keys.push((path, span)));
                let at = (kind.get_ref().to_string(), name.get_ref().to_string());
                tables.insert(at, keys);
            }
        }
    }
    tables
}

/// Each key of `table` (below the path `at`) and of the tables in it: inline, dotted,
/// sub-tables and the elements of arrays of tables, each element by the name the plan gives it.
fn walk(table: &DeTable<'_>, at: &str, found: &mut impl FnMut(String, Range<usize>)) {
    for (key, value) in table.iter() {
        let path = match at {
            "" => key.get_ref().to_string(),
            _ => format!("{at}.{}", key.get_ref()),
        };
        found(path.clone(), key.span());
        match value.get_ref() {
            DeValue::Table(inner) => walk(inner, &path, found),
            DeValue::Array(elements) => walk_elements(elements, &path, found),
            _ => {}
        }
    }
}

/// The elements of an array that are tables, at `at.[NAME]`; an element with no name (nor
/// port) cannot be named by a plan and is left out.
fn walk_elements(
    elements: &[Spanned<DeValue<'_>>],
    at: &str,
    found: &mut impl FnMut(String, Range<usize>),
) {
    for element in elements {
        let DeValue::Table(table) = element.get_ref() else {
            continue;
        };
        let name = (table.iter()).find(|(k, _)| k.get_ref() == "name");
        let port = (table.iter()).find(|(k, _)| k.get_ref() == "port");
        let name = name.and_then(|(_, v)| v.get_ref().as_str());
        let port = port.and_then(|(_, v)| integer(v.get_ref()));
        if let Some(name) = element_name(name, port) {
            let path = format!("{at}.[{name}]");
            found(path.clone(), element.span());
            walk(table, &path, found);
        }
    }
}

fn integer(value: &DeValue<'_>) -> Option<i64> {
    match value {
        DeValue::Integer(n) => i64::from_str_radix(&n.as_str().replace('_', ""), n.radix()).ok(),
        _ => None,
    }
}
