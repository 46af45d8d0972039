//! A resource's table with some values written over, resolved again by its section: the spec
//! the resource would have if the config said what the cloud has at those paths.
//!
//! Done on the TOML, not on the spec, because only the provider's section knows how a table
//! becomes a spec (defaults, names, bindings) and core never looks inside one: writing the
//! cloud's value where the user would write it and resolving as the config stage does keeps
//! every provider's meaning in one place.

use serde_json::Value;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use super::diagnostics::Problems;
use super::files::SourceFile;
use super::ignore::TableSource;
use super::schema_path::{self, Step};
use super::section::{Resolving, Table};
use super::types::{Config, ResourceSpec};
use crate::model::Address;

pub(super) fn resolve_with(
    source: &TableSource,
    config: &Config,
    address: &Address,
    values: &[(&str, &Value)],
) -> Result<ResourceSpec, String> {
    let mut table = match &source.written {
        Some(table) => table.clone(),
        None => written_table(&source.file, address)?,
    };
    table.remove("ignore-changes");
    for (path, value) in values {
        let steps = schema_path::steps(&source.schema, path)
            .ok_or_else(|| format!("`{path}` is not a key of its table"))?;
        write(&mut table, &steps, value).map_err(|e| format!("`{path}`: {e}"))?;
    }
    resolve(source, config, address, table)
}

/// The table of `address` as the file writes it; as the layers write it, each laid over the
/// one before, when the file is a config's layers joined.
fn written_table(file: &SourceFile, address: &Address) -> Result<toml::Table, String> {
    let mut written: Option<toml::Table> = None;
    for (_, part) in file.parts() {
        let document: toml::Table = toml::from_str(&part.text).map_err(|e| e.to_string())?;
        let table = document
            .get(address.kind.as_str())
            .and_then(|tables| tables.get(&address.name))
            .and_then(toml::Value::as_table);
        match (&mut written, table) {
            (Some(earlier), Some(later)) => lay_over(earlier, later.clone()),
            (None, Some(table)) => written = Some(table.clone()),
            (_, None) => {}
        }
    }
    written.ok_or_else(|| format!("{address} is no longer in {}", file.path.display()))
}

/// `later` laid over `earlier` as layers are (see `layers`): tables key by key, anything
/// else replaced whole.
fn lay_over(earlier: &mut toml::Table, later: toml::Table) {
    for (key, value) in later {
        match (earlier.get_mut(&key), value) {
            (Some(toml::Value::Table(earlier)), toml::Value::Table(later)) => {
                lay_over(earlier, later)
            }
            (_, value) => {
                earlier.insert(key, value);
            }
        }
    }
}

/// `value` written at the place `steps` reach in `table`.
fn write(table: &mut toml::Table, steps: &[Step], value: &Value) -> Result<(), String> {
    match steps {
        [Step::Key(key)] | [Step::Inherited(key)] => set(table, key, value),
        // A key the element inherits is written where it inherits it from: this table.
        [Step::Key(_), Step::Element(_), Step::Inherited(key), rest @ ..] => {
            let mut at = vec![Step::Key(key.clone())];
            at.extend_from_slice(rest);
            write(table, &at, value)
        }
        [Step::Key(key), Step::Element(name), rest @ ..] if !rest.is_empty() => {
            let elements = table
                .get_mut(key)
                .and_then(toml::Value::as_array_mut)
                .ok_or_else(|| format!("the table has no `{key}`"))?;
            let element = elements
                .iter_mut()
                .filter_map(toml::Value::as_table_mut)
                .find(|element| named(element, name))
                .ok_or_else(|| format!("`{key}` has no element `{name}`"))?;
            write(element, rest, value)
        }
        [Step::Key(key), rest @ ..] if !matches!(rest.first(), Some(Step::Element(_))) => {
            let inner = table
                .entry(key.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let inner = inner
                .as_table_mut()
                .ok_or_else(|| format!("`{key}` is not a table"))?;
            write(inner, rest, value)
        }
        _ => Err("a whole element of a list cannot be written as one value".into()),
    }
}

/// Whether an element of an array of tables is the one the plan names `name`.
fn named(element: &toml::Table, name: &str) -> bool {
    let own = element.get("name").and_then(toml::Value::as_str);
    let port = element.get("port").and_then(toml::Value::as_integer);
    element_name(own, port).is_some_and(|own| own == name)
}

/// The name the plan gives an element of an array of tables: its `name`, else (unnamed) its
/// `port`, as the providers key their ports.
pub(super) fn element_name(name: Option<&str>, port: Option<i64>) -> Option<String> {
    match name {
        Some(own) if !own.is_empty() => Some(own.to_string()),
        _ => port.map(|port| port.to_string()),
    }
}

/// Sets `key` to `value`; null — the cloud has none — leaves the key out, to its default.
fn set(table: &mut toml::Table, key: &str, value: &Value) -> Result<(), String> {
    if value.is_null() {
        table.remove(key);
        return Ok(());
    }
    let value =
        toml::Value::try_from(value).map_err(|e| format!("{value} is no config value: {e}"))?;
    table.insert(key.to_string(), value);
    Ok(())
}

/// The table resolved by its section as the config stage resolves it.
fn resolve(
    source: &TableSource,
    config: &Config,
    address: &Address,
    table: toml::Table,
) -> Result<ResourceSpec, String> {
    let kind = address.kind.as_str();
    let mut document = toml::Table::new();
    let mut tables = toml::Table::new();
    tables.insert(address.name.clone(), toml::Value::Table(table));
    document.insert(kind.to_string(), toml::Value::Table(tables));
    let text = toml::to_string(&document).map_err(|e| e.to_string())?;
    // Paths resolve against the first file's directory: a layered table's relative path of
    // a later layer in another directory is not told apart here.
    let file =
        SourceFile::new(source.file.path.to_path_buf(), &text).with_root(source.file.root_at(0));
    let root = DeTable::parse(&file.text).map_err(|e| e.to_string())?;
    let entry = root
        .into_inner()
        .into_iter()
        .filter(|(key, _)| key.get_ref() == kind)
        .find_map(|(_, tables)| match tables.into_inner() {
            DeValue::Table(tables) => tables.into_iter().next().map(|(_, entry)| entry),
            _ => None,
        })
        .ok_or("the table written again cannot be read")?;
    let span = entry.span();
    let section = source.section;
    let raw = section
        .parse_resource(address.kind, ValueDeserializer::from(entry))
        .map_err(|e| e.message().to_string())?;
    let table = Table::new(&file, span, raw);
    let context = Resolving {
        settings: config.providers.sections.get(section.provider()),
    };
    let mut problems = Problems::default();
    // As the config stage resolves it: under its cloud name (see `resolve::resources`).
    let cloud_name = address.cloud_name();
    let resource = section.resource(address.kind, &cloud_name, &table, &context, &mut problems);
    let resource = problems.into_result(resource).map_err(|e| {
        e.problems()
            .iter()
            .map(|p| p.message().to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    Ok(resource.spec)
}

#[cfg(test)]
#[path = "rewrite_tests.rs"]
mod tests;
