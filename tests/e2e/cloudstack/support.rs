//! CloudStack end-to-end helpers: a project on the embedded simulated CloudStack, a served one
//! (`skyplan sim serve --provider cloudstack`, called with signed requests), and a look into
//! that account after skyplan has exited — through skyplan's own client library against the
//! simulator started over the same world file, so the tests read the cloud the way any API
//! client would, not the simulator's file format.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha1::Sha1;
use skyplan_cloudstack::client::{CloudstackClient, Credentials, Secret};
use skyplan_sim::cloudstack as sim;

use crate::support::http;
use crate::support::{binary, Output, Project};

/// The keys `sim serve` accepts without `--api-key`/`--secret-key`.
pub const API_KEY: &str = "skyplan-sim-cloudstack-api-key";

pub const SECRET_KEY: &str = "skyplan-sim-cloudstack-secret-key";

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
        let mut child = Command::new(binary())
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

    /// `GET /_sim/requests`: the counters, the request log and the log of what jobs did to
    /// rules' VMs (`members`).
    pub fn requests(&self) -> Value {
        let body = http::get(&format!("{}/_sim/requests", self.root()))
            .ok()
            .expect("request counters");
        serde_json::from_str(&body).expect("JSON")
    }

    /// `POST /_sim/requests/reset`: empties the counters and both logs.
    pub fn reset_requests(&self) {
        http::request("POST", &format!("{}/_sim/requests/reset", self.root()))
            .ok()
            .expect("reset");
    }

    /// `http://127.0.0.1:PORT`.
    fn root(&self) -> &str {
        self.base_url.trim_end_matches("/client/api")
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

pub const PROVIDER: &str = "[provider.cloudstack]\nendpoint = \"embedded\"\n\n";

/// A project whose config is the CloudStack provider table plus `resources`; running,
/// planning and applying are the project's (`Deref`), with the simulator's jobs made quick.
pub struct CsProject {
    pub project: Project,
}

impl std::ops::Deref for CsProject {
    type Target = Project;

    fn deref(&self) -> &Project {
        &self.project
    }
}

impl CsProject {
    pub fn new() -> CsProject {
        CsProject {
            project: Project::new().with_env("SKYPLAN_SIM_JOB_MS", "5"),
        }
    }

    /// Runs skyplan with this variable set (the embedded simulator's settings, kill points).
    pub fn with_env(self, name: &str, value: &str) -> CsProject {
        CsProject {
            project: self.project.with_env(name, value),
        }
    }

    /// The same project, run without the variable `name`.
    pub fn without_env(self, name: &str) -> CsProject {
        CsProject {
            project: self.project.without_env(name),
        }
    }

    pub fn config(&self, resources: &str) {
        self.project.config(&format!("{PROVIDER}{resources}"));
    }

    /// A config whose CloudStack is `skyplan sim serve` at `api_url`, through a cloud-config
    /// INI with the simulator's default keys.
    pub fn config_served(&self, api_url: &str, resources: &str) {
        self.project.write(
            "cloud-config.ini",
            &format!(
                "[Global]\napi-url = {api_url}\napi-key = {}\nsecret-key = {}\n",
                sim::DEFAULT_API_KEY,
                sim::DEFAULT_SECRET_KEY
            ),
        );
        self.project.config(&format!(
            "[provider.cloudstack]\ncloud-config = \"cloud-config.ini\"\n\n{resources}"
        ));
    }

    /// Runs skyplan with `extra` variables besides the project's own.
    pub fn run_with(&self, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let mut command = self.project.command(args);
        for (name, value) in extra {
            command.env(name, value);
        }
        crate::support::run(&mut command)
    }

    /// Applies and checks that planning again finds nothing to do.
    pub fn apply_converges(&self) {
        self.apply_ok();
        let plan = self.plan(&[]);
        let changes = plan["changes"].as_array().expect("changes");
        let pending: Vec<&Value> = changes.iter().filter(|c| c["action"] != "no-op").collect();
        assert!(
            pending.is_empty(),
            "apply then plan must be empty: {plan:#}"
        );
    }

    pub fn world_path(&self) -> PathBuf {
        self.project.path().join("state/embedded/cloudstack.json")
    }

    /// The simulated account as an API client sees it now.
    pub fn account(&self) -> Account {
        Account::read(self.world_path())
    }
}

/// What a list command returned, per collection.
pub struct Account {
    pub clusters: Vec<Value>,
    pub rules: Vec<Value>,
    pub vms: Vec<Value>,
    pub public_ips: Vec<Value>,
    pub firewall_rules: Vec<Value>,
    /// VM names assigned to each rule (by rule name).
    pub rule_members: Vec<(String, Vec<String>)>,
}

impl Account {
    /// The embedded account: a simulator started over its world file for the reading.
    fn read(world: PathBuf) -> Account {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(async move {
            let listen = "127.0.0.1:0".parse().expect("address");
            let handle = sim::spawn(world, listen, sim::SimOptions::default())
                .await
                .expect("simulator over the world file");
            let account = Account::list_all(&handle.base_url()).await;
            handle.shutdown().await.expect("simulator stops");
            account
        })
    }

    /// The account behind a running API (`skyplan sim serve`) with the default keys.
    pub fn read_at(api_url: &str) -> Account {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(Account::list_all(api_url))
    }

    async fn list_all(api_url: &str) -> Account {
        let client = CloudstackClient::new(Credentials {
            api_url: api_url.to_string(),
            api_key: sim::DEFAULT_API_KEY.into(),
            secret_key: Secret::new(sim::DEFAULT_SECRET_KEY),
            project_id: None,
            zone: None,
            ssl_no_verify: false,
        })
        .expect("client");
        let list = |command: &'static str, key: &'static str| {
            let client = &client;
            async move {
                client
                    .list(command, &Vec::new(), key)
                    .await
                    .unwrap_or_else(|e| panic!("{command}: {e}"))
            }
        };
        let rules = list("listLoadBalancerRules", "loadbalancerrule").await;
        let mut rule_members = Vec::new();
        for rule in &rules {
            let id = rule["id"].as_str().expect("rule id").to_string();
            let vms = client
                .list(
                    "listLoadBalancerRuleInstances",
                    &vec![("id".into(), id)],
                    "loadbalancerruleinstance",
                )
                .await
                .expect("rule members");
            let mut names: Vec<String> = vms
                .iter()
                .map(|vm| vm["name"].as_str().unwrap_or_default().to_string())
                .collect();
            names.sort();
            rule_members.push((text(rule, "name"), names));
        }
        Account {
            clusters: list("listKubernetesClusters", "kubernetescluster").await,
            rules,
            vms: list("listVirtualMachines", "virtualmachine").await,
            public_ips: list("listPublicIpAddresses", "publicipaddress").await,
            firewall_rules: list("listFirewallRules", "firewallrule").await,
            rule_members,
        }
    }

    pub fn cluster(&self, name: &str) -> &Value {
        self.clusters
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no cluster {name}: {:#?}", self.clusters))
    }

    pub fn rule(&self, name: &str) -> &Value {
        self.rules
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no rule {name}: {:#?}", self.rules))
    }

    pub fn rule_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.rules.iter().map(|r| text(r, "name")).collect();
        names.sort();
        names
    }

    pub fn members_of(&self, rule: &str) -> Vec<String> {
        self.rule_members
            .iter()
            .find(|(name, _)| name == rule)
            .map(|(_, vms)| vms.clone())
            .unwrap_or_default()
    }
}

/// A field as text, whether the API sent a string or a number.
pub fn text(object: &Value, field: &str) -> String {
    match &object[field] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The one change of `address` in a JSON plan.
pub fn change<'a>(plan: &'a Value, address: &str) -> &'a Value {
    plan["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("no change for {address}: {plan:#}"))
}

/// The attribute paths of a change.
pub fn paths(change: &Value) -> Vec<String> {
    change["attributes"]
        .as_array()
        .expect("attributes")
        .iter()
        .map(|a| text(a, "path"))
        .collect()
}

/// The reasons of a change, joined, for assertions on what they say.
pub fn reasons(change: &Value) -> String {
    change["attributes"]
        .as_array()
        .expect("attributes")
        .iter()
        .map(|a| text(a, "reason"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The operations of a change, as text.
pub fn operations(change: &Value) -> Vec<String> {
    change["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .map(|o| {
            o.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| o.to_string())
        })
        .collect()
}
