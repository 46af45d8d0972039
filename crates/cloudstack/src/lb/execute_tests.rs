//! The executor against a small fake cloud: the ops a plan lists become the API calls in
//! order, names resolve to the IDs the cloud holds, and the state entry records what was made.
//! (The real client and the simulator are exercised end to end elsewhere.)

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{json, Value};

use super::{apply_with, Api};
use crate::client::{Error, Params};
use crate::lb::found::LbIds;
use crate::lb::tests::{address, base, empty_world, plan_in, port, world, Flags, IP, IP_ID};
use crate::live::{ClusterRef, Inventory};
use crate::spec::{CloudstackLoadBalancerSpec, CsMembers, CsProtocol};
use skyplan_core::plan::ResourceChange;
use skyplan_core::state::journal::Journal;
use skyplan_core::state::ResourceState;

/// What the fake cloud holds, as the list commands return it.
#[derive(Default)]
struct Cloud {
    ips: Vec<Value>,
    rules: Vec<Value>,
    firewall: Vec<Value>,
    members: BTreeMap<String, Vec<String>>,
    clusters: Vec<Value>,
    tags: Vec<(String, String)>,
    calls: Vec<String>,
    /// The list commands read, in order.
    reads: Vec<String>,
    /// Commands whose next answer is lost after the cloud carried them out.
    lose: Vec<String>,
    next: u32,
}

struct Fake(Mutex<Cloud>);

fn get<'a>(params: &'a Params, key: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn field(value: &Value, key: &str) -> String {
    match &value[key] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether every filter parameter the fake knows matches the object.
fn matches(object: &Value, params: &Params, filters: &[(&str, &str)]) -> bool {
    filters.iter().all(|(param, key)| match get(params, param) {
        Some(wanted) => field(object, key) == wanted,
        None => true,
    })
}

impl Cloud {
    fn id(&mut self, kind: &str) -> String {
        self.next += 1;
        format!("{kind}-new-{}", self.next)
    }

    fn list(&self, command: &str, params: &Params) -> Vec<Value> {
        match command {
            "listPublicIpAddresses" => self
                .ips
                .iter()
                .filter(|ip| {
                    matches(
                        ip,
                        params,
                        &[
                            ("ipaddress", "ipaddress"),
                            ("associatednetworkid", "associatednetworkid"),
                        ],
                    )
                })
                .filter(|ip| match get(params, "tags[0].value") {
                    Some(owner) => self.tags.contains(&(field(ip, "id"), owner.to_string())),
                    None => true,
                })
                .cloned()
                .collect(),
            "listLoadBalancerRules" => self
                .rules
                .iter()
                .filter(|r| matches(r, params, &[("publicipid", "publicipid"), ("name", "name")]))
                .cloned()
                .collect(),
            "listFirewallRules" => self
                .firewall
                .iter()
                .filter(|f| matches(f, params, &[("ipaddressid", "ipaddressid")]))
                .cloned()
                .collect(),
            "listKubernetesClusters" => self
                .clusters
                .iter()
                .filter(|c| matches(c, params, &[("name", "name")]))
                .cloned()
                .collect(),
            "listLoadBalancerRuleInstances" => self
                .members
                .get(get(params, "id").unwrap_or_default())
                .into_iter()
                .flatten()
                .map(|id| json!({"id": id}))
                .collect(),
            other => panic!("the fake cannot list {other}"),
        }
    }

    fn run(&mut self, command: &str, params: &Params) -> Value {
        let id = get(params, "id").unwrap_or_default().to_string();
        let vms = || -> Vec<String> {
            get(params, "virtualmachineids")
                .unwrap_or_default()
                .split(',')
                .map(str::to_string)
                .collect()
        };
        match command {
            "associateIpAddress" => {
                let ip = json!({
                    "id": self.id("ip"), "ipaddress": "198.51.100.77",
                    "associatednetworkid": get(params, "networkid"), "state": "Allocated"
                });
                self.ips.push(ip.clone());
                json!({ "ipaddress": ip })
            }
            "createTags" => {
                let owner = get(params, "tags[0].value").unwrap().to_string();
                let resource = get(params, "resourceids").unwrap().to_string();
                let tag = json!({"key": get(params, "tags[0].key"), "value": owner});
                for object in self.ips.iter_mut().chain(self.rules.iter_mut()) {
                    if field(object, "id") == resource {
                        object["tags"] = json!([tag]);
                    }
                }
                self.tags.push((resource, owner));
                json!({"success": true})
            }
            "createLoadBalancerRule" => {
                let rule = json!({
                    "id": self.id("rule"), "name": get(params, "name"),
                    "publicipid": get(params, "publicipid"), "publicport": get(params, "publicport"),
                    "privateport": get(params, "privateport"), "protocol": get(params, "protocol"),
                    "algorithm": get(params, "algorithm"), "networkid": get(params, "networkid"),
                });
                self.rules.push(rule.clone());
                json!({ "loadbalancer": rule })
            }
            "updateLoadBalancerRule" => {
                let rule = self
                    .rules
                    .iter_mut()
                    .find(|r| field(r, "id") == id)
                    .unwrap();
                for key in ["name", "algorithm", "description"] {
                    if let Some(value) = get(params, key) {
                        rule[key] = json!(value);
                    }
                }
                json!({ "loadbalancer": rule.clone() })
            }
            "deleteLoadBalancerRule" => {
                let before = self.rules.len();
                self.rules.retain(|r| field(r, "id") != id);
                assert_eq!(self.rules.len() + 1, before, "no rule {id}");
                json!({"success": true})
            }
            "assignToLoadBalancerRule" => {
                self.members.entry(id).or_default().extend(vms());
                json!({"success": true})
            }
            "removeFromLoadBalancerRule" => {
                let gone = vms();
                self.members
                    .entry(id)
                    .or_default()
                    .retain(|vm| !gone.contains(vm));
                json!({"success": true})
            }
            "createFirewallRule" => {
                let rule = json!({
                    "id": self.id("fw"), "ipaddressid": get(params, "ipaddressid"),
                    "protocol": get(params, "protocol"), "startport": get(params, "startport"),
                    "endport": get(params, "endport"), "cidrlist": get(params, "cidrlist"),
                });
                self.firewall.push(rule.clone());
                json!({ "firewallrule": rule })
            }
            "deleteFirewallRule" => {
                self.firewall.retain(|f| field(f, "id") != id);
                json!({"success": true})
            }
            "disassociateIpAddress" => {
                self.ips.retain(|ip| field(ip, "id") != id);
                json!({"success": true})
            }
            other => panic!("the fake cannot run {other}"),
        }
    }
}

impl Api for Fake {
    async fn list(&self, command: &str, params: &Params, _key: &str) -> Result<Vec<Value>, Error> {
        let mut cloud = self.0.lock().unwrap();
        cloud.reads.push(command.to_string());
        Ok(cloud.list(command, params))
    }

    async fn run_job(&self, command: &str, params: &Params) -> Result<Value, Error> {
        let mut cloud = self.0.lock().unwrap();
        let id = get(params, "id")
            .map(|id| format!(" {id}"))
            .unwrap_or_default();
        cloud.calls.push(format!("{command}{id}"));
        let answer = cloud.run(command, params);
        if let Some(at) = cloud.lose.iter().position(|c| c == command) {
            cloud.lose.remove(at);
            return Err(lost(command));
        }
        Ok(answer)
    }
}

/// A 530 from the server: the call may have been carried out (`is_uncertain`).
fn lost(command: &str) -> Error {
    Error::Api {
        command: command.to_string(),
        errorcode: 530,
        cserrorcode: None,
        text: "the answer was lost".into(),
    }
}

/// The fake cloud holding what the inventory holds.
fn fake_of(live: &Inventory) -> Fake {
    let to_values = |items: Vec<Value>| items;
    let cloud = Cloud {
        ips: to_values(
            live.public_ips
                .iter()
                .map(|ip| serde_json::to_value(ip).unwrap())
                .collect(),
        ),
        rules: live
            .rules
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect(),
        firewall: live
            .firewall_rules
            .iter()
            .map(|f| serde_json::to_value(f).unwrap())
            .collect(),
        members: live.rule_members.clone(),
        tags: live
            .public_ips
            .iter()
            .flat_map(|ip| ip.tags.iter().map(|t| (ip.id.clone(), t.value.clone())))
            .collect(),
        ..Cloud::default()
    };
    Fake(Mutex::new(cloud))
}

async fn run(
    fake: &Fake,
    change: &ResourceChange,
    prior: Option<&ResourceState>,
) -> Option<ResourceState> {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::start(dir.path()).unwrap();
    let state = apply_with(fake, &journal, change, prior).await.unwrap();
    let lines = std::fs::read_to_string(dir.path().join("skyplan.journal")).unwrap();
    // An intent and a done line per operation.
    assert_eq!(lines.lines().count(), 2 * change.operations.len());
    state
}

fn ids(state: &ResourceState) -> LbIds {
    serde_json::from_value(state.ids.clone()).unwrap()
}

#[tokio::test]
async fn a_created_load_balancer_is_recorded_with_its_ip_and_rules() {
    let spec = base();
    let live = empty_world();
    let change = plan_in(&live, None, Some(&spec), None, Flags::default()).unwrap();
    let fake = fake_of(&live);
    let state = run(&fake, &change, None).await.unwrap();
    let cloud = fake.0.lock().unwrap();
    assert_eq!(
        cloud.calls,
        [
            "associateIpAddress",
            "createTags",
            "createLoadBalancerRule",
            "createTags",
            "assignToLoadBalancerRule rule-new-2",
            "createFirewallRule",
        ]
    );
    assert_eq!(state.id, "ip-new-1");
    let ids = ids(&state);
    assert!(ids.ip_associated_by_skyplan);
    assert_eq!(ids.address.as_deref(), Some("198.51.100.77"));
    assert_eq!(
        ids.rules.get("edge-tcp-80").map(String::as_str),
        Some("rule-new-2")
    );
    assert_eq!(cloud.members["rule-new-2"], ["vm-1", "vm-2"]);
    assert!(cloud
        .tags
        .contains(&("ip-new-1".to_string(), address().to_string())));
    assert_eq!(state.attributes, serde_json::to_value(&spec).unwrap());
}

#[tokio::test]
async fn a_moved_port_resolves_the_old_rule_by_name_and_records_only_the_new_one() {
    let before = base();
    let live = world(&before);
    let mut after = base();
    after.ports[0].port = 8080;
    let change = plan_in(&live, Some(&before), Some(&after), None, Flags::default()).unwrap();
    let prior = crate::lb::tests::state_of(&before, &live);
    let fake = fake_of(&live);
    let state = run(&fake, &change, Some(&prior)).await.unwrap();
    let cloud = fake.0.lock().unwrap();
    assert_eq!(
        cloud.calls,
        [
            "createLoadBalancerRule",
            "createTags",
            "assignToLoadBalancerRule rule-new-1",
            "createFirewallRule",
            "deleteFirewallRule fw-80",
            "deleteLoadBalancerRule rule-80",
        ]
    );
    assert_eq!(state.id, IP_ID);
    assert_eq!(
        ids(&state).rules.into_iter().collect::<Vec<_>>(),
        [("edge-tcp-8080".to_string(), "rule-new-1".to_string())]
    );
}

#[tokio::test]
async fn a_lost_state_finds_the_ip_by_its_tag_and_a_rename_follows_the_rule() {
    let before = base();
    let live = world(&before);
    let after = CloudstackLoadBalancerSpec {
        name: "front".into(),
        ..base()
    };
    let flags = Flags {
        no_state: true,
        ..Flags::default()
    };
    let change = plan_in(&live, Some(&before), Some(&after), None, flags).unwrap();
    let fake = fake_of(&live);
    let state = run(&fake, &change, None).await.unwrap();
    assert_eq!(
        fake.0.lock().unwrap().calls,
        ["updateLoadBalancerRule rule-80"]
    );
    assert_eq!(state.id, IP_ID);
    let ids = ids(&state);
    assert_eq!(ids.address.as_deref(), Some(IP));
    assert_eq!(
        ids.rules.get("front-tcp-80").map(String::as_str),
        Some("rule-80")
    );
}

#[tokio::test]
async fn cluster_members_are_synced_from_the_cluster_after_it_was_applied() {
    let spec = CloudstackLoadBalancerSpec {
        network: None,
        members: CsMembers::Cluster("lab".into()),
        ports: vec![port(80, CsProtocol::Tcp, 30080)],
        ..base()
    };
    let live = world(&spec);
    let cluster_address =
        skyplan_core::model::Address::new(skyplan_core::model::ResourceKind::Cluster, "lab");
    let mut config = crate::lb::tests::cluster_spec(2, None);
    config.name = "lab".into();
    let running = crate::lb::tests::live_cluster(1);
    let cluster = ClusterRef {
        address: &cluster_address,
        spec: Some(&config),
        live: Some(&running),
    };
    let change = plan_in(
        &live,
        Some(&spec),
        Some(&spec),
        Some(cluster),
        Flags::default(),
    )
    .unwrap();
    let fake = fake_of(&live);
    {
        let mut cloud = fake.0.lock().unwrap();
        // Scaled by the cluster's apply: vm-4 was replaced by vm-6 and vm-7.
        cloud.clusters.push(json!({
            "id": "k-1", "name": "lab", "networkid": "net-1",
            "virtualmachines": [
                {"id": "vm-5", "name": "lab-control-1"},
                {"id": "vm-6", "name": "lab-node-2"},
                {"id": "vm-7", "name": "lab-node-3"}
            ]
        }));
    }
    let prior = crate::lb::tests::state_of(&spec, &live);
    run(&fake, &change, Some(&prior)).await.unwrap();
    let cloud = fake.0.lock().unwrap();
    assert_eq!(
        cloud.calls,
        [
            "assignToLoadBalancerRule rule-80",
            "removeFromLoadBalancerRule rule-80"
        ]
    );
    assert_eq!(cloud.members["rule-80"], ["vm-6", "vm-7"]);
}

#[tokio::test]
async fn a_deleted_load_balancer_releases_the_ip_skyplan_associated() {
    let before = base();
    let live = world(&before);
    let flags = Flags {
        allow_delete: true,
        ..Flags::default()
    };
    let change = plan_in(&live, Some(&before), None, None, flags).unwrap();
    let prior = crate::lb::tests::state_of(&before, &live);
    let fake = fake_of(&live);
    assert_eq!(run(&fake, &change, Some(&prior)).await, None);
    let cloud = fake.0.lock().unwrap();
    assert_eq!(
        cloud.calls,
        [
            "deleteFirewallRule fw-80",
            "deleteLoadBalancerRule rule-80",
            format!("disassociateIpAddress {IP_ID}").as_str(),
        ]
    );
}

/// `provider.rs` boxes the executor's future as `Send`: checked at compile time.
#[allow(dead_code)]
fn apply_is_send(ctx: &crate::live::ApplyContext<'_>, change: &ResourceChange) {
    fn send<T: Send>(_: T) {}
    send(crate::lb::apply(ctx, change, None));
}

#[tokio::test]
async fn a_create_over_a_stale_state_reads_nothing_of_the_ip_that_is_gone() {
    let spec = base();
    let applied = world(&spec);
    let prior = crate::lb::tests::state_of(&spec, &applied);
    let live = empty_world();
    let change = plan_in(&live, Some(&spec), Some(&spec), None, Flags::default()).unwrap();
    assert_eq!(change.action, skyplan_core::plan::Action::Create);
    let fake = fake_of(&live);
    let state = run(&fake, &change, Some(&prior)).await.unwrap();
    assert_eq!(state.id, "ip-new-1");
    let cloud = fake.0.lock().unwrap();
    assert!(
        !cloud.reads.iter().any(|r| r == "listLoadBalancerRules"),
        "{:?}",
        cloud.reads
    );
}

#[tokio::test]
async fn creates_whose_answer_is_lost_are_found_and_adopted_not_repeated() {
    let spec = base();
    let live = empty_world();
    let change = plan_in(&live, None, Some(&spec), None, Flags::default()).unwrap();
    let fake = fake_of(&live);
    fake.0.lock().unwrap().lose = [
        "associateIpAddress",
        "createTags",
        "createLoadBalancerRule",
        "createFirewallRule",
    ]
    .map(String::from)
    .to_vec();
    let state = run(&fake, &change, None).await.unwrap();
    let cloud = fake.0.lock().unwrap();
    assert_eq!(
        cloud.calls,
        [
            "associateIpAddress",
            "createTags",
            "createLoadBalancerRule",
            "createTags",
            "assignToLoadBalancerRule rule-new-2",
            "createFirewallRule",
        ],
        "each create sent once"
    );
    assert_eq!(state.id, "ip-new-1");
    assert_eq!(ids(&state).rules["edge-tcp-80"], "rule-new-2");
    assert_eq!(
        (cloud.ips.len(), cloud.rules.len(), cloud.firewall.len()),
        (2, 2, 1)
    );
}

/// A fake on which a lost create did nothing after all.
struct Forgetful<'a>(&'a Fake);

impl Api for Forgetful<'_> {
    async fn list(&self, command: &str, params: &Params, key: &str) -> Result<Vec<Value>, Error> {
        self.0.list(command, params, key).await
    }

    async fn run_job(&self, command: &str, params: &Params) -> Result<Value, Error> {
        {
            let mut cloud = self.0 .0.lock().unwrap();
            if let Some(at) = cloud.lose.iter().position(|c| c == command) {
                cloud.lose.remove(at);
                cloud.calls.push(command.to_string());
                return Err(lost(command));
            }
        }
        self.0.run_job(command, params).await
    }
}

#[tokio::test]
async fn a_create_whose_answer_is_lost_and_that_made_nothing_is_sent_again() {
    let spec = base();
    let live = empty_world();
    let change = plan_in(&live, None, Some(&spec), None, Flags::default()).unwrap();
    let fake = fake_of(&live);
    fake.0.lock().unwrap().lose = vec!["createLoadBalancerRule".into()];
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::start(dir.path()).unwrap();
    let state = apply_with(&Forgetful(&fake), &journal, &change, None)
        .await
        .unwrap()
        .unwrap();
    let cloud = fake.0.lock().unwrap();
    let creates = cloud
        .calls
        .iter()
        .filter(|c| *c == "createLoadBalancerRule")
        .count();
    assert_eq!(creates, 2, "{:?}", cloud.calls);
    let named = |r: &&Value| field(r, "name") == "edge-tcp-80";
    assert_eq!(cloud.rules.iter().filter(named).count(), 1);
    assert_eq!(ids(&state).rules["edge-tcp-80"], "rule-new-2");
}
