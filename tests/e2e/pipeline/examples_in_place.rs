//! The examples in place, as a new user runs them from the README: `validate`, `plan` and
//! `drift` of each leave the checkout as they found it. Nothing is copied: the commands run on
//! the repository's own `examples/` and `state/`, and every file under both must be the same,
//! byte for byte, afterwards (no file written, none added, none removed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::{run, Project};

/// Every file under `dirs` (relative to `root`) with its contents.
fn files(root: &Path, dirs: &[&str]) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, into: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(root, &path, into);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                into.insert(path.strip_prefix(root).unwrap().to_path_buf(), bytes);
            }
        }
    }
    let mut found = BTreeMap::new();
    for dir in dirs {
        walk(root, &root.join(dir), &mut found);
    }
    found
}

/// What changed between two listings: added, removed and rewritten files.
fn changes(before: &BTreeMap<PathBuf, Vec<u8>>, after: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    let mut changed = vec![];
    for (path, bytes) in after {
        match before.get(path) {
            None => changed.push(format!("added {}", path.display())),
            Some(old) if old != bytes => changed.push(format!("changed {}", path.display())),
            Some(_) => {}
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        changed.push(format!("removed {}", path.display()));
    }
    changed
}

#[test]
fn validate_plan_and_drift_of_every_example_leave_the_checkout_as_it_was() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let watched = ["examples", "state"];
    // Every example: a directory of examples/ with a skyplan.toml (the README runs three).
    let mut examples: Vec<String> = std::fs::read_dir(repo.join("examples"))
        .expect("examples/")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|dir| dir.join("skyplan.toml").is_file())
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    examples.sort();
    for readme in ["cloudstack", "phoenixnap", "quickstart"] {
        assert!(examples.iter().any(|e| e == readme), "{examples:?}");
    }
    let unused = Project::new();
    for example in &examples {
        let config = repo.join("examples").join(example);
        for args in [&["validate"][..], &["plan"], &["drift"]] {
            let before = files(repo, &watched);
            let out = run(&mut unused.command_with_config(&config, args));
            // drift: 0 in sync, 2 drift (each example is seeded to differ from its config).
            assert!(matches!(out.code, 0 | 2), "{example} {args:?}: {out:?}");
            let after = files(repo, &watched);
            assert_eq!(
                changes(&before, &after),
                Vec::<String>::new(),
                "skyplan {} -c examples/{example} changed the checkout",
                args.join(" ")
            );
        }
    }
}
