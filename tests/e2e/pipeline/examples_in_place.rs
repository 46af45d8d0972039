//! The examples in place, as a new user runs them from the README: `validate`, `plan` and
//! `drift` of each leave the checkout as they found it. Nothing is copied: the commands run on
//! the repository's own `examples/` and `state/`, and every file under both must be the same,
//! byte for byte, afterwards (no file written, none added, none removed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::{run, Project};

/// The tests here watch the same checkout: one at a time, or each sees the other's lock files.
static CHECKOUT: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _alone = CHECKOUT.lock().unwrap_or_else(|p| p.into_inner());
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

/// The fleet example: each environment, the base and its layer, planned in place; a plan shows
/// the base's three Services for it, named after it, with the layer's defaults.
#[test]
fn every_fleet_environment_plans_in_place_from_the_base_and_its_layer() {
    let _alone = CHECKOUT.lock().unwrap_or_else(|p| p.into_inner());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fleet = repo.join("examples/fleet");
    let unused = Project::new();
    for (env, zone, members) in [
        ("staging", "lpg1", 2),
        ("prod-lpg1", "lpg1", 4),
        ("prod-rma1", "rma1", 4),
    ] {
        let layer = fleet.join("env").join(env);
        let skyplan = |args: &[&str]| {
            let before = files(repo, &["examples", "state"]);
            let mut command = unused.command_with_config(&fleet.join("base"), &[]);
            let out = run(command.arg("-c").arg(&layer).args(args));
            let after = files(repo, &["examples", "state"]);
            assert_eq!(
                changes(&before, &after),
                Vec::<String>::new(),
                "{env} {args:?}"
            );
            out
        };
        let out = skyplan(&["plan", "--json"]);
        assert_eq!(out.code, 0, "{env}: {out:?}");
        let plan = out.json();
        let changes = plan["changes"].as_array().expect("changes");
        let addresses: Vec<&str> = (changes.iter())
            .map(|c| c["address"].as_str().unwrap())
            .collect();
        assert_eq!(
            addresses,
            [
                r#"load-balancer.service["api"]"#,
                r#"load-balancer.service["grpc"]"#,
                r#"load-balancer.service["web"]"#,
            ],
            "{env}"
        );
        let text = skyplan(&["plan"]).stdout;
        assert!(
            text.contains(&format!("create load balancer {env}-web")),
            "{text}"
        );
        assert_eq!(
            text.matches("create member 10.0.0.1").count(),
            3 * members,
            "{env}: {text}"
        );
        let shown = skyplan(&["config", "show"]).stdout;
        assert!(
            shown.contains(&format!("zone = \"{zone}\"")),
            "{env}: {shown}"
        );
        assert_eq!(skyplan(&["validate"]).code, 0, "{env}");
    }
}

/// `dir` under `from` copied under `to`, recursively.
fn copy_tree(from: &Path, to: &Path, dir: &str) {
    for (path, bytes) in files(from, &[dir]) {
        let target = to.join(&path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
}

fn git(repo: &Path, args: &[&str]) {
    let out = run(std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args));
    assert_eq!(out.code, 0, "git {args:?}: {out:?}");
}

/// The README's promise: after applying an example, `git checkout state/` puts it back — the
/// next plan is the first one again. A copy of the checkout's examples, state and .gitignore
/// in a fresh repository, each example applied and checked out again.
#[test]
fn git_checkout_of_state_puts_every_example_back_after_an_apply() {
    crate::support::needs::program("git", &["--version"]);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = Project::new();
    for dir in ["examples", "state"] {
        copy_tree(repo, copy.path(), dir);
    }
    std::fs::copy(repo.join(".gitignore"), copy.path().join(".gitignore")).unwrap();
    git(copy.path(), &["init", "-q"]);
    git(copy.path(), &["add", "-A"]);
    git(copy.path(), &["commit", "-q", "-m", "checkout"]);
    let saturday = "2026-11-28T02:30:00+01:00";
    for example in ["quickstart", "cloudstack", "phoenixnap"] {
        let config = copy.path().join("examples").join(example);
        let skyplan = |args: &[&str]| run(&mut copy.command_with_config(&config, args));
        let first = skyplan(&["plan", "--now", saturday]);
        assert_eq!(first.code, 0, "{example}: {first:?}");
        let applied = skyplan(&["apply", "--auto-approve", "--now", saturday]);
        assert!(matches!(applied.code, 0 | 4), "{example}: {applied:?}");
        git(copy.path(), &["checkout", "state/"]);
        let again = skyplan(&["plan", "--now", saturday]);
        assert_eq!(
            again.stdout, first.stdout,
            "{example}: after `git checkout state/` the plan is the first one again"
        );
    }
}
