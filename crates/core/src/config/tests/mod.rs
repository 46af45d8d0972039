//! The whole config stage on small inline configs, with a provider section of the tests' own
//! (`TestSection`): how the stage routes, checks and resolves a section's tables, core's own
//! tables, and for each kind of error its message and position.

mod reuse;
mod section;

use std::path::PathBuf;

use super::*;

pub(super) use section::{LabSection, TestSection};

pub(super) fn load_files(files: &[(&str, &str)]) -> Result<Config, ConfigError> {
    load_given(files, &Variables::default())
}

/// The files loaded with `variables` given from outside.
pub(super) fn load_given(
    files: &[(&str, &str)],
    variables: &Variables,
) -> Result<Config, ConfigError> {
    let root = PathBuf::from("cfg");
    let files: Vec<_> = files
        .iter()
        .map(|(path, text)| SourceFile::new(*path, text).with_root(&root))
        .collect();
    load_sources(root, vec![files], variables, &[&TestSection, &LabSection])
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
fn rollout_values_are_checked_at_their_keys() {
    let text = "[rollout]\nmax-disrupted = 0\nmax-disrupted-per = \"rack\"\n\
                health-timeout = \"soon\"\npause = \"-5s\"\n";
    assert_eq!(
        errors(text),
        [
            "a.toml:2:17: max-disrupted = 0 lets nothing through",
            "a.toml:3:21: `rack` is not a valid rollout group",
            "a.toml:4:18: `soon` is not a duration",
            "a.toml:5:9: `-5s` is negative",
        ]
    );
    let unknown = errors("[rollout]\nmax-disruptd = 2\n");
    assert!(
        unknown[0].starts_with("a.toml:2:1: unknown key `max-disruptd`"),
        "{unknown:?}"
    );
}

#[test]
fn rollout_has_defaults_and_is_absent_unless_written() {
    assert_eq!(load_str("").unwrap().rollout, None);
    let text = "[rollout]\nmax-disrupted = 2\nmax-disrupted-per = \"zone\"\npause = \"1m30s\"\n";
    assert_eq!(
        load_str(text).unwrap().rollout,
        Some(Rollout {
            max_disrupted: Some(2),
            per: Some(RolloutPer::Zone),
            health_gate: true,
            health_timeout: std::time::Duration::from_secs(300),
            pause: std::time::Duration::from_secs(90),
        })
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
