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
#[ignore = "needs Python with cloudscale-sdk and cloudscale-cli: SKYPLAN_CLOUDSCALE_PYTHON (.ci/run installs them)"]
fn cloudscale_sdk_and_cli_work_against_the_simulator() {
    let python = crate::support::needs::env(
        PYTHON_VAR,
        "a Python with cloudscale-sdk 0.7.0 and cloudscale-cli 1.5.0",
    );
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

/// A change the simulator answered (204) is in the world file after a SIGTERM sent right
/// after the answer, inside the writer's pause: `skyplan drift` afterwards must see it.
#[test]
fn sigterm_right_after_an_acknowledged_change_keeps_it_in_the_world_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("world.json");
    let sim = SimServer::start(&world);
    let ips = sim.list("/floating-ips");
    let network = ips[0]["network"]
        .as_str()
        .expect("a floating IP")
        .to_string();
    let address = network.split('/').next().unwrap();
    // The first change wakes the world writer, which then pauses; the second lands in the
    // pause, so only the write on SIGTERM can save it.
    for ptr in ["first.example.com", "second.example.com"] {
        let body = format!("{{\"reverse_ptr\": \"{ptr}\"}}");
        let url = format!("{}/floating-ips/{address}", sim.base_url);
        crate::support::http::request("PATCH", &url)
            .bearer(SIM_TOKEN)
            .body("application/json", body)
            .ok()
            .expect("PATCH answered");
    }
    sim.terminate();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&world).unwrap()).unwrap();
    let kept = saved["floating_ips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|ip| ip["network"] == network.as_str())
        .expect("the floating IP");
    assert_eq!(kept["reverse_ptr"], "second.example.com", "{kept:#}");
}
