//! `skyplan config show [--origin]`: the configuration as it is read — its layers laid over
//! each other — printed as TOML; with `--origin`, each value followed by `# file:line` of the
//! place that writes it.
//!
//! The origin is the span every value keeps through the layering (see `layers`): whatever
//! makes a value later keeps the span of the text it comes from, and this prints it.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Deserialize;
use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use super::diagnostics::{ConfigError, Problems};
use super::files::SourceFile;
use super::layers::Layered;
use super::section::ConfigSection;
use super::variables::Variables;

/// Keys whose value is never printed. The config refuses them (credentials live in the
/// providers' own variables and files), and `show` prints a valid config only; this holds
/// even so, should one slip through.
const SECRET_KEYS: [&str; 6] = [
    "api-key",
    "secret-key",
    "client-id",
    "client-secret",
    "password",
    "token",
];

/// The resolved configuration of `layers` as TOML, after checking that it loads (else its
/// problems); `origin` adds `# file:line` after each value.
pub fn show(
    layers: &[PathBuf],
    variables: &Variables,
    sections: &'static [&'static dyn ConfigSection],
    origin: bool,
) -> Result<String, ConfigError> {
    super::load(layers, variables, sections)?;
    let (_, files) = super::read_layers(layers)?;
    let layered = Layered::new(files);
    let mut problems = Problems::default();
    let documents = layered.documents(&mut problems);
    // As the providers read it: every variable, default and for-each instance expanded (each
    // value keeping the span of the text it comes from); `[variables]` and `[defaults]` are
    // taken out, being in the values now.
    let (roots, _) =
        super::parse::expand_layered(&layered.file, documents, sections, variables, &mut problems);
    let mut whole = DeTable::new();
    for root in roots {
        super::layers::lay_over(&mut whole, root.table);
    }
    problems.into_result(())?;
    let printer = Printer {
        file: &layered.file,
        origin,
    };
    let mut out = String::new();
    printer.table(&mut out, &[], &whole, true);
    Ok(out.trim_start().to_string())
}

struct Printer<'a> {
    file: &'a SourceFile,
    origin: bool,
}

impl Printer<'_> {
    /// A table under its header (`[a.b]`, or `[[a.b]]` for an element of an array of
    /// tables): its values, then its tables. A table holding only tables gets no header.
    fn table(&self, out: &mut String, path: &[String], table: &DeTable<'_>, header: bool) {
        let (values, tables): (Vec<_>, Vec<_>) = table
            .iter()
            .partition(|(_, value)| !is_table(value.get_ref()) && !is_array_of_tables(value));
        if header && !path.is_empty() && (!values.is_empty() || tables.is_empty()) {
            let _ = writeln!(out, "\n[{}]", dotted(path));
        }
        for (key, value) in values {
            self.value(out, key.get_ref(), value);
        }
        for (key, value) in tables {
            let mut path = path.to_vec();
            path.push(key.get_ref().to_string());
            match value.get_ref() {
                DeValue::Table(inner) => self.table(out, &path, inner, true),
                DeValue::Array(elements) => {
                    for element in elements.iter() {
                        let DeValue::Table(inner) = element.get_ref() else {
                            unreachable!("an array of tables holds tables")
                        };
                        let _ = writeln!(out, "\n[[{}]]", dotted(&path));
                        self.table(out, &path, inner, false);
                    }
                }
                _ => unreachable!("partitioned as a table"),
            }
        }
    }

    /// `key = value`, and where it is written.
    fn value(&self, out: &mut String, key: &str, value: &Spanned<DeValue<'_>>) {
        let text = match SECRET_KEYS.contains(&key) {
            true => "\"(secret, not shown)\"".to_string(),
            false => inline(value),
        };
        let _ = write!(out, "{} = {text}", bare_or_quoted(key));
        if self.origin {
            let at = self.file.key_location(&value.span());
            let _ = write!(out, "  # {}:{}", at.file.display(), at.line);
        }
        out.push('\n');
    }
}

/// The value as TOML on one line.
fn inline(value: &Spanned<DeValue<'_>>) -> String {
    match toml::Value::deserialize(ValueDeserializer::from(value.clone())) {
        Ok(value) => value.to_string(),
        Err(error) => unreachable!("a parsed value reads as TOML: {error}"),
    }
}

fn is_table(value: &DeValue<'_>) -> bool {
    matches!(value, DeValue::Table(_))
}

/// An array whose elements are all tables: printed as `[[a.b]]`, each key with its place.
fn is_array_of_tables(value: &Spanned<DeValue<'_>>) -> bool {
    match value.get_ref() {
        DeValue::Array(elements) => {
            !elements.is_empty() && elements.iter().all(|e| is_table(e.get_ref()))
        }
        _ => false,
    }
}

fn dotted(path: &[String]) -> String {
    let keys: Vec<_> = path.iter().map(|key| bare_or_quoted(key)).collect();
    keys.join(".")
}

fn bare_or_quoted(key: &str) -> String {
    let bare = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    match !key.is_empty() && key.chars().all(bare) {
        true => key.to_string(),
        false => toml::Value::String(key.to_string()).to_string(),
    }
}

#[cfg(test)]
#[path = "show_tests.rs"]
mod tests;
