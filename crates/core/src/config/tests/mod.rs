//! The whole config stage on small inline configs, with a provider section of the tests' own
//! (`TestSection`): how the stage routes, checks and resolves a section's tables, core's own
//! tables, and for each kind of error its message and position.

mod section;

use std::path::PathBuf;

use super::*;

pub(super) use section::{LabSection, TestSection};

pub(super) fn load_files(files: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let files: Vec<_> = files
        .iter()
        .map(|(path, text)| SourceFile::new(*path, text))
        .collect();
    load_sources(PathBuf::from("cfg"), &files, &[&TestSection, &LabSection])
}

pub(super) fn load_str(text: &str) -> Result<Config, ConfigError> {
    load_files(&[("a.toml", text)])
}

/// The `file:line:col: message` lines of a config that must fail.
pub(super) fn errors(text: &str) -> Vec<String> {
    load_str(text)
        .expect_err("the config should be invalid")
        .lines()
}

#[test]
fn maintenance_values_are_checked() {
    let text = "[maintenance]\ntimezone = \"Europe/Zürich\"\nwindows = [\"Sat 2-5\"]\n\
                inside-window = \"all\"\n";
    assert_eq!(
        errors(text),
        [
            "a.toml:2:12: `Europe/Zürich` is not a known time zone",
            "a.toml:3:12: `Sat 2-5` is not a maintenance window",
            "a.toml:4:17: `all` is not a valid impact class",
        ]
    );
}

#[test]
fn settings_resolve_against_the_config_root() {
    let config = load_str("[settings]\nstate-dir = \"st\"\n").unwrap();
    assert_eq!(config.settings.state_dir, PathBuf::from("cfg/st"));
    assert_eq!(config.settings.backend, Backend::Local);
    let config = load_str("").unwrap();
    assert_eq!(config.settings.state_dir, PathBuf::from("cfg/state"));
}

#[test]
fn core_sections_may_be_defined_in_one_file_only() {
    let settings = "[settings]\nstate-dir = \"st\"\n";
    let error = load_files(&[("a.toml", settings), ("b.toml", settings)]).unwrap_err();
    assert_eq!(error.lines(), ["b.toml:1:1: [settings] is defined twice"]);
}

#[test]
fn syntax_errors_point_at_the_mistake() {
    let lines = errors("[settings]\nstate-dir = \n");
    assert!(lines[0].starts_with("a.toml:2:"), "{lines:?}");
}
