//! `skyplan sim serve --provider phoenixnap` against plain HTTP requests: the token
//! endpoint (HTTP Basic and form credentials), the bearer check, and the wire format of the
//! CCM's whole load-balancer flow (research/phoenixnap.md §1-4): tag names, a /29 with the
//! CCM's four tags, tag filters, the asynchronous attach and detach, delete, 406 and 400s.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::http;
use crate::support::{binary, terminate};

const CLIENT_ID: &str = "skyplan-sim-pnap-client";
const CLIENT_SECRET: &str = "skyplan-sim-pnap-secret";
const TOKEN_PATH: &str = "/auth/realms/BMC/protocol/openid-connect/token";
const CCM_TAGS: [&str; 5] = [
    "usage",
    "cluster",
    "serviceNamespace",
    "serviceName",
    "delete",
];

/// `skyplan sim serve --provider phoenixnap` on a free port; killed on drop.
struct PnapServer {
    child: Child,
    /// `http://127.0.0.1:PORT`, the root of the four APIs and the token endpoint.
    root: String,
    /// What it printed on start.
    banner: String,
}

impl PnapServer {
    fn start(world: &Path, options: &[&str]) -> PnapServer {
        PnapServer::spawn(world, options, None)
    }

    fn start_with_env(world: &Path, env: (&str, &str)) -> PnapServer {
        PnapServer::spawn(world, &[], Some(env))
    }

    fn spawn(world: &Path, options: &[&str], env: Option<(&str, &str)>) -> PnapServer {
        let mut command = Command::new(binary());
        command.env_remove("SKYPLAN_SIM_PNAP_TOKEN_TTL_S");
        if let Some((key, value)) = env {
            command.env(key, value);
        }
        let mut child = command
            .args(["sim", "serve", "--provider", "phoenixnap"])
            .args(["--listen", "127.0.0.1:0", "--transition-ms", "100"])
            .args(options)
            .arg("--world")
            .arg(world)
            .env_remove("SKYPLAN_SIM_FAULTS")
            .env_remove("SKYPLAN_SIM_PNAP_TRANSITION_MS")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sim serve");
        let mut banner = String::new();
        BufReader::new(child.stderr.as_mut().unwrap())
            .read_line(&mut banner)
            .expect("sim output");
        let root = banner
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {banner:?}"))
            .to_string();
        PnapServer {
            child,
            root,
            banner,
        }
    }

    /// Stops it with SIGTERM; everything it wrote to stderr.
    fn stop(mut self) -> String {
        terminate(&mut self.child);
        let mut rest = String::new();
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut rest);
        format!("{}{rest}", self.banner)
    }

    /// A token for the default client by form fields.
    fn token(&self) -> String {
        let form = format!(
            "grant_type=client_credentials&client_id={CLIENT_ID}&client_secret={CLIENT_SECRET}"
        );
        let (status, body) = answer(http::request("POST", &self.url(TOKEN_PATH)).form(&form));
        assert_eq!(status, 200, "{body}");
        body["access_token"].as_str().unwrap().to_owned()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }

    /// An API call with the bearer token and, for a body, JSON.
    fn call(&self, token: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let request = http::request(method, &self.url(path)).bearer(token);
        answer(match body {
            Some(body) => request.json(&body),
            None => request,
        })
    }

    /// Polls the block until its status is `status` (the transitions take 100 ms).
    fn wait_for_status(&self, token: &str, block: &str, status: &str) -> Value {
        let started = Instant::now();
        loop {
            let (code, body) = self.call(token, "GET", &format!("/ips/v1/ip-blocks/{block}"), None);
            assert_eq!(code, 200, "{body}");
            if body["status"] == status {
                return body;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "still {body}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for PnapServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answer's status code and its body as JSON (`null` when empty).
fn answer(request: http::Request) -> (u16, Value) {
    let response = request.send();
    (response.status, response.json())
}

#[test]
fn tokens_by_basic_auth_and_by_form_and_every_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "very-secret-value-42";
    let server = PnapServer::start(
        &dir.path().join("pnap.json"),
        &["--client-id", "my-client", "--client-secret", secret],
    );
    let (status, body) = answer(
        http::request("POST", &server.url(TOKEN_PATH))
            .basic_auth("my-client", secret)
            .form("grant_type=client_credentials"),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["token_type"].as_str(), body["expires_in"].as_u64()),
        (Some("Bearer"), Some(3600))
    );
    assert_eq!(body["scope"], "bmc bmc.read tags tags.read");
    let token = body["access_token"].as_str().unwrap().to_owned();

    let form = format!(
        "grant_type=client_credentials&client_id=my-client&client_secret={secret}&scope=bmc.read"
    );
    let (status, body) = answer(http::request("POST", &server.url(TOKEN_PATH)).form(&form));
    assert_eq!((status, body["scope"].as_str()), (200, Some("bmc.read")));
    let read_only = body["access_token"].as_str().unwrap().to_owned();

    let wrong = "grant_type=client_credentials&client_id=my-client&client_secret=nope";
    let (status, body) = answer(http::request("POST", &server.url(TOKEN_PATH)).form(wrong));
    assert_eq!(status, 401);
    assert_eq!(body["error"], "unauthorized_client");
    assert!(body["error_description"].is_string());

    let (status, body) = answer(http::get(&server.url("/bmc/v1/servers")));
    assert_eq!(status, 401);
    assert!(body["message"].is_string(), "{body}");
    let (status, _) = server.call("made-up", "GET", "/bmc/v1/servers", None);
    assert_eq!(status, 401);
    let (status, servers) = server.call(&token, "GET", "/bmc/v1/servers", None);
    assert_eq!((status, servers.as_array().unwrap().len()), (200, 3));
    let block = json!({"location": "PHX", "cidrBlockSize": "/29"});
    let (status, body) = server.call(&read_only, "POST", "/ips/v1/ip-blocks", Some(block));
    assert_eq!(status, 403, "{body}");

    let output = server.stop();
    assert!(
        output.contains("phoenixnap simulator listening"),
        "{output}"
    );
    assert!(
        !output.contains(secret),
        "the secret is never echoed: {output}"
    );
    assert!(!output.contains(&token), "nor a token: {output}");
}

#[test]
fn the_ccm_flow_over_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let server = PnapServer::start(&dir.path().join("pnap.json"), &[]);
    let token = server.token();
    let call =
        |method: &str, path: &str, body: Option<Value>| server.call(&token, method, path, body);

    for name in CCM_TAGS {
        let (status, body) = call(
            "POST",
            "/tag-manager/v1/tags",
            Some(json!({"name": name, "isBillingTag": false})),
        );
        assert_eq!(status, 201, "{body}");
        assert_eq!(body["name"], name);
    }
    let (status, _) = call(
        "POST",
        "/tag-manager/v1/tags",
        Some(json!({"name": "usage", "isBillingTag": false})),
    );
    assert_eq!(status, 409);

    let (status, networks) = call("GET", "/networks/v1/public-networks?location=PHX", None);
    assert_eq!(status, 200);
    let network = networks[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(networks[0]["name"], "k8s-public");

    let create = json!({
        "location": "PHX",
        "cidrBlockSize": "/29",
        "tags": [
            {"name": "usage", "value": "cloud-provider-phoenixnap-auto"},
            {"name": "cluster", "value": "3f0c2a1e-uid"},
            {"name": "serviceNamespace", "value": "default"},
            {"name": "serviceName", "value": "web"},
        ],
    });
    let (status, block) = call("POST", "/ips/v1/ip-blocks", Some(create));
    assert_eq!(status, 201, "{block}");
    assert_eq!(
        (block["status"].as_str(), block["cidrBlockSize"].as_str()),
        (Some("unassigned"), Some("/29"))
    );
    assert_eq!(block["tags"].as_array().unwrap().len(), 4);
    for tag in block["tags"].as_array().unwrap() {
        assert!(
            tag["id"].is_string() && tag["name"].is_string() && tag["isBillingTag"].is_boolean()
        );
    }
    let id = block["id"].as_str().unwrap().to_owned();

    let filter =
        "/ips/v1/ip-blocks?tag=cluster.3f0c2a1e-uid&tag=usage.cloud-provider-phoenixnap-auto\
                  &tag=serviceName.web&tag=serviceNamespace.default";
    let (status, found) = call("GET", filter, None);
    assert_eq!((status, found.as_array().unwrap().len()), (200, 1));
    assert_eq!(found[0]["id"], id.as_str());
    let (_, other) = call(
        "GET",
        "/ips/v1/ip-blocks?tag=cluster.3f0c2a1e-uid&tag=serviceName.api",
        None,
    );
    assert!(
        other.as_array().unwrap().is_empty(),
        "filters combine with AND"
    );

    let attach = format!("/networks/v1/public-networks/{network}/ip-blocks");
    let (status, body) = call("POST", &attach, Some(json!({"id": id})));
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["id"], id.as_str());
    assert_eq!(body["cidr"], block["cidr"]);
    assert!(body["usedIpsCount"].is_string());
    let assigned = server.wait_for_status(&token, &id, "assigned");
    assert_eq!(assigned["assignedResourceId"], network.as_str());
    assert_eq!(assigned["assignedResourceType"], "public network");

    let (status, body) = call("DELETE", &format!("/ips/v1/ip-blocks/{id}"), None);
    assert_eq!(status, 409, "delete refused while assigned: {body}");
    assert!(body["message"].is_string());

    let (status, body) = call("DELETE", &format!("{attach}/{id}"), None);
    assert_eq!(status, 202);
    assert_eq!(
        body,
        json!("The specified IP block is being removed from the Public Network.")
    );
    let unassigned = server.wait_for_status(&token, &id, "unassigned");
    assert!(unassigned["assignedResourceId"].is_null());

    let (status, body) = call("DELETE", &format!("/ips/v1/ip-blocks/{id}"), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"result": "IP Block has been deleted.", "ipBlockId": id})
    );
    let (status, _) = call("GET", &format!("/ips/v1/ip-blocks/{id}"), None);
    assert_eq!(status, 404);
}

#[test]
fn an_exhausted_pool_is_406_and_invalid_fields_are_400_with_validation_errors() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("tiny.json");
    // A hand-written world: one /28 in PHX holds two /29s.
    std::fs::write(
        &world,
        r#"{"locations": [{"code": "PHX", "ip_pools": ["198.19.0.0/28"]}]}"#,
    )
    .unwrap();
    let server = PnapServer::start(&world, &[]);
    let token = server.token();
    let block = json!({"location": "PHX", "cidrBlockSize": "/29"});
    let mut cidrs = Vec::new();
    for _ in 0..2 {
        let (status, body) = server.call(&token, "POST", "/ips/v1/ip-blocks", Some(block.clone()));
        assert_eq!(status, 201, "{body}");
        cidrs.push(body["cidr"].as_str().unwrap().to_owned());
    }
    assert_eq!(cidrs, ["198.19.0.0/29", "198.19.0.8/29"]);
    let (status, body) = server.call(&token, "POST", "/ips/v1/ip-blocks", Some(block));
    assert_eq!(status, 406);
    assert_eq!(
        body["message"],
        "No IP Blocks available of provided cidr block size"
    );

    let invalid = json!({
        "location": "PHX",
        "cidrBlockSize": "/29",
        "tags": [{"name": "serviceName", "value": "default.web"}],
    });
    let (status, body) = server.call(&token, "POST", "/ips/v1/ip-blocks", Some(invalid));
    assert_eq!(status, 400);
    assert!(body["message"].is_string());
    let errors = body["validationErrors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{body}");
    assert!(errors[0].as_str().unwrap().contains("tags[0].value"));
    let (status, body) = server.call(
        &token,
        "POST",
        "/tag-manager/v1/tags",
        Some(json!({"name": "ns/name", "isBillingTag": false})),
    );
    assert_eq!(status, 400);
    assert!(!body["validationErrors"].as_array().unwrap().is_empty());

    server.stop();
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&world).unwrap()).unwrap();
    assert_eq!(
        saved["ip_blocks"].as_array().unwrap().len(),
        2,
        "the world is written on SIGTERM"
    );
}

/// `SKYPLAN_SIM_PNAP_TOKEN_TTL_S` shortens the tokens' life, so a client's refresh before
/// expiry can be tested; an expired token is a 401.
#[test]
fn tokens_expire_after_the_configured_lifetime() {
    let dir = tempfile::tempdir().unwrap();
    let server = PnapServer::start_with_env(
        &dir.path().join("pnap.json"),
        ("SKYPLAN_SIM_PNAP_TOKEN_TTL_S", "1"),
    );
    let form = format!(
        "grant_type=client_credentials&client_id={CLIENT_ID}&client_secret={CLIENT_SECRET}"
    );
    let (status, body) = answer(http::request("POST", &server.url(TOKEN_PATH)).form(&form));
    assert_eq!((status, body["expires_in"].as_u64()), (200, Some(1)));
    let token = body["access_token"].as_str().unwrap();
    let (status, _) = server.call(token, "GET", "/ips/v1/ip-blocks", None);
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_millis(1100));
    let (status, body) = server.call(token, "GET", "/ips/v1/ip-blocks", None);
    assert_eq!(status, 401);
    assert!(
        body["message"].as_str().unwrap().contains("expired"),
        "{body}"
    );
}

/// The Python with PhoenixNAP's SDKs installed (CI sets it in .ci/run).
const PYTHON_VAR: &str = "SKYPLAN_PNAP_PYTHON";

/// PhoenixNAP's own SDKs, generated from the real specs with strict response models, walk the
/// CCM's flow and the servers against the simulator (`tests/clients/pnap_sdk_check.py`).
#[test]
#[ignore = "needs Python with PhoenixNAP's SDKs: SKYPLAN_PNAP_PYTHON (.ci/run installs them)"]
fn phoenixnap_sdks_parse_every_answer() {
    let python = crate::support::needs::env(
        PYTHON_VAR,
        "a Python with pnap-ip-api, pnap-network-api, pnap-tag-api and pnap-bmc-api",
    );
    let dir = tempfile::tempdir().unwrap();
    let server = PnapServer::start(&dir.path().join("pnap.json"), &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/pnap_sdk_check.py");
    let out = crate::support::run(
        Command::new(python)
            .arg(script)
            .env("PNAP_SIM_ROOT", &server.root)
            .env_remove("PNAP_CLIENT_ID")
            .env_remove("PNAP_CLIENT_SECRET"),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("checks passed"), "{out:?}");
}
