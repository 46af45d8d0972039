//! `for-each` on a resource table: one resource per item, addressed `KIND.NAME["KEY"]`.
//! `for-each = ["a", "b"]` makes instances `a` and `b` (`${each.value}` is the key again);
//! `for-each = { a = { zone = "lpg1" } }` makes `a` with `${each.value.zone}`. An empty
//! `for-each` makes no resource.

use std::collections::BTreeSet;

use serde_spanned::Spanned;
use toml::de::{DeString, DeValue};

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::interpolate::Each;

/// The key that makes a resource table one per item.
pub(super) const FOR_EACH: &str = "for-each";

/// One resource of a table: the table itself, or one item of its `for-each`.
pub(super) struct Instance<'v> {
    /// The table's key, `web`, or the instance's, `web["a"]`; where the table's key is
    /// written.
    pub name: Spanned<DeString<'v>>,
    pub table: Spanned<DeValue<'v>>,
    pub each: Option<Each<'v>>,
}

/// The resources of the table `[KIND.NAME]`.
pub(super) fn instances<'v>(
    name: Spanned<DeString<'v>>,
    table: Spanned<DeValue<'v>>,
    file: &SourceFile,
    problems: &mut Problems,
) -> Vec<Instance<'v>> {
    let span = table.span();
    let mut entries = match table.into_inner() {
        DeValue::Table(entries) => entries,
        other => {
            let table = Spanned::new(span, other);
            return vec![Instance {
                name,
                table,
                each: None,
            }];
        }
    };
    let Some(for_each) = entries.remove(FOR_EACH) else {
        let table = Spanned::new(span, DeValue::Table(entries));
        return vec![Instance {
            name,
            table,
            each: None,
        }];
    };
    (items(for_each, file, problems).into_iter())
        .map(|each| Instance {
            name: Spanned::new(name.span(), instance_name(name.get_ref(), &each.key)),
            table: Spanned::new(span.clone(), DeValue::Table(entries.clone())),
            each: Some(each),
        })
        .collect()
}

fn instance_name<'v>(name: &str, key: &str) -> DeString<'v> {
    DeString::Owned(crate::model::instance_name(name, key))
}

/// The items of a `for-each`, each with a valid key; a bad one is reported and left out.
fn items<'v>(
    for_each: Spanned<DeValue<'v>>,
    file: &SourceFile,
    problems: &mut Problems,
) -> Vec<Each<'v>> {
    let span = for_each.span();
    let keyed: Vec<(Spanned<String>, Spanned<DeValue<'v>>)> = match for_each.into_inner() {
        DeValue::Array(items) => (items.into_iter())
            .filter_map(|item| match item.get_ref() {
                DeValue::String(key) => Some((Spanned::new(item.span(), key.to_string()), item)),
                _ => {
                    let message = "an item of a for-each list is a string, its key";
                    let help = "for items with fields, write a table: for-each = { a = { zone = \"lpg1\" } }";
                    problems.push(Problem::at(file, item.span(), message).with_help(help));
                    None
                }
            })
            .collect(),
        DeValue::Table(items) => (items.into_iter())
            .map(|(key, item)| (Spanned::new(key.span(), key.get_ref().to_string()), item))
            .collect(),
        _ => {
            let message = "for-each is a list of keys or a table of items";
            let help = "e.g. for-each = [\"a\", \"b\"] or for-each = { a = { zone = \"lpg1\" } }";
            problems.push(Problem::at(file, span, message).with_help(help));
            return vec![];
        }
    };
    let mut seen = BTreeSet::new();
    let mut items = Vec::with_capacity(keyed.len());
    for (key, value) in keyed {
        let place = key.span();
        let key = key.into_inner();
        if !is_instance_key(&key) {
            let message = format!("`{key}` cannot be an instance's key");
            let help = "a key is letters, digits and -: it becomes part of cloud names (web[\"a\"] is web-a)";
            problems.push(Problem::at(file, place, message).with_help(help));
        } else if !seen.insert(key.clone()) {
            let message = format!("`{key}` is in the for-each twice");
            problems.push(Problem::at(file, place, message).with_help("keep one"));
        } else {
            items.push(Each { key, value });
        }
    }
    items
}

/// Letters, digits and `-`: what every cloud takes in a name, and what keeps the names
/// derived from two keys apart (`Address::cloud_name`).
fn is_instance_key(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::de::DeTable;

    fn read(text: &str) -> (Vec<String>, Vec<String>) {
        let file = SourceFile::new("a.toml", text);
        let root = DeTable::parse(&file.text).unwrap().into_inner();
        let (_, kinds) = root.into_iter().next().unwrap();
        let DeValue::Table(tables) = kinds.into_inner() else {
            panic!()
        };
        let (name, table) = tables.into_iter().next().unwrap();
        let mut problems = Problems::default();
        let names = instances(name, table, &file, &mut problems)
            .into_iter()
            .map(|i| i.name.into_inner().into_owned())
            .collect();
        let lines = match problems.into_result(()) {
            Ok(()) => vec![],
            Err(e) => e.lines(),
        };
        (names, lines)
    }

    #[test]
    fn a_list_or_a_table_makes_one_instance_per_item() {
        let (names, _) = read("[lb.web]\nfor-each = [\"a\", \"b\"]\n");
        assert_eq!(names, [r#"web["a"]"#, r#"web["b"]"#]);
        let (names, _) = read("[lb.web]\nfor-each = { x = { zone = \"lpg1\" } }\n");
        assert_eq!(names, [r#"web["x"]"#]);
        let (names, problems) = read("[lb.web]\nfor-each = []\n");
        assert!(names.is_empty() && problems.is_empty());
        assert_eq!(read("[lb.web]\nzone = 1\n").0, ["web"]);
    }

    #[test]
    fn duplicate_and_invalid_keys_are_errors_at_their_place() {
        let (names, problems) = read("[lb.web]\nfor-each = [\"a\", \"a\", \"b c\", 3]\n");
        assert_eq!(names, [r#"web["a"]"#]);
        assert_eq!(
            problems,
            [
                "a.toml:2:18: `a` is in the for-each twice",
                "a.toml:2:23: `b c` cannot be an instance's key",
                "a.toml:2:30: an item of a for-each list is a string, its key",
            ]
        );
        let (_, problems) = read("[lb.web]\nfor-each = 3\n");
        assert_eq!(
            problems,
            ["a.toml:2:12: for-each is a list of keys or a table of items"]
        );
    }
}
