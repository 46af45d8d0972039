use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_spanned::Spanned;
use toml::de::ValueDeserializer;

use super::*;
use crate::config::tests::{LabSection, TestSection};
use crate::config::{load_sources, Config, ConfigError, Variables};
use crate::model::{Address, ResourceKind};

/// Layers of `(path, text)` files, each file rooted in its own directory.
fn files(layers: &[&[(&str, &str)]]) -> Vec<Vec<SourceFile>> {
    (layers.iter())
        .map(|files| {
            (files.iter())
                .map(|(path, text)| SourceFile::new(*path, text))
                .collect()
        })
        .collect()
}

fn load(layers: &[&[(&str, &str)]]) -> Result<Config, ConfigError> {
    load_sources(
        PathBuf::from("base"),
        files(layers),
        &Variables::default(),
        &[&TestSection, &LabSection],
    )
}

/// The layers merged, as plain TOML (every document's tables together).
fn merged(layers: &[&[(&str, &str)]]) -> toml::Table {
    let layered = Layered::new(files(layers));
    let mut problems = Problems::default();
    let mut all = toml::Table::new();
    for document in layered.documents(&mut problems) {
        let span = document.span();
        let table = toml::de::DeValue::Table(document.into_inner());
        let value =
            toml::Value::deserialize(ValueDeserializer::from(Spanned::new(span, table))).unwrap();
        all.extend(value.as_table().unwrap().clone());
    }
    problems.into_result(all).unwrap()
}

const BASE: &str = "[provider.test]\nendpoint = \"embedded\"\n\n\
                    [load-balancer.a]\nprovider = \"test\"\nsize = 2\n";

fn size_of(config: &Config, name: &str) -> String {
    let address = Address::new(ResourceKind::LoadBalancer, name);
    format!("{:?}", config.resource(&address).unwrap().spec)
}

#[test]
fn a_later_layer_overrides_a_key_and_adds_a_resource() {
    let env = "[load-balancer.a]\nsize = 3\n\n[load-balancer.b]\nprovider = \"test\"\n";
    let config = load(&[&[("base/a.toml", BASE)], &[("env/prod.toml", env)]]).unwrap();
    assert_eq!(size_of(&config, "a"), size_of(&load_one("size = 3"), "a"));
    assert_eq!(config.resources.len(), 2, "b is added by the later layer");
    let a = &config.resources[0];
    assert_eq!(
        (a.location.file.as_ref(), a.location.line),
        (Path::new("base/a.toml"), 4),
        "a resource is where its table is first written"
    );
}

fn load_one(size: &str) -> Config {
    let text = BASE.replace("size = 2", size);
    load(&[&[("base/a.toml", &text)]]).unwrap()
}

#[test]
fn tables_merge_key_by_key_and_arrays_are_replaced_whole() {
    let base = "[backend.postgres]\nurl = \"postgres://db\"\nworkspace = \"w\"\n\
                [load-balancer.a]\nprovider = \"test\"\n\
                [[load-balancer.a.ports]]\nport = 80\n[[load-balancer.a.ports]]\nport = 443\n";
    let env = "[backend.postgres]\nworkspace = \"prod\"\n\
               [[load-balancer.a.ports]]\nport = 8080\n";
    let merged = merged(&[&[("base/a.toml", base)], &[("env/b.toml", env)]]);
    let expected: toml::Table = toml::from_str(
        "[backend.postgres]\nurl = \"postgres://db\"\nworkspace = \"prod\"\n\
         [load-balancer.a]\nprovider = \"test\"\n[[load-balancer.a.ports]]\nport = 8080\n",
    )
    .unwrap();
    assert_eq!(merged, expected);
}

#[test]
fn an_error_in_a_later_layer_is_at_its_place_in_that_file() {
    let env = "# prod\n[load-balancer.a]\nsize = -1\nbogus = 1\n";
    let error = load(&[&[("base/a.toml", BASE)], &[("env/prod.toml", env)]]).unwrap_err();
    assert_eq!(error.lines(), ["env/prod.toml:4:1: unknown key `bogus`"]);
    let env = "[load-balancer.a]\nsize = -1\n";
    let error = load(&[&[("base/a.toml", BASE)], &[("env/prod.toml", env)]]).unwrap_err();
    assert_eq!(error.lines(), ["env/prod.toml:2:8: -1 is not a size"]);
    let broken = "[load-balancer.a\n";
    let error = load(&[&[("base/a.toml", BASE)], &[("env/prod.toml", broken)]]).unwrap_err();
    assert!(
        error.lines()[0].starts_with("env/prod.toml:1:"),
        "{:?}",
        error.lines()
    );
}

#[test]
fn a_relative_state_dir_is_relative_to_the_file_that_writes_it() {
    let env = "[settings]\nstate-dir = \"st\"\n";
    let config = load(&[&[("base/a.toml", BASE)], &[("env/prod.toml", env)]]).unwrap();
    assert_eq!(config.settings.state_dir, PathBuf::from("env/st"));
    let config = load(&[&[("base/a.toml", BASE)], &[("env/prod.toml", "")]]).unwrap();
    assert_eq!(
        config.settings.state_dir,
        PathBuf::from("base/state"),
        "by default in the first layer's root"
    );
}

#[test]
fn a_table_written_twice_within_a_layer_is_still_refused() {
    let env = [
        ("env/a.toml", "[load-balancer.a]\nsize = 3\n"),
        ("env/b.toml", "[load-balancer.a]\nsize = 4\n"),
    ];
    let error = load(&[&[("base/a.toml", BASE)], &env]).unwrap_err();
    assert_eq!(
        error.lines(),
        ["env/b.toml:1:1: load-balancer.a is defined twice"]
    );
}

#[test]
fn joined_files_place_each_span_in_its_own_file() {
    let joined = SourceFile::joined(vec![
        SourceFile::new("base/a.toml", "a = 1\n"),
        SourceFile::new("env/b.toml", "b = 2\nc = 3\n"),
    ]);
    let c = joined.text.find("c = 3").unwrap();
    let location = joined.key_location(&(c + 4..c + 5));
    assert_eq!(location.to_string(), "env/b.toml:2:1");
    assert_eq!(joined.root_at(c), Path::new("env"));
    assert_eq!(joined.root_at(0), Path::new("base"));
}

/// Each resource's address and its (size, label).
fn sized_and_labelled(config: &Config) -> Vec<(String, u32, String)> {
    (config.resources.iter())
        .map(|r| {
            let (size, label) = r.spec.get::<(u32, String)>().unwrap().clone();
            (r.address.to_string(), size, label)
        })
        .collect()
}

const REUSING: &str = "[provider.test]\nendpoint = \"embedded\"\n\
                       [variables]\nenv = \"staging\"\n\
                       [defaults.load-balancer.test]\nsize = 2\nlabel = \"${var.env}-${each.key}\"\n\
                       [load-balancer.web]\nprovider = \"test\"\nfor-each = [\"a\", \"b\"]\n";

#[test]
fn a_later_layer_overrides_a_variable_and_a_default_key_by_key_before_reuse() {
    let env = "[variables]\nenv = \"prod\"\n[defaults.load-balancer.test]\nsize = 5\n";
    let config = load(&[&[("base/a.toml", REUSING)], &[("env/b.toml", env)]]).unwrap();
    assert_eq!(
        sized_and_labelled(&config),
        [
            ("load-balancer.web[\"a\"]".into(), 5, "prod-a".into()),
            ("load-balancer.web[\"b\"]".into(), 5, "prod-b".into()),
        ]
    );
}

#[test]
fn a_later_layer_overrides_a_for_each_template_for_every_instance() {
    let env = "[load-balancer.web]\nsize = 7\nfor-each = [\"a\"]\n";
    let config = load(&[&[("base/a.toml", REUSING)], &[("env/b.toml", env)]]).unwrap();
    let found = sized_and_labelled(&config);
    assert_eq!(
        found,
        [("load-balancer.web[\"a\"]".into(), 7, "staging-a".into())]
    );
}

#[test]
fn an_inherited_value_of_a_later_layer_is_an_error_at_its_file_and_line() {
    let env = "\n[defaults.load-balancer.test]\nsize = -1\n";
    let error = load(&[&[("base/a.toml", REUSING)], &[("env/b.toml", env)]]).unwrap_err();
    let lines = error.lines();
    assert!(
        lines[0].starts_with("env/b.toml:3:8: -1 is not a size (in load-balancer.web[\"a\"]"),
        "{lines:?}"
    );
}
