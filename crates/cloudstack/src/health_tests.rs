use std::sync::Mutex;

use serde_json::{json, Value};

use super::*;
use skyplan_core::model::Address;

/// A cloud answering the three list calls from canned objects, recording each call.
#[derive(Default)]
struct Canned {
    rules: Vec<Value>,
    members: BTreeMap<String, Vec<Value>>,
    clusters: Vec<Value>,
    calls: Mutex<Vec<String>>,
}

fn get<'a>(params: &'a Params, key: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn matches(item: &Value, params: &Params, key: &str, field: &str) -> bool {
    get(params, key).is_none_or(|wanted| item[field] == wanted)
}

impl Api for Canned {
    async fn list(&self, command: &str, params: &Params, _key: &str) -> Result<Vec<Value>, Error> {
        let shown: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let call = format!("{command} {}", shown.join(" "));
        self.calls.lock().unwrap().push(call);
        let by = |items: &[Value]| -> Vec<Value> {
            (items.iter())
                .filter(|i| matches(i, params, "id", "id"))
                .filter(|i| matches(i, params, "publicipid", "publicipid"))
                .cloned()
                .collect()
        };
        Ok(match command {
            "listLoadBalancerRules" => by(&self.rules),
            "listKubernetesClusters" => by(&self.clusters),
            _ => (self.members.get(get(params, "id").unwrap()).cloned()).unwrap_or_default(),
        })
    }

    async fn run_job(&self, command: &str, _params: &Params) -> Result<Value, Error> {
        panic!("a health read changes nothing, yet ran {command}")
    }
}

fn rule(id: &str, name: &str, port: u32, state: &str) -> Value {
    json!({"id": id, "name": name, "publicipid": "ip1", "publicip": "203.0.113.10",
           "publicport": port, "privateport": 30080, "algorithm": "roundrobin", "state": state})
}

fn vm(name: &str, state: &str) -> Value {
    json!({"id": format!("vm-{name}"), "name": name, "state": state})
}

fn change(kind: &str) -> ResourceChange {
    let address: Address = format!("{kind}.web").parse().unwrap();
    ResourceChange::no_op(address, "cloudstack", None)
}

fn entry(id: &str, ids: Value, attributes: Value) -> ResourceState {
    ResourceState {
        provider: "cloudstack".into(),
        id: id.into(),
        ids,
        attributes,
        depends_on: vec![],
    }
}

/// web's rules on ip1, beside another load balancer's rule there (`api-tcp-8080`).
fn two_rules(state_443: &str, vm_2: &str) -> Canned {
    let running = vec![vm("web-1", "Running"), vm("web-2", vm_2)];
    Canned {
        rules: vec![
            rule("r80", "web-tcp-80", 80, "Active"),
            rule("r443", "web-tcp-443", 443, state_443),
            rule("r8080", "api-tcp-8080", 8080, "Add"),
        ],
        members: [("r80".into(), running.clone()), ("r443".into(), running)].into(),
        ..Canned::default()
    }
}

fn direct_entry() -> ResourceState {
    let ids = json!({"public_ip": "ip1", "rules": {"web-tcp-80": "r80", "web-tcp-443": "r443"}});
    entry("ip1", ids, json!({}))
}

async fn read(cloud: &Canned, kind: &str, entry: Option<&ResourceState>) -> Health {
    health(cloud, &change(kind), entry).await.unwrap()
}

#[tokio::test]
async fn active_rules_with_running_vms_are_healthy_in_one_rule_read_and_one_per_rule() {
    let cloud = two_rules("Active", "Running");
    assert_eq!(
        read(&cloud, "load-balancer", Some(&direct_entry())).await,
        Health::Healthy
    );
    let calls = cloud.calls.lock().unwrap().clone();
    assert_eq!(
        calls.len(),
        3,
        "the other rule's VMs are not read: {calls:?}"
    );
    assert_eq!(calls[0], "listLoadBalancerRules publicipid=ip1");
}

#[tokio::test]
async fn a_rule_not_active_a_vm_not_running_and_a_missing_rule_are_each_named() {
    let cloud = two_rules("Add", "Stopped");
    let mut entry = direct_entry();
    entry.ids["rules"]["web-tcp-8080"] = json!("gone");
    let Health::Unhealthy(problems) = read(&cloud, "load-balancer", Some(&entry)).await else {
        panic!("healthy");
    };
    assert_eq!(
        problems,
        [
            "rule web-tcp-443 (203.0.113.10:443): state Add",
            "VM web-2 of rule web-tcp-443: Stopped",
            "VM web-2 of rule web-tcp-80: Stopped",
            "rule web-tcp-8080: not found",
        ]
    );
}

#[tokio::test]
async fn controller_mode_rules_are_read_by_their_ids() {
    let cloud = two_rules("Active", "Stopped");
    let ids = json!({"rules": {"a1b2-tcp-80": "r80"}});
    let entry = entry("r80", ids, json!({}));
    let health = read(&cloud, "load-balancer", Some(&entry)).await;
    let problems = vec!["VM web-2 of rule a1b2-tcp-80: Stopped".to_string()];
    assert_eq!(health, Health::Unhealthy(problems));
    let calls = cloud.calls.lock().unwrap().clone();
    assert_eq!(calls[0], "listLoadBalancerRules id=r80");
}

#[tokio::test]
async fn a_deleted_resource_is_healthy_without_a_read() {
    let cloud = Canned::default();
    assert_eq!(read(&cloud, "load-balancer", None).await, Health::Healthy);
    assert!(cloud.calls.lock().unwrap().is_empty());
}

fn cluster(state: &str, vm_states: &[&str]) -> Value {
    let vms: Vec<Value> = (vm_states.iter().enumerate())
        .map(|(i, state)| json!({"id": format!("v{i}"), "name": format!("lab-node-{i}"), "state": state}))
        .collect();
    json!({"id": "c1", "name": "lab", "zoneid": "z1", "kubernetesversionid": "v1",
           "serviceofferingid": "o1", "size": 2, "state": state, "virtualmachines": vms})
}

fn cluster_entry(state: &str) -> ResourceState {
    let mut spec = serde_json::to_value(crate::cluster::tests::spec()).unwrap();
    spec["state"] = json!(state);
    entry("c1", json!({}), spec)
}

#[tokio::test]
async fn a_running_cluster_with_running_vms_is_healthy_and_otherwise_each_is_named() {
    let healthy = Canned {
        clusters: vec![cluster("Running", &["Running", "Running"])],
        ..Canned::default()
    };
    let running = cluster_entry("running");
    assert_eq!(
        read(&healthy, "cluster", Some(&running)).await,
        Health::Healthy
    );
    let scaling = Canned {
        clusters: vec![cluster("Scaling", &["Running", "Starting"])],
        ..Canned::default()
    };
    let problems = [
        "cluster lab: state Scaling",
        "VM lab-node-1 of cluster lab: Starting",
    ];
    let expected = Health::Unhealthy(problems.map(String::from).to_vec());
    assert_eq!(read(&scaling, "cluster", Some(&running)).await, expected);
}

#[tokio::test]
async fn a_cluster_asked_to_stop_is_healthy_stopped_and_a_missing_one_is_not() {
    let stopped = Canned {
        clusters: vec![cluster("Stopped", &["Stopped"])],
        ..Canned::default()
    };
    assert_eq!(
        read(&stopped, "cluster", Some(&cluster_entry("stopped"))).await,
        Health::Healthy
    );
    let gone = Canned::default();
    let expected = Health::Unhealthy(vec!["cluster c1: not found".into()]);
    assert_eq!(
        read(&gone, "cluster", Some(&cluster_entry("running"))).await,
        expected
    );
}
