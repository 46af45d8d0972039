//! `${…}` in the string values of resource and provider tables: `${var.NAME}` (a variable),
//! `${each.key}` and `${each.value}` / `${each.value.FIELD}` (the item of a `for-each`).
//! `$${` is a literal `${`. Keys are never expanded: a table's shape is what its section
//! reads, whatever the values.
//!
//! A string that is one reference and nothing else takes the referenced value's type
//! (`size = "${each.value.size}"` with `size = 3` is the integer 3), so a number or a flag
//! can come from an item too.

use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::variables::VariableValues;

/// What `${…}` may refer to in one table.
pub(super) struct Scope<'a, 'v> {
    pub variables: &'a VariableValues,
    /// The item of the table's `for-each`, when it has one.
    pub each: Option<&'a Each<'v>>,
    /// The keys of the table that hold credentials, with where they come from instead:
    /// `${var.…}` is refused there.
    pub secrets: &'a [(&'static str, &'static str)],
    pub file: &'a SourceFile,
    /// Set when a string had a reference (or an escape) expanded.
    pub expanded: std::cell::Cell<bool>,
}

/// One item of a `for-each`: its key, and its value (the key again for a list's item).
#[derive(Debug, Clone)]
pub(super) struct Each<'v> {
    pub key: String,
    pub value: Spanned<DeValue<'v>>,
}

/// `table` with every reference in its values expanded; a reference that cannot be is
/// reported and its string left as written.
pub(super) fn expand_table<'v>(
    table: DeTable<'v>,
    scope: &Scope<'_, 'v>,
    problems: &mut Problems,
) -> DeTable<'v> {
    let mut expanded = DeTable::new();
    for (key, value) in table {
        if let Some((_, from)) = scope.secrets.iter().find(|(k, _)| key.get_ref() == k) {
            if refers_to_a_variable(&value, scope.variables) {
                let message = format!(
                    "`{}` is a credential: it never comes from a variable",
                    key.get_ref()
                );
                let help = format!("it comes from {from}");
                problems.push(Problem::at(scope.file, value.span(), message).with_help(help));
                // Left out of the table: the section's own refusal of a credential in the file
                // would say the same thing again.
                continue;
            }
        }
        expanded.insert(key, expand(value, scope, problems));
    }
    expanded
}

/// Whether a value refers to a variable; each it refers to counts as used (its refusal is
/// the one error to fix).
fn refers_to_a_variable(value: &Spanned<DeValue<'_>>, variables: &VariableValues) -> bool {
    let DeValue::String(text) = value.get_ref() else {
        return false;
    };
    let Ok(pieces) = pieces(text) else {
        return false;
    };
    let names: Vec<_> = (pieces.iter())
        .filter_map(|piece| match piece {
            Piece::Reference(reference) => reference.strip_prefix("var."),
            Piece::Text(_) => None,
        })
        .collect();
    for name in &names {
        variables.value(name);
    }
    !names.is_empty()
}

fn expand<'v>(
    value: Spanned<DeValue<'v>>,
    scope: &Scope<'_, 'v>,
    problems: &mut Problems,
) -> Spanned<DeValue<'v>> {
    let span = value.span();
    match value.into_inner() {
        DeValue::String(text) if text.contains("${") => expand_string(text, span, scope, problems),
        DeValue::Table(table) => {
            let expanded = expand_table_values(table, scope, problems);
            Spanned::new(span, DeValue::Table(expanded))
        }
        DeValue::Array(mut items) => {
            for item in items.iter_mut() {
                let taken = std::mem::replace(item, Spanned::new(0..0, DeValue::Boolean(false)));
                *item = expand(taken, scope, problems);
            }
            Spanned::new(span, DeValue::Array(items))
        }
        other => Spanned::new(span, other),
    }
}

/// A nested table: its keys hold no credentials of their own.
fn expand_table_values<'v>(
    table: DeTable<'v>,
    scope: &Scope<'_, 'v>,
    problems: &mut Problems,
) -> DeTable<'v> {
    (table.into_iter())
        .map(|(key, value)| (key, expand(value, scope, problems)))
        .collect()
}

fn expand_string<'v>(
    text: DeString<'v>,
    span: Range<usize>,
    scope: &Scope<'_, 'v>,
    problems: &mut Problems,
) -> Spanned<DeValue<'v>> {
    scope.expanded.set(true);
    let written = |text| Spanned::new(span.clone(), DeValue::String(text));
    let pieces = match pieces(&text) {
        Ok(pieces) => pieces,
        Err(Unclosed) => {
            let message = "`${` is not closed by `}`";
            let help = "write $${ for a literal ${";
            problems.push(Problem::at(scope.file, span.clone(), message).with_help(help));
            return written(text);
        }
    };
    if let [Piece::Reference(reference)] = pieces.as_slice() {
        return match scope.value(reference) {
            Ok(value) => Spanned::new(span, value),
            Err(problem) => {
                problems.push(problem.at(scope, &span, reference));
                written(text)
            }
        };
    }
    let mut expanded = String::with_capacity(text.len());
    for piece in &pieces {
        match piece {
            Piece::Text(part) => expanded.push_str(part),
            Piece::Reference(reference) => match scope.text(reference) {
                Ok(value) => expanded.push_str(&value),
                Err(problem) => {
                    problems.push(problem.at(scope, &span, reference));
                    return written(text);
                }
            },
        }
    }
    written(DeString::Owned(expanded))
}

/// A part of a string: text as it is, or what `${…}` names.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'t> {
    Text(&'t str),
    Reference(&'t str),
}

/// A `${` without its `}`.
#[derive(Debug, PartialEq, Eq)]
struct Unclosed;

fn pieces(text: &str) -> Result<Vec<Piece<'_>>, Unclosed> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        if rest[..at].ends_with('$') {
            // `$${`: the text up to and with one `$`, then `{` goes on as text.
            pieces.push(Piece::Text(&rest[..at]));
            pieces.push(Piece::Text("{"));
            rest = &rest[at + 2..];
            continue;
        }
        pieces.push(Piece::Text(&rest[..at]));
        let end = rest[at..].find('}').ok_or(Unclosed)? + at;
        pieces.push(Piece::Reference(rest[at + 2..end].trim()));
        rest = &rest[end + 1..];
    }
    pieces.push(Piece::Text(rest));
    pieces.retain(|piece| *piece != Piece::Text(""));
    Ok(pieces)
}

/// Why a reference has no value; placed at the reference by [`Unresolved::at`].
struct Unresolved {
    message: String,
    help: &'static str,
}

impl Unresolved {
    fn new(message: String, help: &'static str) -> Self {
        Unresolved { message, help }
    }

    /// The problem at `${reference}` in the string at `span`, or at the string when the
    /// reference is not written as such (an escape in the string).
    fn at(self, scope: &Scope<'_, '_>, span: &Range<usize>, reference: &str) -> Problem {
        let place = (scope.file.slice(span))
            .and_then(|written| {
                let written_at = written.find(&format!("${{{reference}}}"))?;
                let start = span.start + written_at;
                Some(start..start + reference.len() + 3)
            })
            .unwrap_or_else(|| span.clone());
        Problem::at(scope.file, place, self.message).with_help(self.help)
    }
}

const REFERENCES: &str =
    "a reference is ${var.NAME}, ${each.key}, ${each.value} or ${each.value.FIELD}; $${ is a literal ${";

impl<'v> Scope<'_, 'v> {
    /// The value a reference names, of its own type.
    fn value(&self, reference: &str) -> Result<DeValue<'v>, Unresolved> {
        if let Some(name) = reference.strip_prefix("var.") {
            return self.variable(name);
        }
        let Some(path) = reference.strip_prefix("each.") else {
            let message = format!("`${{{reference}}}` names nothing");
            return Err(Unresolved::new(message, REFERENCES));
        };
        let Some(each) = self.each else {
            let message = format!("`${{{reference}}}` is outside a table with for-each");
            let help = "${each.…} names the item of the table's for-each";
            return Err(Unresolved::new(message, help));
        };
        each.field(path)
    }

    /// The value a reference names as text, for a string it is a part of.
    fn text(&self, reference: &str) -> Result<String, Unresolved> {
        match self.value(reference)? {
            DeValue::String(text) => Ok(text.into_owned()),
            DeValue::Integer(n) => Ok(n.as_str().to_string()),
            DeValue::Float(n) => Ok(n.as_str().to_string()),
            DeValue::Boolean(b) => Ok(b.to_string()),
            DeValue::Datetime(d) => Ok(d.to_string()),
            DeValue::Array(_) | DeValue::Table(_) => {
                let message = format!("`${{{reference}}}` is a list or table, not text");
                Err(Unresolved::new(
                    message,
                    "name a field: ${each.value.FIELD}",
                ))
            }
        }
    }

    fn variable(&self, name: &str) -> Result<DeValue<'v>, Unresolved> {
        match self.variables.value(name) {
            Some(value) => Ok(DeValue::String(DeString::Owned(value.to_string()))),
            None => {
                let message = format!("the variable `{name}` has no value");
                let help = "define it in [variables], or give it with --var NAME=VALUE, \
                            --var-file FILE or SKYPLAN_VAR_NAME";
                Err(Unresolved::new(message, help))
            }
        }
    }
}

impl<'v> Each<'v> {
    fn field(&self, path: &str) -> Result<DeValue<'v>, Unresolved> {
        match path {
            "key" => return Ok(DeValue::String(DeString::Owned(self.key.clone()))),
            "value" => return Ok(self.value.get_ref().clone()),
            _ => {}
        }
        let Some(field) = path.strip_prefix("value.") else {
            let message = format!("`${{each.{path}}}` names nothing");
            return Err(Unresolved::new(message, REFERENCES));
        };
        let found = match self.value.get_ref() {
            DeValue::Table(table) => table.get(field),
            _ => None,
        };
        found.map(|value| value.get_ref().clone()).ok_or_else(|| {
            let message = format!("the item `{}` of for-each has no `{field}`", self.key);
            Unresolved::new(message, "give every item of the for-each the field")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_is_cut_into_text_and_references() {
        assert_eq!(pieces("plain"), Ok(vec![Piece::Text("plain")]));
        assert_eq!(
            pieces("web-${ each.key }.${var.domain}"),
            Ok(vec![
                Piece::Text("web-"),
                Piece::Reference("each.key"),
                Piece::Text("."),
                Piece::Reference("var.domain"),
            ])
        );
        assert_eq!(pieces("${var.a}"), Ok(vec![Piece::Reference("var.a")]));
        assert_eq!(pieces("a ${var.b"), Err(Unclosed));
    }

    #[test]
    fn a_doubled_dollar_is_a_literal_reference() {
        let text: String = (pieces("a$${x}b").unwrap().iter())
            .map(|p| match p {
                Piece::Text(t) => *t,
                Piece::Reference(_) => panic!("no reference in {p:?}"),
            })
            .collect();
        assert_eq!(text, "a${x}b");
    }
}
