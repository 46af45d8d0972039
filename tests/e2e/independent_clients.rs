//! Clients written against the real cloudscale API, not against the simulator, run against
//! `skyplan sim serve`: proof that the simulator speaks the real protocol.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{run, SimServer, SIM_TOKEN};

/// The Python with `cloudscale-sdk` and `cloudscale-cli` installed (CI sets it in .ci/run).
const PYTHON_VAR: &str = "SKYPLAN_CLOUDSCALE_PYTHON";

fn check_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/cloudscale_sdk_check.py")
}

#[test]
fn cloudscale_sdk_and_cli_work_against_the_simulator() {
    let Some(python) = std::env::var_os(PYTHON_VAR) else {
        println!("skipped: set {PYTHON_VAR} to a Python with cloudscale-sdk and cloudscale-cli");
        return;
    };
    let home = tempfile::tempdir().expect("temp dir");
    let sim = SimServer::start(&home.path().join("world.json"));
    // A home of its own, so no cloudscale.ini of the machine's user is read.
    let out = run(Command::new(python)
        .arg(check_script())
        .current_dir(home.path())
        .env("CLOUDSCALE_API_URL", &sim.base_url)
        .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env_remove("CLOUDSCALE_PROFILE")
        .env_remove("CLOUDSCALE_CONFIG"));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("checks passed"), "{out:?}");
}
