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
mod layers;
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
mod show;
mod types;
mod unknown_key;
mod validate;
mod values;
mod variables;
mod window;
mod written;

use std::path::{Path, PathBuf};

pub use diagnostics::{ConfigError, Problem};
pub use ignore::{IgnoredPath, Origin};
pub use schema::json_schema;
#[cfg(test)]
pub(crate) use schema_path::KindSchema;
pub use section::ConfigSection;
pub use show::show;
pub use types::*;
pub use values::duration as parse_duration;
pub use variables::Variables;
pub use window::Window;
pub use written::WrittenKeys;

use diagnostics::Problems;
use files::SourceFile;

/// Reads the config of `layers` (`-c base -c env/prod`), each a file or a directory whose
/// skyplan `*.toml` files are merged; each later layer is laid over the ones before it (see
/// `layers`). The providers' `sections` read their tables; `variables` are the values given
/// to its `[variables]` from outside.
pub fn load(
    layers: &[PathBuf],
    variables: &Variables,
    sections: &'static [&'static dyn ConfigSection],
) -> Result<Config, ConfigError> {
    let (root, files) = read_layers(layers)?;
    load_sources(root, files, variables, sections)
}

/// [`load`], with one file more that is not written yet (`path`, `text`): a generated config,
/// checked with the rest before it is written. It belongs to the layer that is its directory
/// (the last one when none is).
pub fn load_with(
    layers: &[PathBuf],
    extra: (&Path, &str),
    variables: &Variables,
    sections: &'static [&'static dyn ConfigSection],
) -> Result<Config, ConfigError> {
    let (root, mut files) = read_layers(layers)?;
    let directory = extra.0.parent().unwrap_or(Path::new("."));
    let same = |a: &Path, b: &Path| a.canonicalize().ok() == b.canonicalize().ok();
    let layer = (layers.iter())
        .rposition(|layer| layer.is_dir() && same(layer, directory))
        .unwrap_or(layers.len() - 1);
    let own = &mut files[layer];
    own.retain(|f| *f.path != *extra.0);
    let root_of_layer = layers[layer].is_dir().then_some(&layers[layer]);
    let file = SourceFile::new(extra.0, extra.1);
    own.push(match root_of_layer {
        Some(dir) => file.with_root(dir),
        None => file,
    });
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
        .map(|(path, text)| SourceFile::new(*path, text).with_root(root))
        .collect();
    load_sources(
        root.to_path_buf(),
        vec![files],
        &Variables::default(),
        sections,
    )
}

/// The files of every layer, and the config's root: the first layer's, where the state
/// directory is unless the config says otherwise.
fn read_layers(layers: &[PathBuf]) -> Result<(PathBuf, Vec<Vec<SourceFile>>), ConfigError> {
    let mut root = None;
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for layer in layers {
        match files::read_sources(layer) {
            Ok((layer_root, layer_files)) => {
                root.get_or_insert(layer_root);
                files.push(layer_files);
            }
            Err(error) => problems.extend(error.into_problems()),
        }
    }
    if !problems.is_empty() {
        return Err(ConfigError::new(problems));
    }
    let nothing = || Problem::in_file(Path::new("."), "no config given: name one with -c");
    let root = root.ok_or_else(|| ConfigError::new(vec![nothing()]))?;
    Ok((root, files))
}

fn load_sources(
    root: PathBuf,
    mut layers: Vec<Vec<SourceFile>>,
    variables: &Variables,
    sections: &'static [&'static dyn ConfigSection],
) -> Result<Config, ConfigError> {
    let started = std::time::Instant::now();
    let mut problems = Problems::default();
    // One layer is read as it always was: its files in parallel pieces (issue 9). Several are
    // laid over each other as TOML first. Reuse (variables, defaults, for-each) is expanded
    // on what that gives, before anything is deserialized.
    let layered = (layers.len() > 1).then(|| layers::Layered::new(std::mem::take(&mut layers)));
    // Each file of one layer can show the place of a value its tables inherit from another's
    // defaults (joined layers are one file, which can already).
    let one_layer = match &layered {
        Some(_) => vec![],
        None => SourceFile::with_each_other(std::mem::take(&mut layers[0])),
    };
    let raw = match &layered {
        Some(layered) => {
            let documents = layered.documents(&mut problems);
            parse::parse_layered(&layered.file, documents, sections, variables, &mut problems)
        }
        None => parse::parse(&one_layer, sections, variables, &mut problems),
    };
    let parsed = started.elapsed();
    validate::validate(&raw, &mut problems);
    let config = resolve::resolve(root, &raw, &mut problems);
    tracing::debug!(
        parse_ms = parsed.as_millis(),
        resolve_ms = (started.elapsed() - parsed).as_millis(),
        layers = layered.as_ref().map_or(1, |l| l.layer_count()),
        "config: parsed and resolved"
    );
    problems.into_result(config)
}

#[cfg(test)]
mod tests;
