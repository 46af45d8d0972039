use std::path::PathBuf;

use super::*;
use crate::config::tests::TestSection;

/// Layers written to a temporary directory: `(layer, file, text)`.
fn written(files: &[(&str, &str, &str)]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let mut layers: Vec<PathBuf> = Vec::new();
    for (layer, name, text) in files {
        let layer = dir.path().join(layer);
        std::fs::create_dir_all(&layer).unwrap();
        std::fs::write(layer.join(name), text).unwrap();
        if !layers.contains(&layer) {
            layers.push(layer);
        }
    }
    (dir, layers)
}

const BASE: &str = "[provider.test]\nendpoint = \"embedded\"\n\n\
                    [load-balancer.a]\nprovider = \"test\"\nsize = 2\n\
                    [[load-balancer.a.ports]]\nport = 80\n";
const PROD: &str = "[load-balancer.a]\nsize = 3\n";

#[test]
fn the_layers_show_as_one_config_with_the_place_of_each_value() {
    let (dir, layers) = written(&[("base", "a.toml", BASE), ("prod", "b.toml", PROD)]);
    let shown = show(&layers, &Variables::default(), &[&TestSection], true).unwrap();
    let shown = shown.replace(&format!("{}/", dir.path().display()), "");
    assert_eq!(
        shown,
        "[load-balancer.a]\n\
         provider = \"test\"  # base/a.toml:5\n\
         size = 3  # prod/b.toml:2\n\
         \n\
         [[load-balancer.a.ports]]\n\
         port = 80  # base/a.toml:8\n\
         \n\
         [provider.test]\n\
         endpoint = \"embedded\"  # base/a.toml:2\n"
    );
    let plain = show(&layers, &Variables::default(), &[&TestSection], false).unwrap();
    let reread: toml::Table = toml::from_str(&plain).unwrap();
    assert_eq!(reread["load-balancer"]["a"]["size"].as_integer(), Some(3));
}

#[test]
fn a_config_that_does_not_load_is_not_shown() {
    let (_dir, layers) = written(&[
        ("base", "a.toml", BASE),
        ("prod", "b.toml", "[load-balancer.a]\nsize = -1\n"),
    ]);
    let error = show(&layers, &Variables::default(), &[&TestSection], true).unwrap_err();
    assert!(
        error.lines()[0].ends_with("b.toml:2:8: -1 is not a size"),
        "{:?}",
        error.lines()
    );
}

#[test]
fn a_defaulted_and_a_variable_value_show_where_they_are_written() {
    let base = "[provider.test]\nendpoint = \"embedded\"\n\
                [variables]\nenv = \"staging\"\n\
                [defaults.load-balancer.test]\nsize = 2\n\
                [load-balancer.web]\nprovider = \"test\"\nfor-each = [\"a\"]\n\
                label = \"${var.env}-${each.key}\"\n";
    let prod = "[variables]\nenv = \"prod\"\n";
    let (dir, layers) = written(&[("base", "a.toml", base), ("prod", "b.toml", prod)]);
    let shown = show(&layers, &Variables::default(), &[&TestSection], true).unwrap();
    let shown = shown.replace(&format!("{}/", dir.path().display()), "");
    assert!(shown.contains("size = 2  # base/a.toml:6\n"), "{shown}");
    assert!(
        shown.contains("label = \"prod-a\"  # base/a.toml:10\n"),
        "{shown}"
    );
    assert!(shown.contains("[load-balancer.'web[\"a\"]']\n"), "{shown}");
    assert!(
        shown.contains("provider = \"test\"  # base/a.toml:8\n"),
        "{shown}"
    );
    assert!(
        !shown.contains("[variables]") && !shown.contains("[defaults"),
        "{shown}"
    );
}
