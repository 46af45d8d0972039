//! `skyplan sim serve --provider cloudscale` on a free port, stopped with SIGTERM so that it
//! writes its world before it exits.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::run::sim_binary;

pub struct SimServer {
    child: Child,
    pub base_url: String,
    http: reqwest::Client,
}

impl SimServer {
    /// Serves `world` (created fresh if missing) with the given fault spec (`none`, or e.g.
    /// `latency=20-40ms`).
    pub fn start(world: &Path, faults: &str) -> SimServer {
        SimServer::start_settling(world, faults, 5)
    }

    /// [`SimServer::start`] with load balancers `changing` for `settle_ms` after each change.
    pub fn start_settling(world: &Path, faults: &str, settle_ms: u64) -> SimServer {
        let mut child = Command::new(sim_binary())
            .args(["sim", "serve", "--provider", "cloudscale"])
            .args(["--listen", "127.0.0.1:0", "--faults", faults, "--world"])
            .arg(world)
            .env("SKYPLAN_SIM_SETTLE_MS", settle_ms.to_string())
            .env_remove("SKYPLAN_SIM_FAULTS")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sim serve");
        // The first line it prints names the URL it listens on.
        let mut line = String::new();
        BufReader::new(child.stderr.take().expect("piped stderr"))
            .read_line(&mut line)
            .expect("sim output");
        let base_url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        SimServer {
            child,
            base_url,
            http: reqwest::Client::new(),
        }
    }

    /// Ends the server the way a user does (SIGTERM): it writes its world first.
    pub fn stop(mut self) {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
    }

    /// The `/_sim` routes sit beside the API's `/v1`.
    fn sim_url(&self, path: &str) -> String {
        format!("{}/_sim/{path}", self.base_url.trim_end_matches("/v1"))
    }

    pub async fn reset_requests(&self) {
        self.http
            .post(self.sim_url("requests/reset"))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .expect("reset the request counters");
    }

    /// API requests served since the last reset.
    pub async fn requests(&self) -> u64 {
        let counts: serde_json::Value = self
            .http
            .get(self.sim_url("requests"))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .expect("read the request counters")
            .json()
            .await
            .expect("request counters are JSON");
        counts["total"].as_u64().expect("a total count")
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        // Err: it already exited (stopped), which is what we want.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
