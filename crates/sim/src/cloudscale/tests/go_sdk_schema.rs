//! Every JSON field of the cloudscale Go SDK's response types (v6.0.0, what the cloudscale CCM
//! 1.3.0 is built with) is in the simulator's answers. The SDK's source is read at test time
//! from Go's module cache, where `.ci/run` downloads it; nothing of it is in this repository.

use std::path::PathBuf;
use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::go_structs::GoStructs;
use super::{uuid, Harness};
use crate::cloudscale::{DEFAULT_NETWORK_UUID, DEFAULT_SUBNET_UUID};

const MODULE: &str = "github.com/cloudscale-ch/cloudscale-go-sdk/v6@v6.0.0";

#[tokio::test]
#[ignore = "needs go and the cloudscale-go-sdk v6 module (.ci/run downloads it)"]
async fn every_field_of_the_go_sdk_response_types_is_answered() {
    let structs = go_sdk_structs();
    let h = Harness::start().await;
    let world = populate(&h).await;
    let mut problems = Vec::new();
    for (name, samples) in samples(&h, &world).await {
        assert!(structs.has(name), "the SDK has no struct {name}");
        assert!(!samples.is_empty(), "no answer to check {name} against");
        problems.extend(structs.check(name, &samples));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The SDK's non-test Go files, from the module cache; a loud failure without them.
fn go_sdk_structs() -> GoStructs {
    let dir = module_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{}: {e}. Download it with `go mod download {MODULE}` (in any Go module; .ci/run does)",
            dir.display()
        )
    });
    let mut structs = GoStructs::default();
    let mut files = 0;
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".go") && !name.ends_with("_test.go") {
            structs.add_source(&std::fs::read_to_string(&path).expect("readable Go source"));
            files += 1;
        }
    }
    assert!(files > 10, "only {files} Go files in {}", dir.display());
    structs
}

fn module_dir() -> PathBuf {
    let output = Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .unwrap_or_else(|e| panic!("this test needs `go` on PATH to find {MODULE}: {e}"));
    assert!(output.status.success(), "go env GOMODCACHE: {output:?}");
    let cache = String::from_utf8(output.stdout).expect("a UTF-8 path");
    PathBuf::from(cache.trim()).join(MODULE)
}

/// What the checked answers are made of, so that every nested struct shows up filled at least
/// once: two servers in a server group with public and private interfaces, a load balancer
/// with a pool, a member, an HTTP monitor and a listener, floating IPs on a server and on the
/// load balancer.
struct Populated {
    server: Value,
    pool: Value,
}

async fn populate(h: &Harness) -> Populated {
    let group = created(h.post("/server-groups", json!({"name": "apart"})).await);
    let mut server = Value::Null;
    for name in ["node-1", "node-2"] {
        let body = json!({"name": name, "flavor": "flex-4-2", "image": "debian-12",
            "server_groups": [uuid(&group)],
            "interfaces": [{"network": "public"}, {"network": DEFAULT_NETWORK_UUID}]});
        server = created(h.post("/servers", body).await);
    }
    let lb = h.create_lb("web", json!({"team": "a"})).await;
    let pool = h.create_pool(&lb).await;
    let member = json!({"name": "10.0.0.9:30080", "protocol_port": 30080,
        "address": "10.0.0.9", "subnet": DEFAULT_SUBNET_UUID});
    let members = format!("/load-balancers/pools/{}/members", uuid(&pool));
    created(h.post(&members, member).await);
    let monitor = json!({"pool": uuid(&pool), "type": "http", "http": {"host": "a.example"}});
    created(h.post("/load-balancers/health-monitors", monitor).await);
    let listener = json!({"name": "tcp/80", "pool": uuid(&pool), "protocol_port": 80});
    created(h.post("/load-balancers/listeners", listener).await);
    let (_, ips) = h.get("/floating-ips").await;
    let address = |i: usize| ips[i]["network"].as_str().unwrap().replace("/32", "");
    let to_server = json!({"server": uuid(&server)});
    let to_lb = json!({"load_balancer": uuid(&lb)});
    for (i, body) in [to_server, to_lb].into_iter().enumerate() {
        let (status, _) = h
            .patch(&format!("/floating-ips/{}", address(i)), body)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
    Populated { server, pool }
}

fn created((status, object): (StatusCode, Value)) -> Value {
    assert_eq!(status, StatusCode::CREATED, "{object}");
    object
}

/// The answers to check, by the SDK struct they decode into.
async fn samples(h: &Harness, world: &Populated) -> Vec<(&'static str, Vec<Value>)> {
    let members = format!("/load-balancers/pools/{}/members", uuid(&world.pool));
    let lists = [
        ("Server", "/servers"),
        ("ServerGroup", "/server-groups"),
        ("Region", "/regions"),
        ("Network", "/networks"),
        ("Subnet", "/subnets"),
        ("FloatingIP", "/floating-ips"),
        ("LoadBalancer", "/load-balancers"),
        ("LoadBalancerPool", "/load-balancers/pools"),
        ("LoadBalancerPoolMember", members.as_str()),
        ("LoadBalancerListener", "/load-balancers/listeners"),
        (
            "LoadBalancerHealthMonitor",
            "/load-balancers/health-monitors",
        ),
    ];
    let mut out = Vec::new();
    for (name, path) in lists {
        let (status, list) = h.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {list}");
        out.push((name, list.as_array().expect("a list").clone()));
    }
    let (_, server) = h.get(&format!("/servers/{}", uuid(&world.server))).await;
    out.push(("Flavor", vec![server["flavor"].clone()]));
    out.push(("Image", vec![server["image"].clone()]));
    out
}
