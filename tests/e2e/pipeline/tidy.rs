//! Tidy checks over the source tree, as rust-analyzer's `tidy` test keeps its own: what the
//! codemap promises and review would otherwise have to catch by eye.

use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            found.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found
}

/// A test module (`tests.rs`, `x_tests.rs`, anything under a `tests/` folder): described by
/// the module that includes it.
fn is_test(path: &Path) -> bool {
    let name = path.file_stem().unwrap_or_default().to_string_lossy();
    name == "tests"
        || name.ends_with("_tests")
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// ARCHITECTURE.md: "the module docs (`//!`) are the detail" — so every module of the product
/// and the simulators has one, saying what it owns.
#[test]
fn every_module_says_what_it_owns() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![repo.join("src")];
    let crates = std::fs::read_dir(repo.join("crates")).expect("crates/");
    roots.extend(crates.map(|c| c.expect("a crate").path().join("src")));
    let undocumented: Vec<String> = (roots.iter())
        .flat_map(|root| rust_files(root))
        .filter(|path| !is_test(path))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|path| path.strip_prefix(repo).unwrap().display().to_string())
        .collect();
    assert_eq!(
        undocumented,
        Vec::<String>::new(),
        "modules without a `//!` doc"
    );
}
