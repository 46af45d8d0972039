//! The crate graph is the architecture: each workspace crate, its tests included, may depend
//! only on the crates below it. A crate that gains a dependency the layering forbids — a
//! simulator on the product, the product's library on a simulator, even as a dev-dependency
//! for its own tests — fails here, read from `cargo metadata`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// Every workspace crate and the workspace crates it may depend on, with every kind of
/// dependency: normal, build and dev. A crate's tests are held to its layer too, so that no
/// provider or core test can reach a simulator: tests that need one live where the simulators
/// may be used (the binary's and `tests/e2e`). A new crate is added here on purpose.
const LAYERS: &[(&str, &[&str])] = &[
    // The pipeline: it knows no cloud and no simulator.
    ("skyplan-core", &[]),
    // The providers: each on the core; the clouds also on Kubernetes, whose clusters their
    // controller-mode load balancers are bound to. No cloud knows another, or a simulator.
    ("skyplan-kubernetes", &["skyplan-core"]),
    (
        "skyplan-cloudscale",
        &["skyplan-core", "skyplan-kubernetes"],
    ),
    (
        "skyplan-cloudstack",
        &["skyplan-core", "skyplan-kubernetes"],
    ),
    (
        "skyplan-phoenixnap",
        &["skyplan-core", "skyplan-kubernetes"],
    ),
    // The simulators stand apart from the product: they share no code with its clients.
    ("skyplan-sim", &[]),
    // The binary: the CLI, the provider registry and the embedded wiring that starts the
    // simulators.
    (
        "skyplan",
        &[
            "skyplan-core",
            "skyplan-kubernetes",
            "skyplan-cloudscale",
            "skyplan-cloudstack",
            "skyplan-phoenixnap",
            "skyplan-sim",
        ],
    ),
];

/// Each workspace member with the workspace crates it depends on, each with its kind
/// ("normal", "build" or "dev") for the message.
fn workspace_dependencies() -> BTreeMap<String, BTreeSet<(String, String)>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata is JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let members: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("a name").to_owned())
        .collect();
    packages
        .iter()
        .map(|package| {
            let uses = package["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter_map(|d| {
                    let name = d["name"].as_str()?;
                    // cargo metadata writes null for a normal dependency.
                    let kind = d["kind"].as_str().unwrap_or("normal");
                    members
                        .contains(name)
                        .then(|| (name.to_owned(), kind.to_owned()))
                })
                .collect();
            (package["name"].as_str().expect("a name").to_owned(), uses)
        })
        .collect()
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = LAYERS
        .iter()
        .map(|(name, deps)| (*name, deps.iter().copied().collect()))
        .collect();
    for (name, uses) in workspace_dependencies() {
        let Some(may) = allowed.get(name.as_str()) else {
            panic!("crate {name} has no place in the layering: add it to LAYERS");
        };
        let forbidden: Vec<String> = uses
            .iter()
            .filter(|(used, _)| !may.contains(used.as_str()))
            .map(|(used, kind)| format!("{used} ({kind})"))
            .collect();
        assert!(
            forbidden.is_empty(),
            "{name} depends on {forbidden:?}, which the layering forbids, its tests included \
             (it may use {may:?})"
        );
    }
}
