//! `skyplan sim serve --provider cloudstack` against clients written for the real CloudStack
//! API: the Python `cs` tool, and signed requests sent as plain HTTP; and the promise that an
//! acknowledged change survives a SIGTERM.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::cloudstack::support::{CsSimServer, API_KEY, SECRET_KEY};
use crate::support::run;

/// The Python with `cs==3.2.0` installed (CI sets it in .ci/run).
const PYTHON_VAR: &str = "SKYPLAN_CS_PYTHON";

fn check_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/cs_check.py")
}

#[test]
#[ignore = "needs Python with cs: SKYPLAN_CS_PYTHON (.ci/run installs it)"]
fn cs_python_client_works_against_the_simulator() {
    let python = crate::support::needs::env(PYTHON_VAR, "a Python with cs 3.2.0");
    let home = tempfile::tempdir().expect("temp dir");
    let sim = CsSimServer::start(&home.path().join("world.json"));
    // A home of its own, so no cloudstack.ini of the machine's user is read.
    let out = run(Command::new(python)
        .arg(check_script())
        .current_dir(home.path())
        .env("CLOUDSTACK_ENDPOINT", &sim.base_url)
        .env("CLOUDSTACK_KEY", API_KEY)
        .env("CLOUDSTACK_SECRET", SECRET_KEY)
        .env("HOME", home.path())
        .env_remove("CLOUDSTACK_CONFIG")
        .env_remove("CLOUDSTACK_REGION"));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("checks passed"), "{out:?}");
}

#[test]
fn cs_sigterm_right_after_an_acknowledged_write_keeps_it_in_the_world_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("world.json");
    let sim = CsSimServer::start(&world);
    let networks = sim.call("listNetworks", &[]);
    let network = networks["listnetworksresponse"]["network"][0]["id"]
        .as_str()
        .expect("a network")
        .to_owned();
    // The first change wakes the world writer, which then waits before writing again: the
    // second lands in that pause, so only the flush on SIGTERM can save it.
    sim.call("associateIpAddress", &[("networkid", &network)]);
    let started = sim.call("associateIpAddress", &[("networkid", &network)]);
    let ip = started["associateipaddressresponse"]["id"]
        .as_str()
        .expect("the new address's id")
        .to_owned();
    let job = started["associateipaddressresponse"]["jobid"]
        .as_str()
        .expect("a job")
        .to_owned();
    sim.terminate();
    let text = std::fs::read_to_string(&world).expect("world file");
    let saved: Value = serde_json::from_str(&text).expect("world JSON");
    let address = saved["public_ips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == ip.as_str())
        .expect("the address");
    assert_eq!(address["associatednetworkid"], network.as_str());
    assert!(saved["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|j| j["id"] == job.as_str()));
}
