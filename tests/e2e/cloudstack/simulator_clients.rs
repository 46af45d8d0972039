//! `skyplan sim serve --provider cloudstack` against clients written for the real CloudStack
//! API: the Python `cs` tool, and signed requests sent as plain HTTP; and the promise that an
//! acknowledged change survives a SIGTERM.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha1::Sha1;

use crate::support::http;
use crate::support::{run, BINARY};

/// The Python with `cs==3.2.0` installed (CI sets it in .ci/run).
const PYTHON_VAR: &str = "SKYPLAN_CS_PYTHON";
/// The keys `sim serve` accepts without `--api-key`/`--secret-key`.
const API_KEY: &str = "skyplan-sim-cloudstack-api-key";
const SECRET_KEY: &str = "skyplan-sim-cloudstack-secret-key";

/// `skyplan sim serve --provider cloudstack` on a free port; killed on drop.
pub struct CsSimServer {
    child: Child,
    /// `http://127.0.0.1:PORT/client/api`.
    pub base_url: String,
}

impl CsSimServer {
    pub fn start(world: &Path) -> CsSimServer {
        CsSimServer::start_with(world, &[])
    }

    /// With more `sim serve` options, e.g. `--secret-key` or `--server-version`.
    pub fn start_with(world: &Path, options: &[&str]) -> CsSimServer {
        let job_ms: &[&str] = match options.contains(&"--job-ms") {
            true => &[],
            false => &["--job-ms", "50"],
        };
        let mut child = Command::new(BINARY)
            .args(["sim", "serve", "--provider", "cloudstack"])
            .args(["--listen", "127.0.0.1:0"])
            .args(job_ms)
            .args(options)
            .arg("--world")
            .arg(world)
            .env_remove("SKYPLAN_SIM_FAULTS")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sim serve");
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .expect("sim output");
        let base_url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        CsSimServer { child, base_url }
    }

    /// A signed GET, signed the way the server checks (research §4.1); the JSON answer.
    pub fn call(&self, command: &str, params: &[(&str, &str)]) -> Value {
        let mut pairs: Vec<(String, String)> = vec![
            ("command".into(), command.into()),
            ("response".into(), "json".into()),
            ("apiKey".into(), API_KEY.into()),
        ];
        pairs.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        pairs.sort();
        let query = pairs
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let mut mac = Hmac::<Sha1>::new_from_slice(SECRET_KEY.as_bytes()).unwrap();
        mac.update(query.to_lowercase().as_bytes());
        let signature =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        let url = format!("{}?{query}&signature={}", self.base_url, encode(&signature));
        let body = http::get(&url)
            .ok()
            .unwrap_or_else(|e| panic!("{command}: {e}"));
        serde_json::from_str(&body).expect("JSON")
    }

    /// Sends SIGTERM and waits for the process to end.
    pub fn terminate(mut self) {
        crate::support::terminate(&mut self.child);
    }
}

impl Drop for CsSimServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Java `URLEncoder` with `+` as `%20`: only `A-Z a-z 0-9 . - * _` stay literal.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

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
