//! `[variables]`: values a config refers to as `${var.NAME}` in its resource and provider
//! tables, each with the value the config gives it, which `--var NAME=VALUE`, `--var-file
//! FILE` and `SKYPLAN_VAR_NAME` override (in that order of precedence).
//!
//! Every variable must be used and every use must have a value, so a typo in a name is an
//! error and never a silently empty string or an ignored override.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;

/// The prefix of the environment variables that give a variable its value:
/// `SKYPLAN_VAR_region` sets `${var.region}` (the name's exact case).
const ENVIRONMENT_PREFIX: &str = "SKYPLAN_VAR_";

/// The values given from outside the config, as the command line and the environment give
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables {
    /// `--var NAME=VALUE`, in the order given (a later one wins).
    pub assignments: Vec<(String, String)>,
    /// `--var-file FILE`: TOML files of `NAME = "value"`, in the order given (a later one
    /// wins).
    pub files: Vec<PathBuf>,
    /// The environment's `SKYPLAN_VAR_NAME` variables, with the prefix taken off.
    pub environment: Vec<(String, String)>,
}

impl Variables {
    /// The `SKYPLAN_VAR_*` variables of an environment (as `std::env::vars` lists it).
    pub fn from_environment(variables: impl IntoIterator<Item = (String, String)>) -> Self {
        let environment = (variables.into_iter())
            .filter_map(|(name, value)| {
                let name = name.strip_prefix(ENVIRONMENT_PREFIX)?;
                (!name.is_empty()).then(|| (name.to_string(), value))
            })
            .collect();
        Variables {
            environment,
            ..Variables::default()
        }
    }
}

/// Where a variable's value comes from, for the message about one that is never used.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Given {
    /// `--var NAME=VALUE`.
    Assignment,
    /// A `--var-file`, at a span of its text (the files are kept in [`VariableValues`]).
    File {
        file: usize,
        span: Range<usize>,
    },
    Environment,
}

/// One variable: its value, where the config defines it, whether anything refers to it.
#[derive(Debug)]
struct Variable {
    value: Option<String>,
    /// Where `[variables]` names it: (index of the file, span of the key).
    defined: Option<(usize, Range<usize>)>,
    given: Option<Given>,
    used: Cell<bool>,
}

/// Every variable with its value, as the expansion of `${var.NAME}` reads them.
#[derive(Debug, Default)]
pub(super) struct VariableValues {
    variables: BTreeMap<String, Variable>,
    var_files: Vec<SourceFile>,
}

impl VariableValues {
    /// The value of `name`, marking it used; `None` when the variable has no value.
    pub fn value(&self, name: &str) -> Option<&str> {
        let variable = self.variables.get(name)?;
        variable.used.set(true);
        variable.value.as_deref()
    }

    /// Takes the `[variables]` table of each file (by its index in `files`): its values are
    /// the variables' own, under what `given` overrides.
    pub fn collect(
        files: &[SourceFile],
        tables: Vec<(usize, DeTable<'_>)>,
        given: &Variables,
        problems: &mut Problems,
    ) -> VariableValues {
        let mut values = VariableValues::default();
        for (file, table) in tables {
            values.define(files, file, table, problems);
        }
        values.give_environment(&given.environment);
        for path in &given.files {
            values.give_file(path, problems);
        }
        for (name, value) in &given.assignments {
            values.give(name, value, Given::Assignment);
        }
        values
    }

    fn define(
        &mut self,
        files: &[SourceFile],
        index: usize,
        table: DeTable<'_>,
        problems: &mut Problems,
    ) {
        let file = &files[index];
        for (key, value) in table {
            let (name, span) = (key.get_ref().to_string(), key.span());
            let Some(text) = string_value(file, &value, problems) else {
                continue;
            };
            if let Some((first, first_span)) = self.defined_at(&name) {
                let message = format!("the variable `{name}` is defined twice");
                let note = Problem::at(&files[first], first_span, "first defined here");
                problems.push(Problem::at(file, span, message).with_note(note));
                continue;
            }
            self.variables.insert(
                name,
                Variable {
                    value: Some(text),
                    defined: Some((index, span)),
                    given: None,
                    used: Cell::new(false),
                },
            );
        }
    }

    fn defined_at(&self, name: &str) -> Option<(usize, Range<usize>)> {
        self.variables.get(name)?.defined.clone()
    }

    fn give_environment(&mut self, environment: &[(String, String)]) {
        for (name, value) in environment {
            // The environment may hold variables of other configs: only a variable this
            // config has (or refers to) takes its value from it.
            if self.variables.contains_key(name) {
                self.give(name, value, Given::Environment);
            } else {
                self.variables.insert(name.clone(), environment_only(value));
            }
        }
    }

    fn give_file(&mut self, path: &Path, problems: &mut Problems) {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                let message = format!("cannot read the variable file: {e}");
                problems.push(Problem::in_file(path, message));
                return;
            }
        };
        let file = SourceFile::new(path, &text);
        let table = match DeTable::parse(&text) {
            Ok(table) => table.into_inner(),
            Err(error) => {
                problems.push_toml(&file, &error);
                return;
            }
        };
        let index = self.var_files.len();
        for (key, value) in table {
            if let Some(text) = string_value(&file, &value, problems) {
                let span = key.span();
                self.give(key.get_ref(), &text, Given::File { file: index, span });
            }
        }
        self.var_files.push(file);
    }

    fn give(&mut self, name: &str, value: &str, given: Given) {
        let variable = self
            .variables
            .entry(name.to_string())
            .or_insert_with(|| Variable {
                value: None,
                defined: None,
                given: None,
                used: Cell::new(false),
            });
        variable.value = Some(value.to_string());
        variable.given = Some(given);
    }

    /// Every variable defined or given that nothing refers to: at its definition, else where
    /// it is given. A value only the environment gives is no error (the environment is shared
    /// by every config a machine runs).
    pub fn report_unused(&self, files: &[SourceFile], problems: &mut Problems) {
        for (name, variable) in &self.variables {
            if variable.used.get() {
                continue;
            }
            let help = "use it as ${var.NAME} in a resource or provider table, or remove it";
            let problem = match (&variable.defined, &variable.given) {
                (Some((file, span)), _) => {
                    let message = format!("the variable `{name}` is never used");
                    Problem::at(&files[*file], span.clone(), message)
                }
                (None, Some(Given::File { file, span })) => {
                    let message = format!("`{name}` is not a variable of the config");
                    Problem::at(&self.var_files[*file], span.clone(), message)
                }
                (None, Some(Given::Assignment)) => Problem::in_file(
                    Path::new("--var"),
                    format!("`{name}` is not a variable of the config"),
                ),
                (None, Some(Given::Environment) | None) => continue,
            };
            problems.push(problem.with_help(help));
        }
    }
}

/// A variable only the environment names: taken when the config refers to it, and no error
/// when it does not.
fn environment_only(value: &str) -> Variable {
    Variable {
        value: Some(value.to_string()),
        defined: None,
        given: Some(Given::Environment),
        used: Cell::new(false),
    }
}

/// A variable's value: a string, else a problem at it.
fn string_value(
    file: &SourceFile,
    value: &serde_spanned::Spanned<DeValue<'_>>,
    problems: &mut Problems,
) -> Option<String> {
    match value.get_ref() {
        DeValue::String(text) => Some(text.to_string()),
        _ => {
            let message = "a variable's value is a string";
            let help = "write it in quotes, e.g. size = \"3\"";
            problems.push(Problem::at(file, value.span(), message).with_help(help));
            None
        }
    }
}
