//! Config stage: TOML files → validated, resolved [`Config`]. No network; the only IO is
//! reading the config files. Errors carry the file and span so the CLI can show
//! file:line:col.
//!
//! Pipeline: `files` reads the file or directory, `parse` deserializes each section into the
//! `raw` serde types and merges the files, `validate` checks rules across values, `resolve`
//! parses the core's values and applies defaults (and `moves` checks the `[[moved]]` entries
//! against the resources); each
//! provider's own section (`section`) parses, resolves and checks its tables. Every stage records problems
//! and goes on, so one run reports everything that is wrong.

mod backend;
mod check;
mod controller;
mod defaults;
mod diagnostics;
mod files;
mod for_each;
mod ignore;
mod interpolate;
mod moves;
mod parse;
mod pieces;
mod raw;
mod resolve;
mod reuse;
mod rewrite;
mod schema;
mod schema_path;
pub mod section;
mod types;
mod validate;
mod values;
mod variables;
mod window;

use std::path::{Path, PathBuf};

pub use diagnostics::{ConfigError, Problem};
pub use ignore::{IgnoredPath, Origin};
pub use schema::json_schema;
pub use section::ConfigSection;
pub use types::*;
pub use values::duration as parse_duration;
pub use variables::Variables;
pub use window::Window;

use diagnostics::Problems;
use files::SourceFile;

/// Reads the config at `path`: a file, or a directory whose `*.toml` files are merged; the
/// providers' `sections` read their tables; `variables` are the values given to its
/// `[variables]` from outside.
pub fn load(
    path: &Path,
    variables: &Variables,
    sections: &'static [&'static dyn ConfigSection],
) -> Result<Config, ConfigError> {
    let (root, files) = files::read_sources(path)?;
    load_sources(root, files, variables, sections)
}

/// [`load`], with one file more that is not written yet (`path`, `text`): a generated config,
/// checked with the rest before it is written.
pub fn load_with(
    path: &Path,
    extra: (&Path, &str),
    variables: &Variables,
    sections: &'static [&'static dyn ConfigSection],
) -> Result<Config, ConfigError> {
    let (root, mut files) = files::read_sources(path)?;
    files.retain(|f| *f.path != *extra.0);
    files.push(SourceFile::new(extra.0, extra.1));
    load_sources(root, files, variables, sections)
}

/// Reads a config given as `(path, text)` files, rooted at `root`: for tests of a provider's
/// section.
pub fn load_texts(
    root: &Path,
    files: &[(&str, &str)],
    sections: &'static [&'static dyn ConfigSection],
) -> Result<Config, ConfigError> {
    let files: Vec<_> = files
        .iter()
        .map(|(path, text)| SourceFile::new(*path, text))
        .collect();
    load_sources(root.to_path_buf(), files, &Variables::default(), sections)
}

fn load_sources(
    root: PathBuf,
    files: Vec<SourceFile>,
    variables: &Variables,
    sections: &'static [&'static dyn ConfigSection],
) -> Result<Config, ConfigError> {
    let started = std::time::Instant::now();
    let mut problems = Problems::default();
    // Each file can show the place of a value its tables inherit from another's defaults.
    let files = SourceFile::with_each_other(files);
    let raw = parse::parse(&files, sections, variables, &mut problems);
    let parsed = started.elapsed();
    validate::validate(&raw, &mut problems);
    let config = resolve::resolve(root, &raw, &mut problems);
    tracing::debug!(
        parse_ms = parsed.as_millis(),
        resolve_ms = (started.elapsed() - parsed).as_millis(),
        "config: parsed and resolved"
    );
    problems.into_result(config)
}

#[cfg(test)]
mod tests;
